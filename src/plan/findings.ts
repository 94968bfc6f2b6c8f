/**
 * A plan's new findings: what `lint` finds in the end state that it does not find now, so a
 * reviewer sees what the set brings (docs/json.md, `plan --json`'s `findings`), without linting
 * the whole vhost twice, nor once.
 *
 * Why a few objects are enough. An object no change reaches (`touched`: no changed policy, as it
 * is or as proposed, may match it; touch.ts) is matched by the same policies in both states, so
 * it feeds every tally of the pass (lint.ts `tallyStates`) alike in both. A tally therefore
 * differs between the two states only through the objects a change reaches; the tallies those
 * objects feed differently are the dirty ones, and only a dirty tally can find something new. A
 * dirty tally is then read exactly, from every object that may feed it: every object one of its
 * policies may match. Every other tally is fed the same objects in the same order in both states
 * (the objects no change reaches as the listing gave them, then those it does), so whatever it
 * finds it finds in both, and it is never new. A finding names its tally's policy, so the findings
 * of a policy of a dirty tally are read exactly in both states, and no finding read from part of
 * the vhost can be mistaken for one of those (distinct ties of one policy share no object).
 * test/unit/plan-findings.test.ts: for random worlds and random changes, the findings so read are
 * exactly those of the two whole passes (`wholeNewFindings`), wording included.
 */
import { type BacktrackingReader, defaultReader } from '../patterns/index.ts';
import type { LiveQueue, World } from '../policy/impact/index.ts';
import type { Policy, PolicySet } from '../policy/index.ts';
import { PolicyIndex } from '../policy/index.ts';
import { type Finding, findingId, Linter, type LintObject } from '../policy/lint/index.ts';
import { nameView, type PatternCache } from '../policy/pattern/index.ts';

export interface FindingsInput {
  /** The vhost's policies now, and once every change is written. */
  readonly now: PolicySet;
  readonly end: PolicySet;
  /** The objects some change may reach, and the others, each in the listing's order. */
  readonly touched: readonly LintObject[];
  readonly untouched: readonly LintObject[];
  /** The queues' numbers (`null`: none read) and the vhost's federation, as `Linter.findings` takes them. */
  readonly live: ReadonlyMap<string, LiveQueue | null> | null;
  /**
   * The numbers of queues `live` does not hold (a reading of the queues a change reaches alone),
   * asked when a finding reads them: a policy's tally moved by the change counts every queue it
   * governs (`expires-idle`'s messages). Absent: `live` holds every queue it has numbers for.
   */
  readonly moreLive?: (names: readonly string[]) => Promise<ReadonlyMap<string, LiveQueue | null>>;
  readonly world: Partial<World>;
  readonly at: number;
  readonly cache: PatternCache;
  readonly reader?: BacktrackingReader | undefined;
}

/** Parked objects read again with the backtracking engine's verdicts. */
async function settled(linters: readonly Linter[], reader: BacktrackingReader | undefined): Promise<void> {
  for (const l of linters) {
    const pending = l.pending();
    if (pending.size > 0) await (reader ?? defaultReader()).decide(pending);
    l.settle();
  }
}

/** The end state's findings whose identity (`findingId`) is not among now's. */
async function diffed(
  input: FindingsInput,
  untouched: readonly LintObject[],
): Promise<{ now: Linter; end: Linter; findings: () => Promise<Finding[]> }> {
  const now = new Linter(input.now, input.cache);
  for (const o of untouched) now.add(o);
  const end = now.fork(input.end);
  for (const o of input.touched) {
    now.add(o);
    end.add(o);
  }
  await settled([now, end], input.reader);
  return {
    now,
    end,
    findings: async () => {
      const live = await withMoreLive(input, [...untouched, ...input.touched], [now, end]);
      const before = new Set(now.findings(live, input.world, input.at).map(findingId));
      return end.findings(live, input.world, input.at).filter((f) => !before.has(findingId(f)));
    },
  };
}

/** `input.live` with the numbers of the queues the passes read and it lacks, asked of `moreLive`. */
async function withMoreLive(
  input: FindingsInput,
  objects: readonly LintObject[],
  passes: readonly Linter[],
): Promise<ReadonlyMap<string, LiveQueue | null> | null> {
  const { live, moreLive } = input;
  if (!live || !moreLive) return live;
  const missing = objects.flatMap((o) =>
    o.kind !== 'exchange' && !live.has(o.name) && passes.some((p) => p.wantsLive(o.name)) ? [o.name] : [],
  );
  if (missing.length === 0) return live;
  return new Map([...live, ...(await moreLive(missing))]);
}

/** The new findings from two passes over every object: what `newFindings` answers, the long way. */
export async function wholeNewFindings(input: FindingsInput): Promise<Finding[]> {
  return (await diffed(input, input.untouched)).findings();
}

/** The policies (`layer:name`) of the tallies the touched objects feed differently in the two states. */
function dirtyPolicies(passes: { now: Linter; end: Linter }): Set<string> {
  const a = passes.now.tallyStates();
  const b = passes.end.tallyStates();
  const dirty = new Set<string>();
  for (const [id, x] of a) {
    if (b.get(id)?.state !== x.state) for (const p of x.policies) dirty.add(p);
  }
  for (const [id, y] of b) {
    if (a.get(id)?.state !== y.state) for (const p of y.policies) dirty.add(p);
  }
  return dirty;
}

/** Whether one of these policies may match the object: its apply-to reaches it, its pattern may find it. */
function mayMatchAny(policies: readonly Policy[], input: FindingsInput): (o: LintObject) => boolean {
  // Tagged by position: a user policy and an operator policy may share a name.
  const tagged = policies.map((p, i) => ({ ...p, name: String(i), priority: 0 }));
  const index = new PolicyIndex(tagged, input.now.version, input.cache);
  return (o) => {
    const candidates = index.reachingFor(o.kind, o.name);
    if (candidates.length === 0) return false;
    const view = nameView(o.name);
    return candidates.some((e) => e.pattern.match(view) !== false);
  };
}

/** What `lint` finds in the end state and not now (see the header): equal to `wholeNewFindings`. */
export async function newFindings(input: FindingsInput): Promise<Finding[]> {
  const touchedOnly = await diffed(input, []);
  const dirty = dirtyPolicies(touchedOnly);
  if (dirty.size === 0) return [];
  // A policy the set changes (or adds, or deletes) matches no object no change reaches: only the
  // dirty policies both states hold may be fed by those objects.
  const policies: Policy[] = [];
  for (const layer of ['user', 'operator'] as const) {
    const end = input.end[layer];
    for (const e of input.now[layer].byName.values()) {
      if (dirty.has(`${layer}:${e.name}`) && end.named(e.name)?.policy === e.policy) policies.push(e.policy);
    }
  }
  if (policies.length === 0) return touchedOnly.findings();
  const feeds = mayMatchAny(policies, input);
  return (await diffed(input, input.untouched.filter(feeds))).findings();
}
