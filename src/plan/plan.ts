// Over 400 lines: a vhost's plan (its listing, order, way and end state) reads as one walk over one listing.
/**
 * The plan of a definitions file against a broker (docs/plan.md; its document: docs/json.md,
 * `plan --json`): per vhost of the file, the changes against the broker's policies (create, edit,
 * unchanged; delete only with `prune`), in the order of writing (src/policy/simulate/order.ts),
 * the end state previewed as one against now, and what a state on the way would still do that the
 * end state does not (`transitional`). One listing per vhost for the whole set. Writes nothing.
 *
 * For the apply job (and `import`):
 * - `planFile(file, broker, { prune })` -> `PlanResult`; `planned.plan.vhosts[i].steps` are the
 *   changes in the order to write them, each a `Transition` (layer, vhost, name, before, after:
 *   `before` is the policy as the plan read it, the stale guard) with its `action`;
 * - `step.verify`: the objects whose safety a later step depends on, with the policy of each
 *   layer they must be reported governed by once this step is written (the broker's `policy` and
 *   `operator_policy` of the object), before the next write;
 * - `plan.impact` (the end state against now, as the preview's) and `plan.transitional` are the
 *   loss an approval acknowledges.
 *
 * Beside the impact, `findings`: what `lint` would find in the end state that it does not find
 * now (the same finding is the same kind, policy and objects), read from the objects the changes
 * reach and those few others a moved tally needs (./findings.ts), as two whole passes would.
 *
 * The order (src/policy/simulate/order.ts), the findings (findings.ts) and the file
 * (src/definitions/) are modules of their own.
 */

import { codeOf, maskUris, missingVhost, type VhostLister } from '../core/index.ts';
import {
  type DefinitionsFile,
  type FederationNames,
  type FileParameter,
  missingVhostWords,
  withDeclared,
} from '../definitions/index.ts';
import type { BacktrackingReader } from '../patterns/index.ts';
import { settleSimulation } from '../patterns/index.ts';
import {
  findingNumbersUnreadWords,
  type Impact,
  impactTotals,
  type LiveQueue,
  losingQueues,
  readsFederation,
  withoutStatisticsWords,
} from '../policy/impact/index.ts';
import type { Risk } from '../policy/index.ts';
import {
  actionOf,
  buildPolicySet,
  COMPONENT_WORDS,
  formatVersion,
  type ObjectKind,
  type Parameter,
  type ParameterComponent,
  type ParameterTransition,
  type Policy,
  type PolicyLayer,
  type Transition,
} from '../policy/index.ts';
import type { Finding, LintObject } from '../policy/lint/index.ts';
import { PatternCache } from '../policy/pattern/index.ts';
import type { ChangeAction, InventoryObject, Unpredictable } from '../policy/simulate/index.ts';
import {
  chooseOrder,
  impactAt,
  type LayerNames,
  type LossContext,
  lossAgainst,
  SequenceDriver,
  type StateValues,
  timelines,
  touchIndex,
} from '../policy/simulate/index.ts';
import type { PolicyFields, PreviewChange } from '../preview/index.ts';
import { defaultDeliveryLimit, type LiveNow, worldOf } from '../preview/index.ts';
import {
  type InventorySource,
  liveOfNames,
  type NotAskedWhy,
  notAskedBecause,
  openInventory,
  type Unread,
  unreadOf,
  whyFailed,
} from '../rabbit/index.ts';
import { changesOf } from './changes.ts';
import { newFindings } from './findings.ts';
import {
  type ParameterLister,
  parameterChangesOf,
  parameterOrder,
  parameterRefusals,
  readParameters,
  withoutDeleted,
} from './parameters.ts';
import {
  type LinkCandidate,
  type LinkJson,
  linkJson,
  linksInvolved,
  NO_LINKS,
  type StepLinks,
  stepLinks,
} from './stepLinks.ts';

export { changesOf };

