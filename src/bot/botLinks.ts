import { type LinksBroker, links } from '../commands/links/index.ts';
import type { Environment } from '../config/index.ts';
import { inScope } from '../core/index.ts';
import type { LinkRow } from '../links/index.ts';
import { readsFederation } from '../policy/impact/index.ts';
import type { Policy } from '../policy/index.ts';
import type { NodeRunning } from '../watch/index.ts';

/** A background client as the links watch reads it: the `links` command's reading, the vhosts, the nodes. */
type LinksClient = LinksBroker & {
  listVhosts(): Promise<string[]>;
  listAllPolicies(layer: 'user'): Promise<Policy[]>;
  vhostsWithParameters(component: 'shovel'): Promise<Set<string>>;
  nodesRunning(): Promise<NodeRunning[]>;
};

/**
 * What the links watch reads, per environment (its background client): every vhost it watches
 * (RMQ_VHOSTS, or the environment's `vhosts`) where something asks for a link (a user policy with
 * a federation key, a shovel parameter: two requests over every vhost) answered by the `links`
 * command's own reading, one vhost after another; and the nodes. A vhost where nothing asks for a
 * link has none that should run: it is not read. A vhost the broker could not be asked about fails the
 * whole reading (tried again on the interval): an empty answer would read as every link gone.
 */
export function linksSources(
  brokers: ReadonlyMap<string, LinksClient>,
  /** A test's filter on top of the environment's vhosts (the watchers' `tuning.vhosts`). */
  only: (vhost: string) => boolean = () => true,
): {
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
      const [vhosts, policies, shovels] = await Promise.all([
        broker.listVhosts(),
        broker.listAllPolicies('user'),
        broker.vhostsWithParameters('shovel'),
      ]);
      const asking = new Set([
        ...policies.filter((p) => readsFederation(p.definition)).map((p) => p.vhost),
        ...shovels,
      ]);
      for (const vhost of vhosts.filter((v) => inScope(env, v) && only(v) && asking.has(v))) {
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
