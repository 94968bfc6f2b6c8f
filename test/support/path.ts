/**
 * `path NAME --json` asked through the terminal's entry point, for the tests that compare what it
 * says with what the broker reports or does.
 */
import { expect } from 'vitest';
import type { PathResult } from '../../src/commands/path/index.ts';
import { brokerCredentials, waitFor } from './broker.ts';
import type { TestBroker } from './brokers.ts';
import { runRmq } from './cli.ts';

export function brokerEnv(b: TestBroker): NodeJS.ProcessEnv {
  const { user, password } = brokerCredentials();
  return { RMQ_URL: b.url, RMQ_USER: user, RMQ_PASSWORD: password };
}

export async function pathJson(
  b: TestBroker,
  vhost: string,
  name: string,
  ...flags: string[]
): Promise<PathResult> {
  const r = await runRmq(brokerEnv(b), ['path', name, '--vhost', vhost, '--json', ...flags]);
  expect(r.code, r.err).toBe(0);
  return JSON.parse(r.out) as PathResult;
}

/** `path` once its statistics show `messages` on the queue. */
export const pathWhen = (
  b: TestBroker,
  vhost: string,
  queue: string,
  messages: number,
  more: (p: PathResult) => boolean = () => true,
) =>
  waitFor(
    async () => {
      const p = await pathJson(b, vhost, queue);
      return p.queue.messages === messages && more(p) ? p : undefined;
    },
    { deadlineMs: 45_000, intervalMs: 500, what: `path ${queue} to show ${messages} messages` },
  );
