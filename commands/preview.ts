import { z } from 'zod';
import { codeOf, InputError } from '../src/errors.ts';
import type { BacktrackingReader } from '../src/patterns/reader.ts';
import { settleSimulation } from '../src/patterns/resolveRead.ts';
import { type PolicyDiff, policyDiff } from '../src/policy/diff.ts';
import {
  type ObjectOutcome,
  type PolicyChange,
  Simulation,
  type Unpredictable,
} from '../src/policy/simulate.ts';
import type { Definition, Policy, PolicyLayer } from '../src/policy/types.ts';
import { formatVersion, MAX_NAME_BYTES, utf8Length } from '../src/policy/types.ts';
import { type Problem, type ProposedFields, validate } from '../src/policy/validate.ts';
import { brokerReason } from '../src/rabbit/errors.ts';
import { type InventorySource, openInventory } from '../src/rabbit/inventory.ts';
import { FOLDED_QUOTES_NOTE, readDefinition } from './definition.ts';
import { closeNames } from './didYouMean.ts';
import { type FlagDefaults, PREVIEW_USAGE, parseArgs, parseWith, Vhost } from './parse.ts';
import { type PreviewSummary, summarize } from './previewSummary.ts';
import { missingVhost, type VhostLister } from './vhosts.ts';

/**
 * `preview delete|create|edit POLICY …`: what the change would do to every object of the vhost,
 * before anything is filed. Words -> input (refused with exit 2 when malformed) -> the broker's
 * policies and version -> validation (refused with the reasons) -> the inventory, streamed ->
 * the simulation -> the result per INTERFACE.md. Writes nothing.
 */

export type { PREVIEW_USAGE };

const ACTIONS = ['create', 'edit', 'delete'] as const;
type Action = (typeof ACTIONS)[number];

export interface PreviewInput {
  readonly action: Action;
  readonly name: string;
  readonly layer: PolicyLayer;
  readonly vhost: string;
  readonly env?: string | undefined;
  /** Only the fields given: for an edit, the rest keep their current value. */
  readonly fields: Partial<ProposedFields>;
  /** How the words were read where that differs from as typed (curly quotes folded). */
  readonly notes?: readonly string[];
}

const FLAGS = {
  pattern: 'string',
  'apply-to': 'string',
  priority: 'string',
  definition: 'string',
  operator: 'boolean',
  vhost: 'string',
  env: 'string',
} as const;

const Words = z.object({ vhost: Vhost, env: z.string().min(1).optional() });

/**
 * Words after `preview` -> a typed input. Every malformed piece is an InputError (exit 2).
 * `extra` flags (a change request's `--reason`, `--thread`) come back in `extra`; with
 * `fieldsOptional`, a create without `--pattern`/`--definition` is not refused (a form asks them).
 */
export function parsePreview(
  words: readonly string[],
  extra: Readonly<Record<string, 'string' | 'boolean'>> = {},
  options: { fieldsOptional?: boolean; defaults?: FlagDefaults } = {},
): PreviewInput & { readonly extra?: Readonly<Record<string, string | boolean>> } {
  const { positionals, flags } = parseArgs(words, { ...FLAGS, ...extra }, PREVIEW_USAGE);
  const [action, name, ...rest] = positionals;
  if (action === undefined || !(ACTIONS as readonly string[]).includes(action)) {
    throw new InputError(
      action === undefined
        ? 'preview needs an action: delete, create or edit.'
        : `Unknown action ${JSON.stringify(action)}: use delete, create or edit.`,
      PREVIEW_USAGE,
    );
  }
  if (name === undefined || name === '')
    throw new InputError(`preview ${action} needs the name of a policy.`, PREVIEW_USAGE);
  if (rest.length > 0)
    throw new InputError(`preview ${action} takes one policy name, got ${rest.length + 1}.`, PREVIEW_USAGE);
  const bytes = utf8Length(name);
  if (action === 'create' && bytes > MAX_NAME_BYTES) {
    // The broker itself takes longer policy names (3.10.8 accepted 256 bytes), so one that
    // exists can still be previewed for an edit or a delete; the bot creates none that long.
    throw new InputError(
      `The policy name is ${bytes} bytes; names are at most ${MAX_NAME_BYTES} bytes.`,
      PREVIEW_USAGE,
    );
  }
  const { vhost, env } = parseWith(
    Words,
    { vhost: flags.vhost ?? options.defaults?.vhost, env: flags.env ?? options.defaults?.env },
    PREVIEW_USAGE,
  );

  const fields: { -readonly [K in keyof ProposedFields]?: ProposedFields[K] } = {};
  if (typeof flags.pattern === 'string') fields.pattern = flags.pattern;
  if (typeof flags['apply-to'] === 'string') fields.applyTo = flags['apply-to'];
  if (typeof flags.priority === 'string') fields.priority = parsePriority(flags.priority);
  const notes: string[] = [];
  if (typeof flags.definition === 'string') {
    const read = readDefinition(flags.definition);
    fields.definition = read.definition;
    if (read.foldedQuotes) notes.push(FOLDED_QUOTES_NOTE);
  }

  if (action === 'delete') {
    const given = Object.keys(fields);
    if (given.length > 0) {
      throw new InputError(
        `preview delete takes no ${given.map((f) => (f === 'applyTo' ? '--apply-to' : `--${f}`)).join(', ')}.`,
        PREVIEW_USAGE,
      );
    }
  }
  if (action === 'create' && !options.fieldsOptional) {
    if (fields.pattern === undefined) throw new InputError('preview create needs --pattern.', PREVIEW_USAGE);
    if (fields.definition === undefined)
      throw new InputError('preview create needs --definition, a JSON object.', PREVIEW_USAGE);
  }
  return {
    action: action as Action,
    name,
    layer: flags.operator === true ? 'operator' : 'user',
    vhost,
    env,
    fields,
    notes,
    ...(Object.keys(extra).length
      ? { extra: Object.fromEntries(Object.entries(flags).filter(([k]) => k in extra)) }
      : {}),
  };
}

