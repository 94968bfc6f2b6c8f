/**
 * `npm run try`: the bot without a Slack workspace. The built bot (`dist/main.js`, as `npm start`
 * runs it) talks to a stand-in for Slack's Web API (try/workspace.ts) with a web page that shows a
 * channel and the approvals channel; the policies lab (lab.ts) is its broker's vhost.
 *
 *   npm run try                         build, set up the lab in "rmq-lab", open http://127.0.0.1:3210/
 *   npm run try -- --port N --vhost NAME --redis URL
 *   npm run try -- --help
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { LAB_VHOST } from './lab.ts';
import { startWorkspace, TRIAL_CHANNELS, TRIAL_USERS, type Workspace } from './try/workspace.ts';

export const TRY_DEFAULT_PORT = 3210;
/** The trial's Redis database when the Redis URL names none: its requests and audit stay apart. */
export const TRY_REDIS_DATABASE = 13;

export const TRY_HELP = `npm run try -- [--port N] [--vhost NAME] [--redis URL] [--bot FILE] [--help]

Runs the bot (dist/main.js, built first by npm run try) against a stand-in for Slack on this
machine, and serves a page at http://127.0.0.1:PORT/ showing #orders-team and #rmq-approvals:
type /rmq commands there, click the bot's buttons, fill in its forms, act as another person.
The broker is the one of .env (RMQ_URL, RMQ_USER, RMQ_PASSWORD; default the local one, guest),
with the policies lab set up in its vhost first (npm run lab). Ctrl-C stops it.

  --port N      the page's port (default ${TRY_DEFAULT_PORT}; 0 picks a free one)
  --vhost NAME  the lab's vhost (default ${LAB_VHOST}); it is deleted and created again
  --redis URL   the bot's Redis (default REDIS_URL, else redis://127.0.0.1:6379; database
                ${TRY_REDIS_DATABASE} when the URL names none, so the trial's requests and audit stay apart)
  --bot FILE    the bot to run (default dist/main.js)
  --help        print this and change nothing
`;

export type TryCommand =
  | { readonly kind: 'help' }
  | {
      readonly kind: 'run';
      readonly port: number;
      readonly vhost: string;
      readonly redis: string | undefined;
      readonly bot: string | undefined;
    }
  | { readonly kind: 'refused'; readonly message: string };

/** What `npm run try -- …` was asked: a pure reading of its arguments. */
export function parseTryArgs(argv: readonly string[]): TryCommand {
  let port = TRY_DEFAULT_PORT;
  let vhost = LAB_VHOST;
  let redis: string | undefined;
  let bot: string | undefined;
  const unknown: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--help' || arg === '-h') return { kind: 'help' };
    const flag = /^(--port|--vhost|--redis|--bot)(?:=(.*))?$/.exec(arg);
    if (!flag) {
      unknown.push(arg);
      continue;
    }
    const value = flag[2] ?? argv[++i];
    if (value === undefined || value === '' || (flag[2] === undefined && value.startsWith('--'))) {
      return { kind: 'refused', message: `try: ${flag[1]} needs a value; see npm run try -- --help.` };
    }
    if (flag[1] === '--port') {
      port = Number(value);
      if (!/^\d{1,5}$/.test(value) || port > 65535)
        return { kind: 'refused', message: `try: --port takes 0 to 65535, not ${JSON.stringify(value)}.` };
    } else if (flag[1] === '--vhost') vhost = value;
    else if (flag[1] === '--bot') bot = value;
    else {
      if (!/^rediss?:\/\//.test(value))
        return {
          kind: 'refused',
          message: `try: --redis takes a redis:// or rediss:// URL, not ${JSON.stringify(value)}.`,
        };
      redis = value;
    }
  }
  if (unknown.length > 0) {
    const list = unknown.map((a) => JSON.stringify(a)).join(', ');
    return {
      kind: 'refused',
      message: `try: unknown argument${unknown.length > 1 ? 's' : ''} ${list}: it takes --port N, --vhost NAME, --redis URL, --bot FILE and --help.`,
    };
  }
  return { kind: 'run', port, vhost, redis, bot };
}

/** The Redis URL with the trial's own database when it names none. */
export function trialRedisUrl(given: string): string {
  const u = new URL(given);
  if (u.pathname === '' || u.pathname === '/') u.pathname = `/${TRY_REDIS_DATABASE}`;
  return u.toString();
}

/** A URL as printed: never its password. */
function shown(url: string): string {
  const u = new URL(url);
  if (u.password) u.password = '***';
  return u.toString();
}

/** What the terminal says once the page is up: where, and what to try. */
export function readyText(o: {
  url: string;
  vhost: string;
  broker: string;
  redis: string;
  log: string;
}): string {
  const [alice, bob] = TRIAL_USERS;
  return `
The trial is ready: ${o.url}/

  The bot (dist/main.js) answers a stand-in for Slack on this machine; broker ${o.broker},
  vhost ${o.vhost} (the policies lab), Redis ${o.redis}. Its log: ${o.log}

Try, as ${alice?.name} in #${TRIAL_CHANNELS.team.name} (the channel's vhost is set to ${o.vhost} already):
  /rmq which orders.audit
  /rmq preview delete audit-retention
  /rmq delete audit-retention --reason "INC-7: retire the audit DLX"
then pick "${bob?.name}" in "Acting as" (an approver; ${alice?.name} may not approve her own request), click
Approve in #${TRIAL_CHANNELS.approvals.name}, give a reason, and read the audit diff it posts.
  /rmq help     every command

Ctrl-C stops the bot and the page. The lab stays: npm run lab -- --down${o.vhost === LAB_VHOST ? '' : ` --vhost ${o.vhost}`}
`;
}

