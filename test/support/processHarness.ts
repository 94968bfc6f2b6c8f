/**
 * The bot as `npm start` runs it: `dist/main.js` as a process of its own (botProcess.ts; env
 * only, an empty working directory), on the lab the in-process harness sets up (prepareLab: the
 * fake Slack, the proxy in front of the broker, a fresh vhost with the policies lab), and on a
 * Redis of the file's own (the process keys Redis under the production prefix `rmq:`). For the
 * suites that shorten nothing and read nothing in-process: one process per file, its requests
 * signed as Slack signs them (slackRequests.ts), its log lines from its stdout.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BotProcess, spawnBot } from './botProcess.ts';
import { built } from './built.ts';
import type { FakeBroker } from './fakeBroker.ts';
import type { FakeSlack } from './fakeSlack.ts';
import { type HarnessOptions, prepareLab } from './harness.ts';
import { startRedisServer } from './redisServer.ts';
import { type SignedRequests, signedRequests } from './slackRequests.ts';

export interface ProcessHarness extends SignedRequests {
  readonly url: string;
  readonly slack: FakeSlack;
  readonly proxy: FakeBroker;
  readonly vhost: string;
  readonly signingSecret: string;
  readonly bot: BotProcess;
  /** The log lines the process wrote so far (pino JSON, LOG_LEVEL info at least). */
  logs(): string[];
  stop(): Promise<void>;
}

/** What a process takes of the harness's options: what its environments file and env carry. */
export type ProcessHarnessOptions = Pick<HarnessOptions, 'lab' | 'withDownEnvironment' | 'questionBudget'>;

export async function startProcessHarness(options: ProcessHarnessOptions = {}): Promise<ProcessHarness> {
  const [{ outdir }, lab, redis] = await Promise.all([
    built(),
    prepareLab({ ...options, logLevel: 'info' }),
    startRedisServer(),
  ]);
  const cwd = mkdtempSync(join(tmpdir(), 'rmq-e2e-'));
  const stopAround = async () => {
    await Promise.allSettled([lab.close(), redis.stop()]);
    rmSync(cwd, { recursive: true, force: true });
  };
  writeFileSync(join(cwd, 'environments.yml'), lab.environmentsYaml);
  const bot = spawnBot(
    join(outdir, 'main.js'),
    { ...lab.env, HOME: cwd, RMQ_ENVIRONMENTS: join(cwd, 'environments.yml'), REDIS_URL: redis.url },
    cwd,
  );
  let url: string;
  try {
    url = `http://127.0.0.1:${await bot.listening()}`;
  } catch (err) {
    bot.child.kill('SIGKILL');
    await stopAround();
    throw err;
  }
  return {
    url,
    slack: lab.slack,
    proxy: lab.proxy,
    vhost: lab.vhost,
    signingSecret: lab.signingSecret,
    bot,
    logs: () => bot.stdout().split('\n').filter(Boolean),
    ...signedRequests(url, lab.signingSecret, lab.slack),
    async stop() {
      if (bot.child.exitCode === null) {
        bot.child.kill('SIGTERM');
        // Not the 90 s hard limit: a stop that hangs fails no case here, it is only cut short.
        const cut = setTimeout(() => bot.child.kill('SIGKILL'), 15_000);
        await bot.exited;
        clearTimeout(cut);
      }
      await stopAround();
    },
  };
}
