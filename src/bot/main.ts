import { pathToFileURL } from 'node:url';
import { config as loadDotenv } from 'dotenv';
import { type Config, loadConfig } from '../config/index.ts';
import { ConfigError } from '../core/index.ts';
import { missingSlackMessage, missingSlackSettings } from '../slack/index.ts';
import { BotStartError, createBot } from './bot.ts';

export { loadConfig } from '../config/index.ts';
export { createLogger } from '../log/index.ts';
/**
 * What the Slack e2e suites drive of the built bundle (`dist/main.js`, the file `npm start`
 * runs) when a suite must shorten a timing or observe in-process: the same code the process
 * runs, never the sources (test/support/harness.ts, test/README.md).
 */
export { BotStartError, createBot } from './bot.ts';
export { createBrokers, createRedis } from './botClients.ts';
export { createMetrics } from './metrics/metrics.ts';

/**
 * `npm start`: the config read, the bot (src/bot/bot.ts, the composition root) started, and the
 * process's part: exit codes (1: it cannot start, saying what to fix; 0: stopped by a signal) and
 * signals. SIGTERM (and SIGINT) stop taking requests, let answers under way finish, then close
 * the clients.
 */

/**
 * The longest a shutdown may take before the process exits anyway: more than an apply job's
 * verification (60 s) and the answers' drain, less than a typical orchestrator's kill grace.
 */
export const SHUTDOWN_HARD_LIMIT_MS = 90_000;

function cannotStart(message: string): never {
  process.stderr.write(`rmq bot: ${message}\n`);
  process.exit(1);
}

export async function main(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  let config: Config;
  try {
    config = loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) cannotStart(err.message);
    throw err;
  }
  const missing = missingSlackSettings(config);
  if (missing.length > 0) cannotStart(missingSlackMessage(missing));

  const bot = createBot(config);
  try {
    await bot.start();
  } catch (err) {
    if (err instanceof BotStartError) cannotStart(err.message);
    throw err;
  }

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    // Whatever hangs (a job's verification, a connection that never closes), the process ends:
    // an apply cut short is taken up again by another replica or the next start, as after a crash.
    setTimeout(() => {
      bot.logger.error({ afterMs: SHUTDOWN_HARD_LIMIT_MS }, 'shutdown did not finish in time: exiting');
      process.exit(1);
    }, SHUTDOWN_HARD_LIMIT_MS).unref();
    await bot.stop(undefined, signal);
    process.exit(0);
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  loadDotenv({ quiet: true });
  main().catch((err: unknown) => {
    process.stderr.write(`rmq bot: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
}
