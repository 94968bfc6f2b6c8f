import { type ExpectedLink, expectedLinks, type LinkedObject, linksChanged } from '../links/index.ts';
import { readsFederation } from '../policy/impact/index.ts';
import {
  type BrokerVersion,
  buildPolicySet,
  type ObjectKind,
  type Parameter,
  type ParameterTransition,
  type Policy,
  resolve,
  type Transition,
} from '../policy/index.ts';
import type { PatternCache } from '../policy/pattern/index.ts';

/**
 * The links each step of a vhost's plan starts and stops: the links expected once it is written
 * against those expected just before (src/links/ `expectedLinks`, `linksChanged`: the one home of
 * which links should exist). The policy in force on each object is the broker's rule on the
 * state's user policies (operator policies carry no federation key); an object whose policy is
 * not decided in a state (a tie, a pattern this bot cannot read) asks for no link in it, so a link
 * is never said to start or stop on a guess. Pure.
 */

export interface StepLinks {
  readonly start: readonly ExpectedLink[];
  readonly stop: readonly ExpectedLink[];
}

export const NO_LINKS: StepLinks = { start: [], stop: [] };

/** A link as `plan --json` and the stored set give it (without why one cannot run: those never start). */
export type LinkJson = Omit<ExpectedLink, 'absent'>;

export const linkJson = (l: LinkJson): LinkJson => ({
  kind: l.kind,
  vhost: l.vhost,
  object: l.object,
  upstream: l.upstream,
  policy: l.policy,
});

/** A link in words (`show`: how a name is shown there): `exchange "fed.a" from upstream "up1"`, `shovel "sh1"`. */
export const linkWords = (l: LinkJson, show: (name: string) => string): string =>
  l.kind === 'shovel'
    ? `shovel ${show(l.object)}`
    : `${l.kind} ${show(l.object)} from upstream ${show(l.upstream ?? '')}`;

/**
 * What a step does to the links, in words, at most `shown` of each named (`counts`: how many in
 * all, when the lists hold fewer); empty when it starts and stops none.
 */
export function stepLinksWords(
  links: { readonly start: readonly LinkJson[]; readonly stop: readonly LinkJson[] },
  show: (name: string) => string,
  shown = 5,
  counts?: { readonly start: number; readonly stop: number },
): string[] {
  const one = (verb: string, list: readonly LinkJson[], total: number) => {
    if (total === 0) return [];
    const named = list.slice(0, shown).map((l) => linkWords(l, show));
    const more = total - named.length;
    return [
      `${verb} ${total} link${total === 1 ? '' : 's'}: ${named.join(', ')}${more > 0 ? `, and ${more} more` : ''}`,
    ];
  };
  return [
    ...one('stops', links.stop, counts?.stop ?? links.stop.length),
    ...one('starts', links.start, counts?.start ?? links.start.length),
  ];
}

/** An object of the vhost, as the inventory lists it. */
export interface LinkCandidate {
  readonly name: string;
  readonly kind: ObjectKind | null;
}

export interface StepLinksInput {
  readonly vhost: string;
  readonly version: BrokerVersion;
  readonly cache: PatternCache;
  /** The vhost's user policies now. */
  readonly user: readonly Policy[];
  /** The vhost's federation upstreams, upstream sets and shovels now. */
  readonly parameters: readonly Parameter[];
  /** The steps in the order of writing. */
  readonly steps: readonly (Transition | ParameterTransition)[];
  readonly objects: readonly LinkCandidate[];
}

const isParameter = (s: Transition | ParameterTransition): s is ParameterTransition => 'component' in s;

/**
 * Whether links can move at all: a step writes a parameter, or a user policy is written while a
 * policy now or on the way reads federation (one without a federation key may still take an
 * object from one with it).
 */
export function linksInvolved(user: readonly Policy[], steps: StepLinksInput['steps']): boolean {
  if (steps.some(isParameter)) return true;
  const written = steps.filter((s): s is Transition => !isParameter(s) && s.layer === 'user');
  return (
    written.length > 0 &&
    [...user, ...written.flatMap((s) => [s.before, s.after])].some(
      (p) => p !== null && readsFederation(p.definition),
    )
  );
}

export function stepLinks(input: StepLinksInput): StepLinks[] {
  const { vhost, version, cache } = input;
  const policies = new Map(input.user.map((p) => [p.name, p]));
  const params = new Map(input.parameters.map((p) => [`${p.component}\u0000${p.name}`, p]));
  // Only objects some federated policy of any state may govern can have a federation link.
  const federated = [
    ...input.user,
    ...input.steps.flatMap((s) => (isParameter(s) || s.layer !== 'user' ? [] : [s.before, s.after])),
  ].filter((p): p is Policy => p !== null && readsFederation(p.definition));
  const reach = buildPolicySet(federated, [], version, cache);
  const candidates = input.objects.filter(
    (o) => o.kind !== 'stream' && resolve(reach, o.name, o.kind).user.candidates.length > 0,
  );
  const governed = (): LinkedObject[] => {
    if (candidates.length === 0) return [];
    const set = buildPolicySet([...policies.values()], [], version, cache);
    return candidates.map((o) => {
      const r = resolve(set, o.name, o.kind).user;
      const winner = r.decided && r.candidates.length === 1 ? (r.candidates[0]?.name ?? null) : null;
      return { vhost, name: o.name, kind: o.kind === 'exchange' ? 'exchange' : 'queue', policy: winner };
    });
  };
  const expected = (objects: readonly LinkedObject[]) => {
    const of = (c: Parameter['component']) => [...params.values()].filter((p) => p.component === c);
    return expectedLinks({
      objects,
      policies: [...policies.values()],
      upstreams: of('federation-upstream'),
      upstreamSets: of('federation-upstream-set'),
      shovels: of('shovel'),
    });
  };
  let objects = governed();
  let before = expected(objects);
  return input.steps.map((s) => {
    if (isParameter(s)) {
      const key = `${s.component}\u0000${s.name}`;
      if (s.after) params.set(key, s.after);
      else params.delete(key);
    } else if (s.layer === 'user') {
      if (s.after) policies.set(s.name, s.after);
      else policies.delete(s.name);
      objects = governed();
    } else return NO_LINKS;
    const after = expected(objects);
    const moved = linksChanged(before, after);
    before = after;
    return moved;
  });
}
