import { type Config, pickEnvironment, QUESTION_BUDGET_MS } from '../config.ts';
import { InputError } from '../errors.ts';
import type { Environments, SlackBroker } from './handlers/types.ts';

/**
 * `--env E` -> that environment's broker client, built once in main.ts, seen through one budget
 * per question (RMQ_TIMEOUT, default QUESTION_BUDGET_MS.slack): every call of the question,
 * retries included, ends by then, and the asker is told the broker did not answer in time.
 */
export function environmentDirectory(
  config: Config,
  brokers: ReadonlyMap<string, SlackBroker>,
): Environments {
  const budgetMs = config.questionBudgetMs ?? QUESTION_BUDGET_MS.slack;
  return {
    pick(name) {
      const env = pickEnvironment(config, name);
      if (!env) {
        throw new InputError(
          `Unknown environment ${JSON.stringify(name)}.`,
          `Known environments: ${config.environments.map((e) => e.name).join(', ')}`,
        );
      }
      const broker = brokers.get(env.name);
      if (!broker) throw new Error(`no broker client for environment ${env.name}`);
      return { name: env.name, broker: broker.forQuestion?.(budgetMs) ?? broker };
    },
  };
}
