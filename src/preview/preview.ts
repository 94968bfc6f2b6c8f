import { closeNames, codeOf, missingVhost, type VhostLister } from '../core/index.ts';
import type { BacktrackingReader } from '../patterns/index.ts';
import { settleSimulation } from '../patterns/index.ts';
import { readsFederation } from '../policy/impact/index.ts';
import type { Definition, Policy, PolicyLayer } from '../policy/index.ts';
import { formatVersion, type PolicyDiff, policyDiff } from '../policy/index.ts';
import { CompiledPattern, nameView } from '../policy/pattern/index.ts';
import { type PolicyChange, Simulation, type Unpredictable } from '../policy/simulate/index.ts';
import type { Problem } from '../policy/validate/index.ts';
import { type ProposedFields, type Validation, validate } from '../policy/validate/index.ts';
import {
  type Inventory,
  type InventorySource,
  type NotAskedWhy,
  notAskedBecause,
  openInventory,
  type Unread,
  unreadOf,
} from '../rabbit/index.ts';
import { type ImpactSummary, type PreviewObject, withImpact } from './impact.ts';
import { type PreviewSummary, SUMMARY_NAMES, summarize } from './summary.ts';

/**
 * The preview service: what a change would do to every object of the vhost, before anything is
 * filed. A typed input -> the broker's policies and version -> validation (refused with the
 * reasons) -> the inventory, streamed -> the simulation -> the result (docs/json.md,
 * `preview … --json`). Writes nothing. For the `preview` command, src/commands/preview/preview.ts
 * reads the words into the input and the front doors (CLI, Slack) call this; the workflow (filing a request) and the apply worker
 * (the preview again, on the broker as it is at the write) call it with an input of their own.
 */

export const PREVIEW_ACTIONS = ['create', 'edit', 'delete'] as const;
export type PreviewAction = (typeof PREVIEW_ACTIONS)[number];

export interface PreviewInput {
  readonly action: PreviewAction;
  readonly name: string;
  readonly layer: PolicyLayer;
  readonly vhost: string;
  readonly env?: string | undefined;
  /** Only the fields given: for an edit, the rest keep their current value. */
  readonly fields: Partial<ProposedFields>;
  /** How the words were read where that differs from as typed (curly quotes folded). */
  readonly notes?: readonly string[];
}

// --- the result ---------------------------------------------------------------------------

export interface PolicyFields {
  pattern: string;
  applyTo: string;
  priority: number;
  definition: Definition;
}

export interface PreviewChange {
  action: PreviewAction;
  policy: string;
  vhost: string;
  operator: boolean;
  before: PolicyFields | null;
  after: PolicyFields | null;
}

interface Base {
  change: PreviewChange;
  /** How the input was read where that differs from as typed; shown with the proposed policy. */
  notes?: readonly string[];
  brokerVersion?: string;
  warnings: Problem[];
}

export interface PreviewAnswer extends Base {
  status: 'answered';
  brokerVersion: string;
  /** Each object the change touches, with what is there now and what the change does to it. */
  objects: PreviewObject[];
  unpredictable: Unpredictable[];
  summary: PreviewSummary & { impact: ImpactSummary };
  /** Field by field, for the audit. */
  diff: PolicyDiff;
  /** Requests made and time taken, for the curious and the benchmark. */
  ms: number;
  /**
   * What the loss depends on and could not be read (the queues' statistics): the preview is
   * incomplete, no answer (exit 3). Absent when all was read.
   */
  unread?: Unread[];
}

export interface PreviewRefused extends Base {
  status: 'refused';
  refusals: Problem[];
  /** The policy named does not exist: the vhost's closest policy names (both layers), at most three. */
  didYouMean?: string[];
}

export type PreviewNotAskedWhy = NotAskedWhy | 'missing-vhost';

export interface PreviewNotAsked extends Base {
  status: 'not-asked';
  why: PreviewNotAskedWhy;
  detail?: string;
  /** With `missing-vhost`: vhosts the identity can see whose names are close to the one typed. */
  closeVhosts?: string[];
  /** With `missing-vhost`: the identity may not see the vhost (not an administrator), `MissingVhost`. */
  vhostHiddenFrom?: string;
}

export type PreviewResult = PreviewAnswer | PreviewRefused | PreviewNotAsked;

/** What `preview` needs of the management API. ManagementClient satisfies it. */
export type PreviewBroker = InventorySource & VhostLister;

function fieldsOf(p: Policy | null): PolicyFields | null {
  return p && { pattern: p.pattern, applyTo: p.applyTo, priority: p.priority, definition: p.definition };
}

export interface PreviewOptions {
  /** The backtracking engine for lookaround patterns; default the process's. */
  readonly reader?: BacktrackingReader;
}

