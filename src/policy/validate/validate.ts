import { acceptedApplyTo } from '../keys.ts';
import { compilePattern, isAnchored, MAX_PATTERN_BYTES } from '../pattern/pattern.ts';
import { patternErrorWords, pcreSyntaxError, regexEngine } from '../pattern/pcreSyntax.ts';
import type { ChangeAction } from '../simulate/simulate.ts';
import {
  atLeast,
  type BrokerVersion,
  formatVersion,
  MAX_NAME_BYTES,
  type Policy,
  type PolicyLayer,
  utf8Length,
} from '../types.ts';
import type { Problem } from './problem.ts';
import {
  checkDefinition,
  checkScope,
  describeValue,
  inexactNumber,
  inexactNumberWords,
} from './validateDefinition.ts';

/**
 * What is wrong with a proposed policy, said before anything is filed: the broker's own checks
 * (reference section 4 and 7, for the broker's version) plus the bot's rules about names and
 * layers. The broker reports only its first failing check; this reports all of them, each with
 * the field or key it is about. Pure.
 */

export interface ProposedFields {
  readonly pattern: unknown;
  readonly applyTo: unknown;
  readonly priority: unknown;
  readonly definition: unknown;
  /** `edit --set KEY=JSON --unset KEY`: keys of the definition changed or removed, the others kept. */
  readonly definitionPatch: DefinitionPatch;
}

/** Keys set and keys removed, applied to the definition as the broker has it when previewed. */
export interface DefinitionPatch {
  readonly set: Readonly<Record<string, unknown>>;
  readonly unset: readonly string[];
}

/** The definition with the patch applied: the keys set replaced or added, the keys unset removed. */
export function patchDefinition(
  definition: Readonly<Record<string, unknown>>,
  patch: DefinitionPatch,
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...definition, ...patch.set };
  for (const key of patch.unset) delete out[key];
  return out;
}

export interface ValidationInput {
  readonly action: ChangeAction;
  readonly layer: PolicyLayer;
  readonly vhost: string;
  readonly name: string;
  /** create: every field; edit: only the fields given (the rest keep their value); delete: none. */
  readonly fields: Partial<ProposedFields>;
  readonly existing: { readonly user: readonly Policy[]; readonly operator: readonly Policy[] };
  readonly version: BrokerVersion;
  /** Enabled plugins, when known (federation keys exist only with the federation plugin). */
  readonly plugins?: ReadonlySet<string>;
}

export interface Validation {
  readonly ok: boolean;
  /** Any of these and nothing is filed. */
  readonly refusals: Problem[];
  /** Filed all the same; said beside the preview. */
  readonly warnings: Problem[];
  /** The policy as it stands now (edit, delete). */
  readonly current: Policy | null;
  /** The policy as it would be (create, edit), when the fields are well-formed. */
  readonly proposed: Policy | null;
}

const LAYER_WORDS: Readonly<Record<PolicyLayer, string>> = { user: 'policy', operator: 'operator policy' };

/**
 * A policy created with a name over 255 bytes: the bot creates none (the broker itself takes
 * longer ones, 5,000 bytes on 3.10.8, 4.0.5 and 4.3.6, so one that exists can still be edited or
 * deleted). Every path that creates asks this: preview, a change request, plan, import, lint FILE.
 */
