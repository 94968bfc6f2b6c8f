import { config as loadDotenv } from 'dotenv';
import type { Redis } from 'ioredis';
import { helpText } from '../commands/help.ts';
import { parseWhich } from '../commands/parse.ts';
import { parsePolicies, policies } from '../commands/policies.ts';
import { which } from '../commands/which.ts';
import { DEFAULT_KEY_PREFIX, loadConfig, pickEnvironment, QUESTION_BUDGET_MS } from './config.ts';
import { ConfigError, InputError } from './errors.ts';
import { ManagementClient } from './rabbit/client.ts';
import { RabbitError } from './rabbit/errors.ts';
import { policiesText } from './terminal/policies.ts';
import { whichText } from './terminal/which.ts';

/**
 * The terminal front door: the read-only commands, with `--json`. It never applies a change.
 * Exit codes (INTERFACE.md): 0 answered; 2 input or configuration refused; 3 broker not asked
 * (unreachable, out of time, refused or unreadable answer); 1 anything else (a bug).
 */

export interface Io {
  out: (s: string) => void;
  err: (s: string) => void;
}

const stdio: Io = { out: (s) => process.stdout.write(s), err: (s) => process.stderr.write(s) };

/** For tests: the Redis key prefix (default `rmq`, the bot's). */
export interface CliOptions {
  readonly keyPrefix?: string;
}

export async function runCli(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  io: Io = stdio,
  cliOptions: CliOptions = {},
): Promise<number> {
  const [command, ...rest] = argv;
  // `--json` is an option only before `--`; after it, every word is a name.
  const end = rest.indexOf('--');
  const options = end < 0 ? rest : rest.slice(0, end);
  const json = options.includes('--json');
  const words = [...options.filter((w) => w !== '--json'), ...(end < 0 ? [] : rest.slice(end))];
  try {
    switch (command) {
      case undefined:
      case 'help':
      case '--help':
      case '-h':
        io.out(helpText('rmq'));
        return 0;
      case 'policies': {
        const input = parsePolicies(words, terminalDefaults(env));
        return await withBroker(env, input.env, async (broker) => {
          const result = await policies(input, broker);
          io.out(json ? `${JSON.stringify(result, null, 2)}\n` : policiesText(result));
          return result.answer === 'not-asked' ? 3 : 0;
        });
      }
      case 'which': {
        const input = parseWhich(words, {}, terminalDefaults(env));
        return await withBroker(env, input.env, async (broker) => {
          const result = await which(input, broker);
          io.out(json ? `${JSON.stringify(result, null, 2)}\n` : whichText(result));
          return result.answer === 'not-asked' ? 3 : 0;
        });
      }
      case 'preview': {
        // Loaded when asked for: `which`, the common question, does not pay for the simulation.
        const [{ parsePreview, previewExitCode, previewJson }, { preview }, { previewText }] =
          await Promise.all([
            import('../commands/preview.ts'),
            import('./preview/preview.ts'),
            import('./terminal/preview.ts'),
          ]);
        const input = parsePreview(words, {}, { defaults: terminalDefaults(env) });
        return await withBroker(env, input.env, async (broker) => {
          const result = await preview(input, broker);
          io.out(json ? `${JSON.stringify(previewJson(result), null, 2)}\n` : previewText(result));
          if (!json && result.status === 'refused')
            io.err(`rmq: refused: ${result.refusals.map((p) => p.message).join(' ')}\n`);
          return previewExitCode(result);
        });
      }
      case 'requests': {
        const { parseRequests, requests } = await import('../commands/requests.ts');
        const { requestsText } = await import('./terminal/requests.ts');
        const input = parseRequests(words);
        return await withRedis(env, io, async (redis) => {
          const { RequestStore } = await import('./workflow/store.ts');
          const result = await requests(
            input,
            new RequestStore(redis, cliOptions.keyPrefix ?? DEFAULT_KEY_PREFIX),
          );
          io.out(json ? `${JSON.stringify(result, null, 2)}\n` : requestsText(result));
          return 0;
        });
      }
      case 'history': {
        const { history, historyExitCode, parseHistory, verifySentence } = await import(
          '../commands/history.ts'
        );
        const { historyText } = await import('./terminal/history.ts');
        const input = parseHistory(words);
        return await withRedis(env, io, async (redis) => {
          const { AuditTrail } = await import('./workflow/audit.ts');
          const result = await history(
            input,
            new AuditTrail(redis, cliOptions.keyPrefix ?? DEFAULT_KEY_PREFIX),
          );
          io.out(json ? `${JSON.stringify(result, null, 2)}\n` : historyText(result));
          if (result.verify && !result.verify.ok) io.err(`rmq: ${verifySentence(result.verify)}\n`);
          return historyExitCode(result);
        });
      }
      default:
        throw new InputError(`Unknown command ${JSON.stringify(command)}.`, helpText('rmq'));
    }
  } catch (err) {
    if (err instanceof InputError || err instanceof ConfigError) {
      const hint = err instanceof InputError && err.hint ? `\n${err.hint}` : '';
      if (json) io.out(`${JSON.stringify({ error: { code: err.code, message: err.message } })}\n`);
      io.err(`rmq: ${err.message}${hint}\n`);
      return 2;
    }
    if (err instanceof RabbitError) {
      // Whatever the command did not turn into an answer of its own: the broker was not asked.
      const message = err.reason ? `the broker refused the request: ${err.reason}` : err.message;
      if (json) io.out(`${JSON.stringify({ error: { code: err.code, message, status: err.status } })}\n`);
      io.err(`rmq: ${message}\n`);
      return 3;
    }
    const message = err instanceof Error ? err.message : String(err);
    io.err(`rmq: ${message}\n`);
    return 1;
  }
}

