import type { LinksBroker } from '../commands/links/index.ts';
import type { DurabilitySource, LintBroker } from '../commands/lint/index.ts';
import type { PathBroker } from '../commands/path/index.ts';
import type { WhichBroker } from '../commands/which/index.ts';
import { type Config, pickEnvironment, questionBudget } from '../config/index.ts';
import { checkScope, InputError } from '../core/index.ts';
import type { ParameterLister } from '../plan/index.ts';
import type { PreviewBroker } from '../preview/index.ts';

/** The management API as the Slack commands use it. ManagementClient satisfies it. */
export interface SlackBroker
  extends WhichBroker,
    PreviewBroker,
    LinksBroker,
    ParameterLister,
    PathBroker,
    DurabilitySource {
  whoami(): Promise<{ readonly name: string; readonly tags: readonly string[] }>;
  /** Required here, as `lint` reads it; optional to the preview. */
  streamQueuesLive: LintBroker['streamQueuesLive'];
  /** Required here, as `links` reads them; optional to `which`. */
  parameters: LinksBroker['parameters'];
  federationLinkList: LinksBroker['federationLinkList'];
  /** The same broker with one budget for every call of one question (ManagementClient.forQuestion). */
  forQuestion?(budgetMs: number, options?: { stretchableToMs?: number }): SlackBroker;
}

export interface EnvironmentBroker {
  readonly name: string;
  readonly broker: SlackBroker;
}

export interface Environments {
  /**
   * `--env`, or the only (first) environment; an unknown name is an InputError, and so is a
   * `vhost` outside the environment's `vhosts` (RMQ_VHOSTS).
   */
  pick(name: string | undefined, vhost?: string): EnvironmentBroker;
}

/**
 * `--env E` -> that environment's broker client, built once in src/bot/bot.ts, seen through one budget
 * per question (RMQ_TIMEOUT, default QUESTION_BUDGET_MS.slack, stretched to fit the broker: config.ts
 * `questionBudget`): every call of the question,
 * retries included, ends by then, and the asker is told the broker did not answer in time.
 */
export function environmentDirectory(
  config: Config,
  brokers: ReadonlyMap<string, SlackBroker>,
): Environments {
  const budget = questionBudget(config, 'slack');
  return {
    pick(name, vhost) {
      const env = pickEnvironment(config, name);
      if (!env) {
        throw new InputError(`Unknown environment ${JSON.stringify(name)}.`, {
          hint: `Known environments: ${config.environments.map((e) => e.name).join(', ')}`,
        });
      }
      if (vhost !== undefined) checkScope(env, vhost);
      const broker = brokers.get(env.name);
      if (!broker) throw new Error(`no broker client for environment ${env.name}`);
      return { name: env.name, broker: broker.forQuestion?.(...budget) ?? broker };
    },
  };
}

/** The environment of a set of changes: refused (InputError) when one of its vhosts is outside the environment's. */
export function pickForVhosts(
  environments: Environments,
): (name: string | undefined, vhosts: readonly string[]) => EnvironmentBroker {
  return (name, vhosts) => {
    for (const vhost of vhosts) environments.pick(name, vhost);
    return environments.pick(name);
  };
}
