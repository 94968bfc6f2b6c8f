import { type LinksBroker, links } from '../commands/links/index.ts';
import type { Environment } from '../config/index.ts';
import { inScope } from '../core/index.ts';
import type { LinkRow } from '../links/index.ts';
import type { NodeRunning } from '../watch/index.ts';

/** A background client as the links watch reads it: the `links` command's reading, the vhosts, the nodes. */
type LinksClient = LinksBroker & {
  listVhosts(): Promise<string[]>;
  nodesRunning(): Promise<NodeRunning[]>;
};

/**
 * What the links watch reads, per environment (its background client): every vhost it watches
 * (RMQ_VHOSTS, or the environment's `vhosts`) answered by the `links` command's own reading, one
 * vhost after another, and the nodes. A vhost the broker could not be asked about fails the
 * whole reading (tried again on the interval): an empty answer would read as every link gone.
 */
export function linksSources(brokers: ReadonlyMap<string, LinksClient>): {
  readLinks: (env: Environment) => Promise<readonly LinkRow[]>;
  nodesOf: (env: string) => () => Promise<readonly NodeRunning[]>;
} {
  const client = (env: string) => {
    const b = brokers.get(env);
    if (!b) throw new Error(`no broker client for environment ${env}`);
    return b;
  };
  return {
    async readLinks(env) {
      const broker = client(env.name);
      const rows: LinkRow[] = [];
      for (const vhost of (await broker.listVhosts()).filter((v) => inScope(env, v))) {
        const answer = await links({ vhost }, broker, { env: env.name });
        if (answer.answer !== 'answered')
          throw new Error(
            `the links of vhost ${JSON.stringify(vhost)} could not be read (${answer.why ?? 'not asked'})`,
          );
        rows.push(...answer.links);
      }
      return rows;
    },
    nodesOf: (env) => () => client(env).nodesRunning(),
  };
}