function parsePriority(text: string): number {
  const n = text.trim() === '' ? Number.NaN : Number(text);
  if (!Number.isFinite(n))
    throw new InputError(`--priority must be a number, got ${JSON.stringify(text)}.`, PREVIEW_USAGE);
  return n;
}

// --- the result ---------------------------------------------------------------------------

export interface PolicyFields {
  pattern: string;
  applyTo: string;
  priority: number;
  definition: Definition;
}

export interface PreviewChange {
  action: Action;
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
  objects: ObjectOutcome[];
  unpredictable: Unpredictable[];
  summary: PreviewSummary;
  /** Field by field, for the audit. */
  diff: PolicyDiff;
  /** Requests made and time taken, for the curious and the benchmark. */
  ms: number;
}

export interface PreviewRefused extends Base {
  status: 'refused';
  refusals: Problem[];
  /** The policy named does not exist: the vhost's closest policy names (both layers), at most three. */
  didYouMean?: string[];
}

export type NotAskedWhy =
  | 'unreachable'
  | 'timeout'
  | 'unauthorized'
  | 'forbidden'
  | 'broker-error'
  | 'refused-by-broker'
  | 'too-large'
  | 'missing-vhost';

export interface PreviewNotAsked extends Base {
  status: 'not-asked';
  why: NotAskedWhy;
  detail?: string;
  /** With `missing-vhost`: vhosts the identity can see whose names are close to the one typed. */
  closeVhosts?: string[];
}

export type PreviewResult = PreviewAnswer | PreviewRefused | PreviewNotAsked;

/** What `preview` needs of the management API. ManagementClient satisfies it. */
export type PreviewBroker = InventorySource & VhostLister;

function fieldsOf(p: Policy | null): PolicyFields | null {
  return p && { pattern: p.pattern, applyTo: p.applyTo, priority: p.priority, definition: p.definition };
}

const NOT_ASKED: Readonly<Record<string, NotAskedWhy>> = {
  unreachable: 'unreachable',
  timeout: 'timeout',
  unauthorized: 'unauthorized',
  forbidden: 'forbidden',
  'broker-error': 'broker-error',
  'bad-response': 'broker-error',
  'refused-by-broker': 'refused-by-broker',
  'too-large': 'too-large',
  'not-found': 'missing-vhost',
};

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
    const code = codeOf(err);
    const why = code === undefined ? undefined : NOT_ASKED[code];
    if (!why || !(err instanceof Error)) throw err;
    if (why === 'missing-vhost') {
      const { sentence, close } = await missingVhost(broker, input.vhost);
      return { status: 'not-asked', change, notes, warnings: [], why, detail: sentence, closeVhosts: close };
    }
    const detail = brokerReason(err) ?? err.message;
    return { status: 'not-asked', change, notes, warnings: [], why, ...(detail ? { detail } : {}) };
  };

  let inventory: Awaited<ReturnType<typeof openInventory>>;
  try {
    inventory = await openInventory(broker, input.vhost);
  } catch (err) {
    return await notAsked(err);
  }
  const { version, user, operator } = inventory;
  const brokerVersion = formatVersion(version);
  const validation = validate({
    action: input.action,
    layer: input.layer,
    vhost: input.vhost,
    name: input.name,
    fields: input.fields,
    existing: { user, operator },
    version,
  });
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
  const simulation = new Simulation({ version, user, operator, change: policyChange });
  try {
    await inventory.each((o) => simulation.add(o));
  } catch (err) {
    return await notAsked(err);
  }
  await settleSimulation(simulation, options.reader);
  const simulated = simulation.result();
  const { objects, unpredictable } = simulated;
  const summary = summarize(simulated, policyChange);
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

/** The `--json` document: INTERFACE.md's keys first, then the rest. */
export function previewJson(r: PreviewResult): Record<string, unknown> {
  switch (r.status) {
    case 'answered':
      return {
        change: r.change,
        ...(r.notes?.length ? { notes: r.notes } : {}),
        objects: r.objects,
        unpredictable: r.unpredictable,
        summary: r.summary,
        warnings: r.warnings,
        diff: r.diff,
        brokerVersion: r.brokerVersion,
        ms: r.ms,
      };
    case 'refused':
      return {
        error: { code: 'refused', message: r.refusals.map((p) => p.message).join(' ') },
        change: r.change,
        refusals: r.refusals,
        warnings: r.warnings,
        ...(r.didYouMean ? { didYouMean: r.didYouMean } : {}),
        ...(r.brokerVersion ? { brokerVersion: r.brokerVersion } : {}),
      };
    case 'not-asked':
      return {
        error: { code: r.why, message: r.detail ?? r.why },
        change: r.change,
      };
  }
}

/** Exit code per INTERFACE.md: 0 answered, 2 refused (or a vhost that does not exist), 3 broker not asked. */
export function previewExitCode(r: PreviewResult): number {
  if (r.status === 'answered') return 0;
  if (r.status === 'refused' || r.why === 'missing-vhost') return 2;
  return 3;
}
