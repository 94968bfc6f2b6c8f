import type { Definition, ObjectKind } from '../types.ts';
import {
  FEDERATION_KEYS,
  FEDERATION_TARGETS,
  type Impact,
  type ImpactInput,
  type MissingTarget,
  str,
  type TargetKey,
  type World,
} from './impactTypes.ts';

/**
 * The values that name a target (a dead-letter or alternate exchange, a federation upstream or
 * set): a target the vhost does not have, and what goes with a target a change takes away (the
 * dead-letter exchange: what is rejected, expires or overflows from now on is dropped; a
 * federation key: the running link stops), and the links a change starts.
 */

const EXCHANGE_TARGETS = ['alternate-exchange', ...FEDERATION_TARGETS] as const;
const QUEUE_TARGETS = ['dead-letter-exchange', ...FEDERATION_TARGETS] as const;

/** The keys naming a target an object of this kind takes (read for every object a change moves: built once). */
export function targetKeys(kind: ObjectKind): readonly TargetKey[] {
  if (kind === 'exchange') return EXCHANGE_TARGETS;
  if (kind === 'stream') return FEDERATION_TARGETS;
  return QUEUE_TARGETS;
}

/**
 * The targets `values` name that the vhost does not have (a set not read is taken to hold them;
 * "" is the default exchange; the set `all` is every upstream), put in `out`. `unchanged`: the
 * values before a change, whose targets are not the change's doing.
 */
export function missingTargets(
  kind: ObjectKind,
  values: Readonly<Record<string, unknown>>,
  world: World,
  unchanged: Readonly<Record<string, unknown>>,
  out: Pick<MissingTarget[], 'push'>,
): void {
  for (const key of targetKeys(kind)) {
    const target = str(values[key]);
    if (target === undefined || target === str(unchanged[key])) continue;
    if (targetExists(key, target, world) === false) out.push({ effect: 'missing-target', key, target });
  }
}

/**
 * Whether the vhost has the target a key names: `null` when not known (a set not read; the
 * upstream set `all`, which is every upstream). "" as a dead-letter exchange is the default one.
 */
export function targetExists(key: TargetKey, target: string, world: World): boolean | null {
  if (target === '' && key === 'dead-letter-exchange') return true;
  const known =
    key === 'federation-upstream'
      ? world.upstreams
      : key === 'federation-upstream-set'
        ? target === 'all'
          ? null
          : world.upstreamSets
        : world.exchanges;
  return known === null ? null : known.has(target);
}

/** Whether a definition sets a key whose impact reads the federation: where none does, nothing reads it. */
export const readsFederation = (d: Definition) => FEDERATION_KEYS.some((k) => k in d);

/** The targets a change names that the vhost does not have (those it named before are not its doing). */
export function targets(i: ImpactInput, world: World, out: Impact[]): void {
  missingTargets(i.kind, i.after, world, i.before, out);
}

/** A dead-letter exchange or a federation key the change takes away. */
export function losses(i: ImpactInput, world: World, out: Impact[]): void {
  const { kind, before, after, now, name } = i;
  const dlx = str(before['dead-letter-exchange']);
  if (
    (kind === 'classic' || kind === 'quorum') &&
    dlx !== undefined &&
    after['dead-letter-exchange'] === undefined
  ) {
    if (now === null || now.messages > 0) {
      out.push({ effect: 'dead-letter-lost', messages: now?.messages ?? null, exchange: dlx });
    }
  }
  for (const key of FEDERATION_KEYS) {
    const upstream = str(before[key]);
    if (upstream !== undefined && after[key] === undefined && world.links?.has(name)) {
      out.push({ effect: 'link-stops', key, upstream });
    }
  }
}

/**
 * A federation key the change gives the object, or points elsewhere, naming what exists: the link
 * starts (what does not exist is a missing target instead; the upstreams a set or pattern names
 * are the links rules', src/links/).
 */
export function starts(i: ImpactInput, world: World, out: Impact[]): void {
  for (const key of FEDERATION_KEYS) {
    const upstream = str(i.after[key]);
    if (upstream === undefined || upstream === str(i.before[key])) continue;
    const exists = key === 'federation-upstream-pattern' ? null : targetExists(key, upstream, world);
    if (exists !== false) out.push({ effect: 'link-starts', key, upstream });
  }
}