function waitForLine(child: ChildProcess, seen: () => string, match: RegExp, deadlineMs: number) {
  return new Promise<RegExpExecArray>((done, fail) => {
    const timer = setTimeout(
      () => fail(new Error(`the bot did not start within ${deadlineMs / 1000} s`)),
      deadlineMs,
    );
    const check = () => {
      const m = match.exec(seen());
      if (m) {
        clearTimeout(timer);
        done(m);
      }
    };
    child.stdout?.on('data', check);
    child.on('exit', (code) => {
      clearTimeout(timer);
      fail(
        new Error(
          `the bot exited (${code}) before it listened:\n${seen().split('\n').slice(-15).join('\n')}`,
        ),
      );
    });
  });
}

async function main(argv: readonly string[]): Promise<void> {
  const command = parseTryArgs(argv);
  if (command.kind === 'help') {
    process.stdout.write(TRY_HELP);
    return;
  }
  if (command.kind === 'refused') {
    console.error(command.message);
    process.exitCode = 2;
    return;
  }
  const root = resolve(import.meta.dirname, '..');
  const mainJs = command.bot ? resolve(command.bot) : join(root, 'dist/main.js');
  if (!existsSync(mainJs)) {
    console.error(`try: ${mainJs} is missing: run npm run build (npm run try builds it first).`);
    process.exitCode = 1;
    return;
  }
  const { config } = await import('dotenv');
  config({ quiet: true });
  const { loadConfig } = await import('../src/config/config.ts');
  const { LabClient } = await import('../src/rabbit/lab.ts');
  const { setUpLab } = await import('./lab.ts');
  const env = loadConfig().environments[0]!;
  const redis = trialRedisUrl(command.redis ?? process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');

  const broker = new LabClient({ url: env.url, user: env.user, password: env.password });
  try {
    await setUpLab(broker, command.vhost);
  } finally {
    await broker.close();
  }

  const workspace: Workspace = await startWorkspace({ port: command.port });
  const dir = mkdtempSync(join(tmpdir(), 'rmq-try-'));
  const logPath = join(dir, 'bot.log');
  const log = createWriteStream(logPath);
  const bot = spawn(process.execPath, [mainJs], {
    cwd: dir,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: dir,
      RMQ_URL: env.url,
      RMQ_USER: env.user,
      RMQ_PASSWORD: env.password,
      ...(process.env.RMQ_AMQP_URL ? { RMQ_AMQP_URL: process.env.RMQ_AMQP_URL } : {}),
      RMQ_MODE: 'normal',
      // The lab's vhost only: on a shared broker the trial neither watches nor changes another.
      RMQ_VHOSTS: command.vhost,
      REDIS_URL: redis,
      RMQ_AUDIT_KEY: `trial-${Buffer.from(workspace.signingSecret).toString('hex').slice(0, 40)}`,
      SLACK_BOT_TOKEN: workspace.botToken,
      SLACK_SIGNING_SECRET: workspace.signingSecret,
      SLACK_API_URL: workspace.apiUrl,
      SLACK_APPROVALS_CHANNEL: TRIAL_CHANNELS.approvals.id,
      SLACK_APPROVERS: TRIAL_USERS.filter((u) => u.role === 'approver')
        .map((u) => u.id)
        .join(','),
      PORT: '0',
      LOG_LEVEL: 'info',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let seen = '';
  bot.stdout?.on('data', (c: Buffer) => {
    seen += c.toString();
    if (seen.length > 1 << 20) seen = seen.slice(-(1 << 19));
    log.write(c);
  });
  bot.stderr?.on('data', (c: Buffer) => {
    seen += c.toString();
    log.write(c);
    process.stderr.write(c);
  });

  let stopping = false;
  const stop = async (code: number) => {
    if (stopping) return;
    stopping = true;
    if (bot.exitCode === null) {
      bot.kill('SIGTERM');
      const cut = setTimeout(() => bot.kill('SIGKILL'), 15_000);
      await new Promise((r) => bot.once('exit', r));
      clearTimeout(cut);
    }
    await workspace.close();
    log.end();
    process.exit(code);
  };
  process.on('SIGINT', () => void stop(0));
  process.on('SIGTERM', () => void stop(0));

  try {
    const [, port] = await waitForLine(bot, () => seen, /"port":(\d+)[^\n]*listening for Slack/, 60_000);
    workspace.setBotUrl(`http://127.0.0.1:${port}`);
  } catch (err) {
    console.error(`try: ${err instanceof Error ? err.message : String(err)}`);
    return stop(1);
  }
  bot.on('exit', (code) => {
    if (stopping) return;
    console.error(`try: the bot exited (${code}); its log: ${logPath}`);
    void stop(1);
  });
  // The team channel asks the lab by default, as `/rmq use` sets it in Slack.
  await workspace.command(TRIAL_USERS[0]!.id, TRIAL_CHANNELS.team.id, `/rmq use --vhost ${command.vhost}`);
  process.stdout.write(
    readyText({
      url: workspace.url,
      vhost: command.vhost,
      broker: env.url,
      redis: shown(redis),
      log: logPath,
    }),
  );
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main(process.argv.slice(2)).catch((err) => {
    console.error(`try: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  });
}
