import { createRequire } from 'node:module';
import type { Worker } from 'node:worker_threads';
import type { CompiledPattern, PendingVerdicts } from '../policy/pattern/index.ts';

/**
 * The backtracking engine for the patterns RE2 cannot read (lookaround, backreferences): the
 * translated pattern (src/policy/pattern/backtracking.ts) run by JavaScript's RegExp in a worker thread,
 * never on the main thread, each batch of names within a time budget. A pattern that runs out of
 * its budget is terminated with the worker and becomes unreadable for every name from then on
 * (`CompiledPattern.giveUp`): a catastrophic pattern (`^(?=(a+)+$)` against a long name) costs
 * one budget, however many objects it would be asked about, and the bot keeps answering.
 *
 * One worker per reader, one batch at a time; the worker does not keep a process alive while
 * idle (the CLI exits when its answer is written).
 */

/** Runs in the worker: plain JavaScript (eval), so it runs the same under tsx, vitest and a build. */
const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
parentPort.on('message', ({ id, source, flags, names }) => {
  try {
    const re = new RegExp(source, flags);
    parentPort.postMessage({ id, found: names.map((n) => re.test(n)) });
  } catch (err) {
    parentPort.postMessage({ id, error: String((err && err.message) || err) });
  }
});
`;

export interface BacktrackingReaderOptions {
  /**
   * The time one batch of names may take in the worker before the pattern is given up. Default
   * 500 ms: thousands of names for any pattern that is not catastrophic, on a busy machine too.
   */
  readonly budgetMs?: number;
  /** Names sent to the worker at once. Default 2,000. */
  readonly batch?: number;
}

interface Answer {
  readonly id: number;
  readonly found?: boolean[];
  readonly error?: string;
}

export class BacktrackingReader {
  readonly #budgetMs: number;
  readonly #batch: number;
  #worker: Worker | undefined;
  #online: Promise<Worker> | undefined;
  #nextId = 0;
  #queue: Promise<unknown> = Promise.resolve();
  /** Budgets run out (a pattern given up), and batches run: for tests and the benchmark. */
  readonly stats = { budgetsSpent: 0, batches: 0, names: 0 };

  constructor(options: BacktrackingReaderOptions = {}) {
    this.#budgetMs = options.budgetMs ?? 500;
    this.#batch = options.batch ?? 2000;
  }

  /** Every pending verdict decided (recorded on its pattern), or its pattern given up. */
  decide(pending: PendingVerdicts): Promise<void> {
    const run = this.#queue.then(async () => {
      for (const [pattern, names] of pending) await this.#evaluate(pattern, [...names]);
    });
    this.#queue = run.catch(() => undefined);
    return run;
  }

  async #evaluate(pattern: CompiledPattern, names: string[]): Promise<void> {
    for (let i = 0; i < names.length; i += this.#batch) {
      const bt = pattern.backtracking;
      if (!bt) return; // given up meanwhile, or readable otherwise
      const chunk = names.slice(i, i + this.#batch);
      const answer = await this.#run(bt.source, bt.flags, chunk);
      if (answer === 'budget') {
        this.stats.budgetsSpent++;
        pattern.giveUp(
          `a backtracking engine ran out of its ${this.#budgetMs} ms budget on this pattern, so it is not read`,
        );
        return;
      }
      if (answer.error !== undefined || !answer.found) {
        pattern.giveUp(`a backtracking engine refused it (${answer.error ?? 'no answer'})`);
        return;
      }
      for (const [k, name] of chunk.entries()) pattern.record(name, answer.found[k] === true);
    }
  }

  async #run(source: string, flags: string, names: string[]): Promise<Answer | 'budget'> {
    // The budget is the pattern's: a worker's start does not count against it.
    const worker = await this.#workerNow();
    const id = this.#nextId++;
    this.stats.batches++;
    this.stats.names += names.length;
    return new Promise((resolve) => {
      const done = (answer: Answer | 'budget') => {
        clearTimeout(timer);
        worker.off('message', onMessage);
        worker.off('error', onError);
        if (this.#worker === worker) worker.unref();
        resolve(answer);
      };
      const onMessage = (m: Answer) => {
        if (m.id === id) done(m);
      };
      const onError = (err: Error) => {
        this.#drop(worker);
        done({ id, error: err.message });
      };
      const timer = setTimeout(() => {
        // The pattern may never return: the worker goes with it, a fresh one serves the next.
        this.#drop(worker);
        done('budget');
      }, this.#budgetMs);
      worker.on('message', onMessage);
      worker.on('error', onError);
      worker.ref();
      worker.postMessage({ id, source, flags, names });
    });
  }

  #workerNow(): Promise<Worker> {
    if (!this.#worker) {
      // Required when the first pattern needs it: most questions never start a worker (bench/cli).
      const threads = createRequire(import.meta.url)(
        'node:worker_threads',
      ) as typeof import('node:worker_threads');
      const worker = new threads.Worker(WORKER_SOURCE, { eval: true });
      this.#worker = worker;
      this.#online = new Promise((resolve, reject) => {
        worker.once('online', () => resolve(worker));
        worker.once('error', reject);
      });
    }
    return this.#online ?? Promise.resolve(this.#worker);
  }

  #drop(worker: Worker): void {
    if (this.#worker === worker) this.#worker = undefined;
    void worker.terminate();
  }

  async close(): Promise<void> {
    const worker = this.#worker;
    this.#worker = undefined;
    if (worker) await worker.terminate();
  }
}

let shared: BacktrackingReader | undefined;

/**
 * The process's reader, made on first use: one worker thread per process serves every question
 * (the bot's and the CLI's), the way the libuv pool does, rather than one per request. Tests and
 * benchmarks that count budgets pass their own.
 */
export function defaultReader(): BacktrackingReader {
  shared ??= new BacktrackingReader();
  return shared;
}