/** The terminal's own defaults live in the environment (`RMQ_VHOST`), never in Redis. */
function terminalDefaults(env: NodeJS.ProcessEnv): { vhost?: string } {
  return env.RMQ_VHOST ? { vhost: env.RMQ_VHOST } : {};
}

/** The chosen environment's management API, closed after `fn`. An unknown `--env` is refused. */
async function withBroker(
  env: NodeJS.ProcessEnv,
  name: string | undefined,
  fn: (broker: ManagementClient) => Promise<number>,
): Promise<number> {
  const config = loadConfig(env);
  const environment = pickEnvironment(config, name);
  if (!environment) {
    throw new InputError(
      `Unknown environment ${name}.`,
      `Known: ${config.environments.map((e) => e.name).join(', ')}`,
    );
  }
  const client = new ManagementClient({
    url: environment.url,
    user: environment.user,
    password: environment.password,
    limits: config.bodyLimits,
  });
  try {
    return await fn(client.forQuestion(config.questionBudgetMs ?? QUESTION_BUDGET_MS.terminal));
  } finally {
    // The answer is out: a request still hanging is not waited for.
    await client.close(0);
  }
}

/**
 * Redis (the requests and the audit trail), closed after `fn`. Unreachable: exit 3, like a
 * broker that could not be asked.
 */
async function withRedis(
  env: NodeJS.ProcessEnv,
  io: Io,
  fn: (redis: Redis) => Promise<number>,
): Promise<number> {
  const { redisUrl } = loadConfig(env);
  // Loaded when asked for: `which` and `preview` never pay for the Redis client.
  const { Redis } = await import('ioredis');
  const redis = new Redis(redisUrl, {
    lazyConnect: true,
    maxRetriesPerRequest: 1,
    connectTimeout: 3_000,
    commandTimeout: 10_000,
    retryStrategy: () => null,
  });
  redis.on('error', () => undefined); // reported below, once
  try {
    await redis.connect();
  } catch (err) {
    io.err(`rmq: Redis (REDIS_URL) cannot be reached: ${err instanceof Error ? err.message : String(err)}\n`);
    redis.disconnect();
    return 3;
  }
  try {
    return await fn(redis);
  } finally {
    redis.disconnect();
  }
}

/** The process: `.env` read when present, then the command line. `bin/rmq.js` calls this. */
export async function cliMain(): Promise<never> {
  loadDotenv({ quiet: true });
  const code = await runCli(process.argv.slice(2), process.env);
  // The answer is written (stdout and stderr are synchronous on Linux); without exiting here the
  // process would wait ~0.1 s for the broker to close the pool's sockets (bench/cli).
  process.exit(code);
}

if (import.meta.url === `file://${process.argv[1]}`) void cliMain();
