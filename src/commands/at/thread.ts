import { isChange } from '../../audit/index.ts';
import { OBJECT_KINDS, type ObjectKind } from '../../policy/index.ts';
import { PatternCache } from '../../policy/pattern/index.ts';
import type { WhichInput } from '../parse.ts';
import type { WhichResult } from '../which/which.ts';
import type { WhichBroker } from '../which/whichLookup.ts';
import { type AtTrail, reaching, whichAt } from './whichAt.ts';

/**
 * `which NAME` asked in an incident thread more than an hour old: what governed the object when
 * the thread started, replayed from the trail, beside the answer now; when the policy in force or
 * the effective values differ, one line says so (and since when), offering `--at`. Nothing when
 * they are the same, when the trail cannot say, or when the trail cannot be read.
 */

/** A thread younger than this gets no line: the answer now is the answer then. */
export const THREAD_AGE_MS = 60 * 60_000;

export interface ThreadChange {
  /** The thread's start, ISO. */
  readonly startedAt: string;
  readonly atStart: { readonly inForce: string | null; readonly effective: Record<string, unknown> };
  readonly now: { readonly inForce: string | null; readonly effective: Record<string, unknown> };
  /** The last change to the policies that reach the object since the thread started (absent: none recorded). */
  readonly since?: string;
}

const values = (r: Pick<WhichResult, 'effective'>) =>
  Object.fromEntries(Object.entries(r.effective).map(([k, e]) => [k, e.value]));

const same = (a: Record<string, unknown>, b: Record<string, unknown>) =>
  JSON.stringify(Object.entries(a).sort()) === JSON.stringify(Object.entries(b).sort());

export async function sinceThreadStart(
  input: WhichInput,
  live: WhichResult,
  threadTs: string | undefined,
  env: string,
  broker: WhichBroker,
  trail: AtTrail,
  now: Date = new Date(),
): Promise<ThreadChange | undefined> {
  if (threadTs === undefined || !/^\d+(\.\d+)?$/.test(threadTs) || live.answer === 'not-asked')
    return undefined;
  const ms = Math.floor(Number(threadTs) * 1000);
  if (now.getTime() - ms < THREAD_AGE_MS) return undefined;
  const startedAt = new Date(ms).toISOString();
  const at = { ms, iso: startedAt, form: 'iso' as const, written: startedAt };
  const then = await whichAt({ ...input, at }, env, broker, trail);
  if (!then.known) return undefined;
  const t = { inForce: then.inForce?.name ?? null, effective: values(then) };
  const n = { inForce: live.inForce?.name ?? null, effective: values(live) };
  if (t.inForce === n.inForce && same(t.effective, n.effective)) return undefined;
  const { entries } = await trail.scan({ env, vhost: input.vhost, since: ms });
  const kind = (OBJECT_KINDS as readonly string[]).includes(then.object.kind)
    ? (then.object.kind as ObjectKind)
    : null;
  const [latest] = await reaching(
    entries.filter(isChange),
    input.name,
    kind,
    now.getTime(),
    new PatternCache(),
    undefined,
  );
  return { startedAt, atStart: t, now: n, ...(latest ? { since: latest.at } : {}) };
}
