import type { Definition, Policy } from '../policy/index.ts';
import type { AbsentTarget, ExpectedLink, LinkKind, LinkSources, Parameter } from './types.ts';

/**
 * Which links should exist, as the federation and shovel plugins decide it
 * (rabbit_federation_upstream: `federation-upstream` names one upstream, `federation-upstream-set`
 * a set of them or `all` of the vhost's, `federation-upstream-pattern` every upstream whose name
 * the pattern finds): one link per (federated object, upstream), exchange and queue federation
 * apart, and one shovel per `shovel` parameter. The default exchange and internal exchanges
 * (`amq.rabbitmq.trace`) take a policy and are never federated. An upstream or set the policy names and the vhost
 * lacks is still a link that should exist: it is the reason it does not.
 *
 * Proven against what 4.0.5, 4.3.6 and the 4.3.6 cluster report once settled
 * (test/integration/links-differential.test.ts).
 */

const key = (vhost: string, name: string) => `${vhost}\u0000${name}`;

/** The parameters by vhost and name. */
function byName(params: readonly Parameter[]): Map<string, Parameter> {
  return new Map(params.map((p) => [key(p.vhost, p.name), p]));
}

/** The upstream names a set's value lists (`[{ "upstream": "a" }, …]`), in its order, once each. */
export function setMembers(value: unknown): string[] {
  if (!Array.isArray(value)) return [];
  const names = value.flatMap((m: unknown) =>
    m !== null && typeof m === 'object' && typeof (m as { upstream?: unknown }).upstream === 'string'
      ? [(m as { upstream: string }).upstream]
      : [],
  );
  return [...new Set(names)];
}

/** The upstream names `pattern` finds (the plugin runs it over every upstream name of the vhost). */
function byPattern(pattern: string, names: readonly string[]): string[] {
  let re: RegExp;
  try {
    re = new RegExp(pattern, 'u');
  } catch {
    return [];
  }
  return names.filter((n) => re.test(n));
}

/** What one federation key of a definition asks for: the upstreams, each either there or absent. */
export type Wanted = { readonly upstream: string | null; readonly absent?: AbsentTarget };

/**
 * The upstreams a definition's federation key names in `vhost` (none when it sets no federation
 * key), given the vhost's upstreams and sets by name.
 */
export function upstreamsWanted(
  definition: Definition,
  upstreamNames: readonly string[],
  sets: ReadonlyMap<string, unknown>,
): Wanted[] {
  const one = definition['federation-upstream'];
  if (typeof one === 'string') {
    return upstreamNames.includes(one)
      ? [{ upstream: one }]
      : [{ upstream: one, absent: { what: 'upstream', name: one } }];
  }
  const set = definition['federation-upstream-set'];
  if (typeof set === 'string') {
    if (set === 'all') return upstreamNames.map((u) => ({ upstream: u }));
    if (!sets.has(set)) return [{ upstream: null, absent: { what: 'upstream-set', name: set } }];
    return setMembers(sets.get(set)).map((u) =>
      upstreamNames.includes(u)
        ? { upstream: u }
        : { upstream: u, absent: { what: 'upstream', name: u, set } },
    );
  }
  const pattern = definition['federation-upstream-pattern'];
  if (typeof pattern === 'string') return byPattern(pattern, upstreamNames).map((u) => ({ upstream: u }));
  return [];
}

/** Every link the sources ask for: federation links by object and upstream, then the shovels. */
export function expectedLinks(sources: LinkSources): ExpectedLink[] {
  const policies = new Map<string, Policy>(sources.policies.map((p) => [key(p.vhost, p.name), p]));
  const upstreamsOf = new Map<string, string[]>();
  for (const u of sources.upstreams) upstreamsOf.set(u.vhost, [...(upstreamsOf.get(u.vhost) ?? []), u.name]);
  const setsOf = new Map<string, Map<string, unknown>>();
  for (const s of sources.upstreamSets) {
    const sets = setsOf.get(s.vhost) ?? new Map<string, unknown>();
    sets.set(s.name, s.value);
    setsOf.set(s.vhost, sets);
  }
  const out: ExpectedLink[] = [];
  for (const o of sources.objects) {
    if (o.policy === null || o.internal === true || (o.kind === 'exchange' && o.name === '')) continue;
    const policy = policies.get(key(o.vhost, o.policy));
    if (!policy) continue;
    const wanted = upstreamsWanted(
      policy.definition,
      upstreamsOf.get(o.vhost) ?? [],
      setsOf.get(o.vhost) ?? new Map(),
    );
    for (const w of wanted) {
      out.push({
        kind: o.kind,
        vhost: o.vhost,
        object: o.name,
        upstream: w.upstream,
        policy: policy.name,
        ...(w.absent ? { absent: w.absent } : {}),
      });
    }
  }
  for (const s of byName(sources.shovels).values())
    out.push({ kind: 'shovel', vhost: s.vhost, object: s.name, upstream: null, policy: null });
  return out;
}

/** One link's identity: kind, vhost, object and upstream (a shovel: its vhost and name). */
export function linkKey(l: {
  readonly kind: LinkKind;
  readonly vhost: string;
  readonly object: string;
  readonly upstream: string | null;
}): string {
  return [l.kind, l.vhost, l.object, l.upstream ?? ''].join('\u0000');
}

/**
 * The links a change starts and stops: those `after` asks for that `before` does not, and the
 * reverse (links that cannot run, their target absent, neither start nor stop).
 */
export function linksChanged(
  before: readonly ExpectedLink[],
  after: readonly ExpectedLink[],
): { readonly start: ExpectedLink[]; readonly stop: ExpectedLink[] } {
  const runnable = (ls: readonly ExpectedLink[]) =>
    new Map(ls.filter((l) => !l.absent).map((l) => [linkKey(l), l]));
  const was = runnable(before);
  const will = runnable(after);
  return {
    start: [...will].filter(([k]) => !was.has(k)).map(([, l]) => l),
    stop: [...was].filter(([k]) => !will.has(k)).map(([, l]) => l),
  };
}
