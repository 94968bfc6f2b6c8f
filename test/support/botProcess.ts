/**
 * The compiled bot (`dist/main.js`, see built.ts) as a process of its own, as the image runs it:
 * a clean environment (only PATH besides what is given), an empty working directory unless one
 * is given (a developer's own .env must not change what is measured), its output kept.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brokerCredentials, brokerUrl, waitFor } from './broker.ts';
import type { FakeSlack } from './fakeSlack.ts';

export interface BotProcess {
  readonly child: ChildProcess;
  readonly stdout: () => string;
  readonly stderr: () => string;
  /** Both, in the order they arrived. */
  readonly output: () => string;
  readonly exited: Promise<number | null>;
  /** The port from the "listening for Slack" log line (needs LOG_LEVEL info or lower). */
  listening(deadlineMs?: number): Promise<number>;
}

export function spawnBot(mainJs: string, env: Record<string, string>, cwd?: string): BotProcess {
  const child = spawn(process.execPath, [mainJs], {
    cwd: cwd ?? mkdtempSync(join(tmpdir(), 'rmq-bot-')),
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  let both = '';
  child.stdout?.on('data', (c: Buffer) => {
    out += c.toString();
    both += c.toString();
  });
  child.stderr?.on('data', (c: Buffer) => {
    err += c.toString();
    both += c.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    output: () => both,
    exited,
    listening: (deadlineMs = 30_000) =>
      waitFor(
        () => {
          if (child.exitCode !== null)
            return Promise.reject(new Error(`the bot exited ${child.exitCode}: ${both}`));
          const line = out.split('\n').find((l) => l.includes('listening for Slack'));
          return line ? (JSON.parse(line) as { port: number }).port : undefined;
        },
        { deadlineMs, intervalMs: 50, what: 'the bot to listen' },
      ),
  };
}

/**
 * One environment, `lab`, on the test broker (or the one at `url`): approved by U0APPROVER, in
 * C0APPROVALS; limited to `vhosts` when given (with an environments file, RMQ_VHOSTS is not read).
 */
export const labEnvironmentYaml = (vhosts?: readonly string[], url = brokerUrl()): string =>
  `environments:\n  - { name: lab, url: "${url}", userEnv: LAB_USER, passwordEnv: LAB_PASSWORD, approvers: [U0APPROVER], approvalsChannel: C0APPROVALS${vhosts ? `, vhosts: ${JSON.stringify(vhosts)}` : ''} }\n`;

/**
 * The environment of a bot process on the fake Slack (HTTP mode, a free port, LOG_LEVEL info):
 * the environments file written into `cwd` (its environments reach the broker as LAB_USER /
 * LAB_PASSWORD, the test broker's admin) and `redisUrl`, a Redis of the test's own.
 */
export function labBotEnv(o: {
  readonly cwd: string;
  readonly environmentsYaml: string;
  readonly slack: Pick<FakeSlack, 'botToken' | 'apiUrl'>;
  readonly redisUrl: string;
  readonly signingSecret: string;
}): Record<string, string> {
  const environments = join(o.cwd, 'environments.yml');
  writeFileSync(environments, o.environmentsYaml);
  const { user, password } = brokerCredentials();
  return {
    HOME: o.cwd,
    RMQ_ENVIRONMENTS: environments,
    LAB_USER: user,
    LAB_PASSWORD: password,
    SLACK_BOT_TOKEN: o.slack.botToken,
    SLACK_SIGNING_SECRET: o.signingSecret,
    SLACK_API_URL: o.slack.apiUrl,
    REDIS_URL: o.redisUrl,
    PORT: '0',
    LOG_LEVEL: 'info',
  };
}

/**
 * The bot a terminal `import` files through: `mainJs` (the real path: it runs only as its own
 * argv[1]) with the lab environment on the fake Slack, limited to `vhosts`, a Redis of the
 * test's own, the API token `ci:TOKEN`; its base URL once it listens.
 */
export async function spawnImportBot(o: {
  readonly mainJs: string;
  readonly cwd: string;
  readonly slack: Pick<FakeSlack, 'botToken' | 'apiUrl'>;
  readonly redisUrl: string;
  readonly signingSecret: string;
  readonly token: string;
  readonly vhosts: readonly string[];
  /** The broker's management API (default: the test broker). */
  readonly brokerUrl?: string;
}): Promise<{ bot: BotProcess; url: string }> {
  // The environments file's `vhosts:`: with one, RMQ_VHOSTS is not read.
  const env = labBotEnv({ ...o, environmentsYaml: labEnvironmentYaml(o.vhosts, o.brokerUrl) });
  const bot = spawnBot(o.mainJs, { ...env, RMQ_API_TOKENS: `ci:${o.token}` }, o.cwd);
  return { bot, url: `http://127.0.0.1:${await bot.listening()}` };
}