/** What a plan of given policy changes reads (`planChanges`). */
export type PolicyPlanBroker = InventorySource & VhostLister;
/** What a file's plan reads: its parameters too. */
export type PlanBroker = PolicyPlanBroker & ParameterLister;

/** An object to check after a step is written: the policy of each layer the broker must report on it. */
export interface VerifyObject {
  readonly name: string;
  readonly kind: ObjectKind;
  readonly policy: string | null;
  readonly operatorPolicy: string | null;
}

/** A policy's step, with the links it starts and stops (./stepLinks.ts). */
export interface PolicyStep extends Transition {
  readonly action: ChangeAction;
  readonly verify: readonly VerifyObject[];
  readonly links: StepLinks;
}

/** A federation upstream's, upstream set's or shovel's step (./parameters.ts), with the links it starts and stops. */
export interface ParameterStep extends ParameterTransition {
  readonly action: ChangeAction;
  readonly links: StepLinks;
}

export type PlanStep = PolicyStep | ParameterStep;

export const isParameterStep = (s: PlanStep): s is ParameterStep => 'component' in s;

export interface PlanObject {
  readonly vhost: string;
  readonly name: string;
  readonly kind: ObjectKind;
  readonly before: LayerNames;
  readonly after: LayerNames;
  readonly lost: Record<string, unknown>;
  readonly gained: Record<string, unknown>;
  readonly changed: Record<string, [unknown, unknown]>;
  readonly risks: Risk[];
  readonly now: LiveNow | null;
  readonly impact: Impact[];
}

export interface TransitionalLoss {
  readonly vhost: string;
  readonly name: string;
  readonly kind: ObjectKind;
  /** The index in the plan's `changes` (all vhosts, in order) after which it would happen. */
  readonly step: number;
  readonly impact: Impact[];
}

export interface VhostPlan {
  readonly vhost: string;
  readonly brokerVersion: string;
  readonly steps: readonly PlanStep[];
  readonly unchanged: number;
  readonly objects: readonly PlanObject[];
  readonly transitional: readonly TransitionalLoss[];
  readonly unpredictable: readonly Unpredictable[];
  /** When the statistics were read; null when they could not be. */
  readonly sampledAt: string | null;
  readonly notes: readonly string[];
  /** What `lint` finds in the end state and not now, the most severe first. */
  readonly findings: readonly Finding[];
  /** What the loss depends on and could not be read (the queues' statistics): the plan is incomplete. */
  readonly unread?: readonly Unread[];
}

export interface Plan {
  readonly vhosts: readonly VhostPlan[];
  readonly ignored: Readonly<Record<string, number>>;
  /** Every vhost's steps, in order (the `changes` of the --json). */
  readonly changes: readonly PlanStep[];
  readonly unchanged: number;
  readonly impact: ReturnType<typeof impactTotals>;
  /** The queues whose messages the end state removes, or that it deletes. */
  readonly losing: readonly string[];
  readonly transitional: readonly TransitionalLoss[];
  /** Every vhost's new findings (`VhostPlan.findings`), with the vhost. */
  readonly findings: readonly (Finding & { readonly vhost: string })[];
  /** Every vhost's `unread`: not empty, the loss is not known and the plan is no answer (exit 3). */
  readonly unread?: readonly Unread[];
}

export type PlanResult =
  | { readonly status: 'planned'; readonly plan: Plan }
  | { readonly status: 'refused'; readonly problems: readonly string[] }
  | { readonly status: 'not-asked'; readonly why: NotAskedWhy; readonly detail?: string };

export interface PlanOptions {
  readonly prune?: boolean;
  readonly reader?: BacktrackingReader;
  /** Whether `findings` are worked out (default true; the apply job's loss guard weighs the loss alone). */
  readonly findings?: boolean;
}

export function fieldsOf(p: Policy | null): PolicyFields | null {
  return p && { pattern: p.pattern, applyTo: p.applyTo, priority: p.priority, definition: p.definition };
}

