/** Work still running after Slack was acknowledged, so a shutdown can let it finish. */
export class InFlight {
  private readonly running = new Set<Promise<unknown>>();

  get size(): number {
    return this.running.size;
  }

  track<T>(work: Promise<T>): Promise<T> {
    this.running.add(work);
    const forget = () => this.running.delete(work);
    work.then(forget, forget);
    return work;
  }

  /** Resolves true when everything finished, false when `ms` passed first. */
  async drain(ms: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), ms);
    });
    try {
      return await Promise.race([Promise.allSettled([...this.running]).then(() => true as const), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }
}