export async function preview(
  input: PreviewInput,
  broker: PreviewBroker,
  options: PreviewOptions = {},
): Promise<PreviewResult> {
  const started = performance.now();
  const change: PreviewChange = {
    action: input.action,
    policy: input.name,
    vhost: input.vhost,
    operator: input.layer === 'operator',
    before: null,
    after: null,
  };
  const notes = input.notes ?? [];
  const notAsked = async (err: unknown): Promise<PreviewNotAsked> => {
    if (codeOf(err) === 'not-found' && err instanceof Error) {
      const { sentence, close, hiddenFrom } = await missingVhost(broker, input.vhost);
      return {
        status: 'not-asked',
        change,
        notes,
        warnings: [],
        why: 'missing-vhost',
        detail: sentence,
        closeVhosts: [...close],
        ...(hiddenFrom === undefined ? {} : { vhostHiddenFrom: hiddenFrom }),
      };
    }
    const failed = notAskedBecause(err);
    if (!failed || !(err instanceof Error)) throw err;
    const detail = failed.reason ?? err.message;
    return {
      status: 'not-asked',
      change,
      notes,
      warnings: [],
      why: failed.why,
      ...(detail ? { detail } : {}),
    };
  };

  let inventory: Awaited<ReturnType<typeof openInventory>>;
  let keepLive: ((name: string) => boolean) | undefined;
  let validation: Validation | undefined;
  const validated = (small: Pick<Inventory, 'version' | 'user' | 'operator' | 'plugins'>) =>
    validate({
      action: input.action,
      layer: input.layer,
      vhost: input.vhost,
      name: input.name,
      fields: input.fields,
      existing: { user: small.user, operator: small.operator },
      version: small.version,
      ...(small.plugins ? { plugins: small.plugins } : {}),
    });
  try {
    inventory = await openInventory(broker, input.vhost, {
      live: true,
      plugins: input.action !== 'delete',
      keepLive: () => keepLive,
      // The live numbers of the queues the changed policy finds, as it is or as proposed: the
      // only ones a change can move; the federation where a policy, or the proposed one, names
      // an upstream. Neither when the change is refused.
      liveFor: (small) => {
        validation = validated(small);
        const { ok, current, proposed } = validation;
        if (!ok) return { patterns: [], federation: false };
        const changed = [current, proposed].flatMap((p) => (p ? [p] : []));
        return {
          patterns: changed.map((p) => p.pattern),
          federation: [...small.user, ...small.operator, ...changed].some((p) =>
            readsFederation(p.definition),
          ),
        };
      },
    });
  } catch (err) {
    return await notAsked(err);
  }
  const { version, user, operator } = inventory;
  const brokerVersion = formatVersion(version);
  validation ??= validated(inventory);
  change.before = fieldsOf(validation.current);
  change.after = fieldsOf(validation.proposed);
  if (!validation.ok) {
    await inventory.cancel();
    return {
      status: 'refused',
      change,
      notes,
      ...policySuggestions(validation.refusals, input.name, [...user, ...operator]),
      brokerVersion,
      warnings: validation.warnings,
      refusals: validation.refusals,
    };
  }
  const policyChange: PolicyChange = {
    action: input.action,
    layer: input.layer,
    before: validation.current,
    after: validation.proposed,
  };
  keepLive = liveWanted(policyChange);
  const simulation = new Simulation({ version, user, operator, change: policyChange });
  const exchanges = new Set<string>();
  try {
    await inventory.each((o) => {
      if (o.kind === 'exchange') exchanges.add(o.name);
      simulation.add(o);
    });
  } catch (err) {
    await inventory.cancel();
    return await notAsked(err);
  }
  await settleSimulation(simulation, options.reader);
  const simulated = simulation.result();
  const { unpredictable } = simulated;
  const reading = await inventory.live();
  const unread = unreadOf(reading, input.vhost);
  const live = withImpact(simulated.objects, reading, exchanges, version, SUMMARY_NAMES);
  const objects = live.objects;
  const summary = { ...summarize(simulated, policyChange, version), impact: live.summary };
  return {
    status: 'answered',
    change,
    notes,
    brokerVersion,
    warnings: validation.warnings,
    objects,
    unpredictable,
    summary,
    diff: policyDiff(policyChange),
    ms: Math.round(performance.now() - started),
    ...(unread.length ? { unread } : {}),
  };
}

/** A policy name that names nothing: the closest of the vhost's policies (both layers). */
function policySuggestions(refusals: readonly Problem[], typed: string, policies: readonly Policy[]) {
  if (!refusals.some((p) => p.code === 'no-such-policy')) return {};
  const names = closeNames(
    typed,
    policies.map((p) => p.name),
  );
  return names.length ? { didYouMean: names } : {};
}

/**
 * Which queues' live numbers a preview can need: a change moves only objects the changed policy's
 * pattern finds, as it is or as proposed, so only those (and those it might find: a pattern not
 * readable at once) are kept of the live listing; a preview moving 80 of 100,000 queues then
 * holds 80 queues' numbers, not 100,000 (measured: their garbage collection was ~75 ms a preview).
 */
function liveWanted(change: PolicyChange): (name: string) => boolean {
  const patterns = [change.before, change.after].flatMap((p) => (p ? [new CompiledPattern(p.pattern)] : []));
  return (name) => {
    const view = nameView(name);
    return patterns.some((p) => p.match(view) !== false);
  };
}