/** What a step writes: a policy (of either layer) or a parameter. */
export type Component = 'policy' | 'operator-policy' | ParameterComponent;

export const componentOf = (s: PlanStep): Component =>
  isParameterStep(s) ? s.component : s.layer === 'operator' ? 'operator-policy' : 'policy';

/** What a step writes, in words: `policy`, `operator policy`, `federation upstream`, `shovel`, … */
export const componentWords = (c: Component): string =>
  c === 'policy' ? 'policy' : c === 'operator-policy' ? 'operator policy' : COMPONENT_WORDS[c];

/** A parameter's step as the --json's `changes` has it: its value with every URI masked. */
export interface ParameterChangeJson {
  readonly action: ChangeAction;
  readonly component: ParameterComponent;
  readonly name: string;
  readonly vhost: string;
  readonly before: unknown;
  readonly after: unknown;
  readonly links: LinksJson;
}

/** The links a step starts and stops, as the --json gives them. */
export interface LinksJson {
  readonly start: readonly LinkJson[];
  readonly stop: readonly LinkJson[];
}

/** A step as the --json's `changes`: a policy's as the preview's `change`, with its component; a parameter's, masked. */
export function changeJson(
  s: PlanStep,
): (PreviewChange & { component: Component; name: string; links: LinksJson }) | ParameterChangeJson {
  const links = { start: s.links.start.map(linkJson), stop: s.links.stop.map(linkJson) };
  if (isParameterStep(s))
    return {
      action: s.action,
      component: s.component,
      name: s.name,
      vhost: s.vhost,
      before: s.before && maskUris(s.before.value),
      after: s.after && maskUris(s.after.value),
      links,
    };
  return {
    links,
    action: s.action,
    component: componentOf(s),
    name: s.name,
    policy: s.name,
    vhost: s.vhost,
    operator: s.layer === 'operator',
    before: fieldsOf(s.before),
    after: fieldsOf(s.after),
  };
}

/** A vhost's plan: its `transitional` steps counted within the vhost until planFile counts them across. */
type VhostAnswer =
  | { status: 'planned'; plan: VhostPlan }
  | { status: 'refused'; problems: string[] }
  | { status: 'not-asked'; why: NotAskedWhy; detail?: string };

/** A layer's policies once every change is written. */
function afterChanges(now: readonly Policy[], changes: readonly Transition[], layer: PolicyLayer): Policy[] {
  const mine = changes.filter((t) => t.layer === layer);
  const replaced = new Set(mine.map((t) => t.name));
  return [...now.filter((p) => !replaced.has(p.name)), ...mine.flatMap((t) => (t.after ? [t.after] : []))];
}

const NO_ARGUMENTS: Readonly<Record<string, unknown>> = Object.freeze({});

/** An object's arguments, or one shared empty record for the many that have none. */
function argumentsKept(args: Readonly<Record<string, unknown>>): Readonly<Record<string, unknown>> {
  for (const _ in args) return args;
  return NO_ARGUMENTS;
}

/** Objects checked after a step: at most this many (the apply job reads each). */
export const MAX_VERIFY = 50;

/** A vhost's changes against its policies as the plan reads them (a file's: `changesOf`). */
type ChangesFor = (vhost: string, live: LivePolicies) => ReturnType<typeof changesOf>;
type LivePolicies = Parameters<typeof changesOf>[1] & { readonly version: Parameters<typeof changesOf>[2] };

/** What the plan knows of where its changes come from (a file: where its vhosts came from, what else it declares). */
interface PlanSource {
  /** The sentence refusing a vhost the broker does not have; `missing`: the broker's side of it. */
  readonly missingVhost: (vhost: string, missing: string) => string;
  /**
   * The federation upstreams and sets the file declares beside its policies: they are there once
   * the file is applied whole, so a policy naming one is not missing its target.
   */
  readonly withDeclared?: <T extends FederationNames>(vhost: string, names: T) => T;
  /** The federation upstreams, upstream sets and shovels of the vhost to plan with its policies, and where the broker's are read. */
  readonly parameters?: {
    readonly of: (vhost: string) => readonly FileParameter[];
    readonly broker: ParameterLister;
  };
}

