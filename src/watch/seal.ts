import type { AuditEntry, AuditTrail, SnapshotEntry } from '../audit/index.ts';
import type { Policy } from '../policy/index.ts';
import type { Seal, SealOutcome } from './watcher.ts';

/**
 * A snapshot or a gap as the trail records it (`action: snapshot` / `gap`). Its id is its
 * content's place in time, so a seal appended twice (a retry) is recorded once.
 */

const held = (p: Policy) => ({
  vhost: p.vhost,
  name: p.name,
  pattern: p.pattern,
  applyTo: p.applyTo,
  priority: p.priority,
  definition: { ...p.definition },
});

const byAddress = (a: Policy, b: Policy) =>
  a.vhost < b.vhost ? -1 : a.vhost > b.vhost ? 1 : a.name < b.name ? -1 : a.name > b.name ? 1 : 0;

export function sealEntry(seal: Seal & { kind: 'snapshot' }): SnapshotEntry;
export function sealEntry(seal: Seal): AuditEntry;
export function sealEntry(seal: Seal): AuditEntry {
  if (seal.kind === 'gap')
    return {
      id: `g-${seal.env}-${seal.from.getTime()}-${seal.to.getTime()}`,
      at: seal.to.toISOString(),
      env: seal.env,
      action: 'gap',
      from: seal.from.toISOString(),
      to: seal.to.toISOString(),
    };
  return {
    id: `s-${seal.env}-${seal.at.getTime()}`,
    at: seal.at.toISOString(),
    env: seal.env,
    action: 'snapshot',
    why: seal.why,
    vhosts: seal.vhosts ? [...seal.vhosts] : null,
    ...(seal.version ? { version: seal.version } : {}),
    policies: [...seal.user].sort(byAddress).map(held),
    operatorPolicies: [...seal.operator].sort(byAddress).map(held),
  };
}

/**
 * Appends a seal to the trail: a snapshot read against a mark only if the environment's trail has
 * not grown since (`grown`: the watcher reads the broker again).
 */
export async function sealInto(
  trail: Pick<AuditTrail, 'append' | 'appendSnapshot'>,
  seal: Seal,
): Promise<SealOutcome> {
  if (seal.kind === 'snapshot' && seal.mark !== undefined) {
    const sealed = await trail.appendSnapshot(sealEntry(seal), seal.mark);
    return sealed === 'grown' ? 'grown' : 'sealed';
  }
  await trail.append(sealEntry(seal));
  return 'sealed';
}
