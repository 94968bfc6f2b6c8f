import { type Config, pickEnvironment } from '../config.ts';
import { InputError } from '../errors.ts';
import type { Environments, SlackBroker } from './handlers/types.ts';

/** `--env E` -> that environment's broker client, built once in main.ts. */
export function environmentDirectory(
  config: Config,
  brokers: ReadonlyMap<string, SlackBroker>,
): Environments {
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
      return { name: env.name, broker };
    },
  };
}