const GIVEN: PlanSource = {
  missingVhost: (_vhost, missing) =>
    `${missing.charAt(0).toUpperCase()}${missing.slice(1)}${/[?.]$/.test(missing) ? '' : '.'}`,
};

async function planVhost(
  changesFor: ChangesFor,
  vhost: string,
  broker: PolicyPlanBroker,
  options: PlanOptions,
  source: PlanSource,
): Promise<VhostAnswer> {
  let found: ReturnType<typeof changesOf> | undefined;
  let inventory: Awaited<ReturnType<typeof openInventory>>;
  // The queues a change reaches: where the changed patterns find too many for a few pages of the
  // name filter, the numbers of these alone are asked once the records are read.
  const reached = new Set<string>();
  const mine = source.parameters?.of(vhost) ?? [];
  // The vhost's parameters: read first when the file has some, else once it is known links may move.
  let live: Parameter[] | null = null;
  try {
    if (source.parameters && mine.length) live = await readParameters(source.parameters.broker, vhost);
    inventory = await openInventory(broker, vhost, {
      live: true,
      plugins: true,
      reachedOf: () => (name) => reached.has(name),
      liveFor: (small) => {
        found = changesFor(vhost, small);
        const changed = found.problems.length ? [] : found.changes.flatMap((t) => [t.before, t.after]);
        const policies = changed.flatMap((p) => (p ? [p] : []));
        return {
          patterns: policies.map((p) => p.pattern),
          federation: [...small.user, ...small.operator, ...policies].some((p) =>
            readsFederation(p.definition),
          ),
        };
      },
    });
  } catch (err) {
    if (codeOf(err) === 'not-found') {
      const { sentence } = await missingVhost(broker, vhost);
      return { status: 'refused', problems: [source.missingVhost(vhost, sentence)] };
    }
    const failed = notAskedBecause(err);
    if (!failed || !(err instanceof Error)) throw err;
    const detail = failed.reason ?? err.message;
    return { status: 'not-asked', why: failed.why, ...(detail ? { detail } : {}) };
  }
  const { version, user, operator } = inventory;
  found ??= changesFor(vhost, inventory);
  if (found.problems.length) {
    await inventory.cancel();
    return { status: 'refused', problems: found.problems };
  }
  const { changes, unchanged } = found;
  if (source.parameters && live === null && linksInvolved(user, changes)) {
    try {
      live = await readParameters(source.parameters.broker, vhost);
    } catch (err) {
      await inventory.cancel();
      const failed = notAskedBecause(err);
      if (!failed || !(err instanceof Error)) throw err;
      return { status: 'not-asked', why: failed.why, detail: failed.reason ?? err.message };
    }
  }
  const params = parameterChangesOf(mine, live ?? [], options.prune ?? false);
  const refused = parameterRefusals(params.changes, mine, inventory.plugins, formatVersion(version));
  if (refused.length) {
    await inventory.cancel();
    return { status: 'refused', problems: refused };
  }
  // The objects a link may serve, when links may move (stepLinks.ts keeps those a federated policy reaches).
  const links = live !== null && linksInvolved(user, [...params.changes, ...changes]);
  const linkCandidates: LinkCandidate[] = [];
  const cache = new PatternCache();
  const touched = touchIndex(changes, version, cache);
  const objects: InventoryObject[] = [];
  // The objects no change reaches, kept for the findings (findings.ts reads the few it needs):
  // what lint reads of each, not the listed queue (its other fields held ~100 MB more at 100,000).
  const untouched: LintObject[] = [];
  const exchanges = new Set<string>();
  try {
    await inventory.each((o) => {
      if (o.kind === 'exchange') exchanges.add(o.name);
      if (links) linkCandidates.push({ name: o.name, kind: o.kind });
      if (!changes.length) return;
      if (touched(o).length > 0) {
        objects.push(o);
        if (o.kind !== 'exchange') reached.add(o.name);
      } else untouched.push({ name: o.name, kind: o.kind, arguments: argumentsKept(o.arguments) });
    });
  } catch (err) {
    await inventory.cancel();
    const failed = notAskedBecause(err);
    if (!failed || !(err instanceof Error)) throw err;
    return { status: 'not-asked', why: failed.why, detail: failed.reason ?? err.message };
  }
  const reading = await inventory.live();
  const sampledAt = reading && !reading.queuesWhy ? reading.sampledAt : null;
  const liveOf = (name: string, kind: ObjectKind): LiveQueue | null =>
    kind === 'exchange' || !reading ? null : (reading.queues.get(name) ?? null);
  const world = worldOf(reading, exchanges);
  const loss: LossContext = {
    world: withoutDeleted(source.withDeclared?.(vhost, world) ?? world, params.changes),
    live: liveOf,
    defaultDeliveryLimit: defaultDeliveryLimit(version),
  };
  // The numbers a finding reads of queues no change reaches, asked then (the reading holds the reached).
  const findingNotes: string[] = [];
  const queueCount = [...objects, ...untouched].filter((o) => o.kind !== 'exchange').length;
  const moreLive = async (names: readonly string[]) => {
    try {
      return await liveOfNames(broker, vhost, names, queueCount);
    } catch (err) {
      findingNotes.push(findingNumbersUnreadWords(names.length, whyFailed(err)));
      return new Map<string, LiveQueue | null>();
    }
  };
  const findings =
    changes.length && options.findings !== false
      ? await newFindings({
          now: buildPolicySet(user, operator, version, cache),
          end: buildPolicySet(
            afterChanges(user, changes, 'user'),
            afterChanges(operator, changes, 'operator'),
            version,
            cache,
          ),
          touched: objects,
          untouched,
          live: reading && !reading.queuesWhy ? reading.queues : null,
          moreLive,
          world: loss.world,
          at: reading ? Date.parse(reading.sampledAt) : Date.now(),
          cache,
          reader: options.reader,
        })
      : [];
  // A policy written twice (deleted, then created again as it is: `recreate`) is written in the
  // order given: the search orders a set that writes each policy once.
  const ordered = writesTwice(changes)
    ? changes
    : chooseOrder({ version, user, operator, changes, objects, loss, cache }).order.map(
        (i) => changes[i] as Transition,
      );

  // The order chosen, simulated step by step: what the plan says.
  const driver = new SequenceDriver({ version, user, operator, steps: ordered, cache });
  for (const o of objects) driver.add(o);
  await Promise.all(driver.simulations.map((s) => settleSimulation(s, options.reader)));
  const results = driver.simulations.map((s) => s.result());
  const lines = timelines(ordered.length, results, version);

  const planObjects: PlanObject[] = [];
  const transitional: TransitionalLoss[] = [];
  const verify: VerifyObject[][] = ordered.map(() => []);
  const last = ordered.length - 1;
  for (const line of lines) {
    const live = liveOf(line.name, line.kind);
    const end = line.states[last] ?? [line.now];
    const ends = end.map((v) => impactAt(line, v, loss));
    const impact = ends[0] ?? impactAt(line, line.now, loss);
    const { lost, gained, changed } = line.end;
    const moved =
      line.policies.now.policy !== line.policies.end.policy ||
      line.policies.now.operatorPolicy !== line.policies.end.operatorPolicy ||
      Object.keys(lost).length + Object.keys(gained).length + Object.keys(changed).length > 0;
    if (moved || impact.length) {
      planObjects.push({
        vhost,
        name: line.name,
        kind: line.kind,
        before: line.policies.now,
        after: line.policies.end,
        lost,
        gained,
        changed,
        risks: line.end.risks,
        now: live && sampledAt ? Object.assign({}, live, { sampledAt }) : null,
        impact,
      });
    }
    // A state is the same one from a step that moves the object until the next that does: its
    // loss is worked out once.
    let seen: StateValues | undefined;
    let extra: ReturnType<typeof lossAgainst> = { impact: [], weight: 0 };
    for (let k = 0; k < last; k++) {
      const state = line.states[k];
      if (!state) continue;
      if (state !== seen) {
        extra = lossAgainst(line, state, ends, loss);
        seen = state;
      }
      if (extra.weight > 0)
        transitional.push({ vhost, name: line.name, kind: line.kind, step: k, impact: extra.impact });
    }
    // The object is moved by more than one step: each step but the last that moves it is checked
    // written on it before the next is written.
    const steps = line.outcomes.map((o) => o.step);
    for (const s of steps.slice(0, -1)) {
      const o = line.outcomes.find((x) => x.step === s)?.outcome;
      const list = verify[s];
      // A tie in either layer (a rename's two policies on the way) has no one name the broker must
      // report: the object is not checked (a verify naming `null` there never passed: the
      // differential, PLAN_SEED=629827, an operator policy edited during a rename).
      if (!o || !list || list.length >= MAX_VERIFY || o.after.candidates || o.unchangedLayer.candidates)
        continue;
      const names =
        o.unchangedLayer.layer === 'operator'
          ? { policy: o.after.policy, operatorPolicy: o.unchangedLayer.policy }
          : { policy: o.unchangedLayer.policy, operatorPolicy: o.after.policy };
      list.push({ name: line.name, kind: line.kind, ...names });
    }
  }
  // Said once per object, by the first step that could not decide it.
  const unpredictable = new Map<string, Unpredictable>();
  for (const r of results) {
    for (const u of r.unpredictable) {
      const key = `${u.kind}:${u.name}`;
      if (!unpredictable.has(key)) unpredictable.set(key, u);
    }
  }
  const notes: string[] = [...params.notes, ...(found.notes ?? []), ...findingNotes];
  // The parameters around the policies: those created or edited first, those deleted last.
  const around = parameterOrder(params.changes);
  const shift = around.first.length;
  const written = [...around.first, ...ordered, ...around.last];
  const moved = links
    ? stepLinks({
        vhost,
        version,
        cache,
        user,
        parameters: live ?? [],
        steps: written,
        objects: linkCandidates,
      })
    : [];
  const linksAt = (i: number) => moved[i] ?? NO_LINKS;
  const parameterSteps = (list: readonly ParameterTransition[], from: number): ParameterStep[] =>
    list.map((t, i) => ({ ...t, action: actionOf(t), links: linksAt(from + i) }));
  if (reading?.queuesWhy) notes.push(`The queues' statistics could not be read (${reading.queuesWhy}).`);
  // Read, and silent on some queue the plan reaches: its messages are not in the loss.
  const withoutStatistics = sampledAt
    ? planObjects.filter((o) => o.kind !== 'exchange' && o.now === null).length
    : 0;
  if (withoutStatistics > 0) notes.push(withoutStatisticsWords(withoutStatistics));
  if (reading?.federationWhy) notes.push(`The federation could not be read (${reading.federationWhy}).`);
  return {
    status: 'planned',
    plan: {
      vhost,
      brokerVersion: formatVersion(version),
      steps: [
        ...parameterSteps(around.first, 0),
        ...ordered.map((t, i) => ({
          ...t,
          action: actionOf(t),
          verify: verify[i] ?? [],
          links: linksAt(shift + i),
        })),
        ...parameterSteps(around.last, shift + ordered.length),
      ],
      unchanged: unchanged + params.unchanged,
      objects: planObjects,
      transitional: transitional.map((t) => ({ ...t, step: t.step + shift })),
      unpredictable: [...unpredictable.values()],
      sampledAt,
      notes,
      findings,
      unread: unreadOf(reading, vhost),
    },
  };
}