export function nameTooLong(action: ChangeAction, name: string): Problem | null {
  if (action !== 'create') return null;
  const bytes = utf8Length(name);
  if (bytes <= MAX_NAME_BYTES) return null;
  return {
    code: 'name-too-long',
    field: 'name',
    message: `The policy name is ${bytes} bytes; names are at most ${MAX_NAME_BYTES} bytes.`,
  };
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function validate(input: ValidationInput): Validation {
  const refusals: Problem[] = [];
  const warnings: Problem[] = [];
  const refuse = (p: Problem) => refusals.push(p);
  const warn = (p: Problem) => warnings.push(p);
  const { action, layer, name, version } = input;
  const words = LAYER_WORDS[layer];
  const mine = layer === 'user' ? input.existing.user : input.existing.operator;
  const theirs = layer === 'user' ? input.existing.operator : input.existing.user;
  const current = mine.find((p) => p.name === name) ?? null;
  const inOther = theirs.find((p) => p.name === name);

  if (name === '') refuse({ code: 'name-empty', field: 'name', message: `A ${words} needs a name.` });
  const long = nameTooLong(action, name);
  if (long) refuse(long);
  if (action === 'create' && current) {
    refuse({
      code: 'name-taken',
      field: 'name',
      message: `A ${words} named ${JSON.stringify(name)} already exists in vhost ${JSON.stringify(input.vhost)}; use edit to change it, or pick another name.`,
    });
  }
  if (action === 'create' && !current && inOther) {
    warn({
      code: 'same-name-other-layer',
      field: 'name',
      message: `An ${layer === 'user' ? 'operator policy' : 'ordinary policy'} is also named ${JSON.stringify(name)}; the two are separate.`,
    });
  }
  if ((action === 'edit' || action === 'delete') && !current && name !== '') {
    refuse(
      inOther
        ? {
            code: 'wrong-layer',
            field: 'name',
            message:
              layer === 'operator'
                ? `${JSON.stringify(name)} is a policy, not an operator policy. A policy cannot move between the two: ${action === 'edit' ? 'delete it and create an operator policy instead' : 'leave out --operator to delete it'}.`
                : `${JSON.stringify(name)} is an operator policy. A policy cannot move between the two: ${action === 'edit' ? 'delete it and create a policy instead' : 'add --operator to delete it'}.`,
          }
        : {
            code: 'no-such-policy',
            field: 'name',
            message: `No ${words} named ${JSON.stringify(name)} in vhost ${JSON.stringify(input.vhost)}.`,
          },
    );
  }
  if (action === 'delete' || (action === 'edit' && !current)) {
    return { ok: refusals.length === 0, refusals, warnings, current, proposed: null };
  }

  const f = input.fields;
  if (
    action === 'edit' &&
    f.pattern === undefined &&
    f.applyTo === undefined &&
    f.priority === undefined &&
    f.definition === undefined &&
    f.definitionPatch === undefined
  ) {
    refuse({
      code: 'nothing-to-change',
      message:
        'An edit needs at least one of --pattern, --apply-to, --priority, --definition, --set or --unset.',
    });
  }
  // An edit keeps what it does not name; a create takes the broker's defaults (apply-to all, priority 0).
  const pattern = f.pattern ?? current?.pattern;
  const applyTo = f.applyTo ?? current?.applyTo ?? 'all';
  const priority = f.priority ?? current?.priority ?? 0;
  let definition = f.definition ?? current?.definition;
  if (f.definitionPatch && isPlainObject(definition)) {
    for (const key of f.definitionPatch.unset) {
      if (!Object.hasOwn(definition, key)) {
        refuse({
          code: 'unset-missing-key',
          field: 'definition',
          key,
          message: `--unset ${key}: the ${words}'s definition has no key ${JSON.stringify(key)} (it has ${Object.keys(definition).join(', ') || 'none'}).`,
        });
      }
    }
    definition = patchDefinition(definition, f.definitionPatch);
  }

  if (typeof pattern !== 'string') {
    refuse({
      code: 'pattern-invalid',
      field: 'pattern',
      message: `The pattern must be text, got ${describeValue(pattern)}.`,
    });
  } else {
    checkPattern(pattern, version, refuse, warn);
  }

  if (typeof applyTo !== 'string' || !(acceptedApplyTo(version) as readonly string[]).includes(applyTo)) {
    const accepted = acceptedApplyTo(version);
    refuse({
      code: 'apply-to-unsupported',
      field: 'apply-to',
      message: `apply-to ${describeValue(applyTo)} is not accepted by RabbitMQ ${formatVersion(version)}; it takes ${accepted.join(', ')}${atLeast(version, 3, 12) ? '' : ' (classic_queues, quorum_queues and streams arrived in 3.12)'}.`,
    });
  }

  if (typeof priority !== 'number' || !Number.isFinite(priority)) {
    refuse({
      code: 'priority-not-number',
      field: 'priority',
      message: `The priority must be a number, got ${describeValue(priority)}.`,
    });
  } else if (inexactNumber(priority) !== undefined) {
    // Past 2^53 a typed number is already rounded: what would be stored is not what was typed.
    refuse({
      code: 'priority-not-number',
      field: 'priority',
      message: inexactNumberWords('The priority', priority),
    });
  }

  let cleanDefinition: Record<string, unknown> | null = null;
  if (!isPlainObject(definition)) {
    refuse({
      code: 'definition-not-object',
      field: 'definition',
      message: `The definition must be a JSON object of keys and values, got ${describeValue(definition)}.`,
    });
  } else if (Object.keys(definition).length === 0) {
    refuse({
      code: 'definition-empty',
      field: 'definition',
      message: 'The definition sets no key: the broker refuses an empty policy.',
    });
  } else {
    cleanDefinition = definition;
    checkDefinition(definition, layer, version, input.plugins, refuse, warn);
    if (typeof applyTo === 'string') checkScope(definition, applyTo, version, warn);
  }

  const ok = refusals.length === 0;
  const proposed =
    ok &&
    typeof pattern === 'string' &&
    typeof applyTo === 'string' &&
    typeof priority === 'number' &&
    cleanDefinition
      ? { vhost: input.vhost, name, pattern, applyTo, priority, definition: cleanDefinition }
      : null;
  return { ok, refusals, warnings, current, proposed };
}

// --- pattern ----------------------------------------------------------------------------------

function checkPattern(
  pattern: string,
  version: BrokerVersion,
  refuse: (p: Problem) => void,
  warn: (p: Problem) => void,
): void {
  const bytes = Buffer.byteLength(pattern, 'utf8');
  const capped = atLeast(version, 4, 3, 2) || (atLeast(version, 4, 2, 8) && !atLeast(version, 4, 3));
  if (capped && bytes > MAX_PATTERN_BYTES) {
    refuse({
      code: 'pattern-too-long',
      field: 'pattern',
      message: `The pattern is ${bytes} bytes; RabbitMQ ${formatVersion(version)} refuses patterns over ${MAX_PATTERN_BYTES} bytes.`,
    });
    return;
  }
  const error = pcreSyntaxError(pattern, regexEngine(version));
  if (error) {
    refuse({
      code: 'pattern-invalid',
      field: 'pattern',
      message: `The broker would refuse this pattern: ${patternErrorWords(pattern, error)}.`,
    });
    return;
  }
  const compiled = compilePattern(pattern);
  if (!compiled.readable) {
    warn({
      code: 'pattern-unreadable',
      field: 'pattern',
      message: `The broker accepts this pattern, but this bot cannot read it (${compiled.why}): objects it may reach are listed as unpredictable, never guessed.`,
    });
  }
  if (!isAnchored(pattern)) {
    warn({
      code: 'pattern-unanchored',
      field: 'pattern',
      message: 'The pattern does not start with ^: it matches every name that merely contains it.',
    });
  }
}