/** Whether the changes write one policy more than once. */
function writesTwice(changes: readonly Transition[]): boolean {
  const seen = new Set<string>();
  for (const t of changes) {
    const key = `${t.layer}\u0000${t.name}`;
    if (seen.has(key)) return true;
    seen.add(key);
  }
  return false;
}

/** The plan of the file against the broker, every vhost it names; the first vhost refused or not asked answers for all. */
export function planFile(
  file: DefinitionsFile,
  broker: PlanBroker,
  options: PlanOptions = {},
): Promise<PlanResult> {
  const changesFor: ChangesFor = (vhost, live) => {
    const mine = file.policies.filter((p) => p.policy.vhost === vhost);
    // A vhost the file names only for its upstreams, sets or shovels keeps its policies under
    // --prune, as the parameters of a kind the file does not hold are kept (./parameters.ts).
    const prune = (options.prune ?? false) && (mine.length > 0 || file.origins[vhost]?.by === '--vhost');
    return changesOf(mine, live, live.version, vhost, prune);
  };
  return planVhosts(file.vhosts, changesFor, file.ignored, broker, options, {
    missingVhost: (vhost, missing) => missingVhostWords(file, vhost, missing),
    withDeclared: (vhost, names) => withDeclared(file, vhost, names),
    parameters: { of: (vhost) => file.parameters.filter((p) => p.vhost === vhost), broker },
  });
}

/**
 * The plan of changes given whole rather than read from a file (a time-boxed set's revert,
 * src/workflow/timebox/timebox.ts; a policy re-created): `changesFor` makes each vhost's from its
 * policies as the plan reads them; ordered, previewed and their way weighed as a file's are (a
 * policy written twice, in the order given). `links`: where the vhost's upstreams and shovels are
 * read, so that each step says the links it stops and starts (none read: none said).
 */
export function planChanges(
  vhosts: readonly string[],
  changesFor: (vhost: string, live: LivePolicies) => Transition[],
  broker: PolicyPlanBroker,
  options: PlanOptions = {},
  links?: ParameterLister,
): Promise<PlanResult> {
  const given: ChangesFor = (vhost, live) => ({
    changes: changesFor(vhost, live),
    unchanged: 0,
    problems: [],
  });
  return planVhosts(
    vhosts,
    given,
    {},
    broker,
    options,
    links ? { ...GIVEN, parameters: { of: () => [], broker: links } } : GIVEN,
  );
}

async function planVhosts(
  names: readonly string[],
  changesFor: ChangesFor,
  ignored: Plan['ignored'],
  broker: PolicyPlanBroker,
  options: PlanOptions,
  source: PlanSource,
): Promise<PlanResult> {
  const vhosts: VhostPlan[] = [];
  const problems: string[] = [];
  let offset = 0;
  for (const vhost of names) {
    const answer = await planVhost(changesFor, vhost, broker, options, source);
    if (answer.status === 'not-asked') return answer;
    if (answer.status === 'refused') {
      problems.push(...answer.problems);
      continue;
    }
    const base = offset;
    const transitional = answer.plan.transitional.map((t) => ({ ...t, step: base + t.step }));
    vhosts.push({ ...answer.plan, transitional });
    offset += answer.plan.steps.length;
  }
  if (problems.length) return { status: 'refused', problems };
  const objects = vhosts.flatMap((v) => v.objects);
  return {
    status: 'planned',
    plan: {
      vhosts,
      ignored,
      changes: vhosts.flatMap((v) => v.steps),
      unchanged: vhosts.reduce((n, v) => n + v.unchanged, 0),
      impact: impactTotals(objects.map((o) => o.impact)),
      losing: losingQueues(objects),
      transitional: vhosts.flatMap((v) => v.transitional),
      findings: vhosts.flatMap((v) => v.findings.map((f) => ({ ...f, vhost: v.vhost }))),
      unread: vhosts.flatMap((v) => v.unread ?? []),
    },
  };
}
