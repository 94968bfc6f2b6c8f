import * as z from 'zod';
import { InputError } from '../../core/index.ts';
import { nameTooLong, type ProposedFields } from '../../policy/validate/index.ts';
import {
  objectJson,
  PREVIEW_ACTIONS,
  type PreviewAction,
  type PreviewInput,
  type PreviewResult,
} from '../../preview/index.ts';
import { quoted } from '../../text/index.ts';
import { FOLDED_QUOTES_NOTE, readDefinition, readSetting, SETTING_EXAMPLE } from '../definition.ts';
import { type FlagDefaults, parseArgs, parseWith, Vhost } from '../parse.ts';
import { usageOf } from '../registry.ts';
import { incompleteJson, incompleteWords } from '../words.ts';

/**
 * `preview delete|create|edit POLICY …`: the words -> the preview service's input (refused with
 * exit 2 when malformed); the service (src/preview/) answers; its result as the `--json`
 * document and the exit code, per docs/json.md and docs/commands.md.
 */

const FLAGS = {
  pattern: 'string',
  'apply-to': 'string',
  priority: 'string',
  definition: 'string',
  set: 'list',
  unset: 'list',
  operator: 'boolean',
  vhost: 'string',
  env: 'string',
} as const;

const Words = z.object({ vhost: Vhost, env: z.string().min(1).optional() });

/**
 * Words after `preview` -> a typed input. Every malformed piece is an InputError (exit 2).
 * `extra` flags (a change request's `--reason`, `--thread`) come back in `extra`; with
 * `fieldsOptional`, a create without `--pattern`/`--definition` is not refused (a form asks them).
 * With `usage`, the words are a change request's (`create NAME …`, Slack): its refusals name the
 * action as typed there and carry that usage line.
 */
export function parsePreview(
  words: readonly string[],
  extra: Readonly<Record<string, 'string' | 'boolean'>> = {},
  options: { fieldsOptional?: boolean; defaults?: FlagDefaults; usage?: string } = {},
): PreviewInput & { readonly extra?: Readonly<Record<string, string | boolean>> } {
  const usage = options.usage ?? usageOf('preview');
  /** The action as the user typed it: `preview delete`, or `delete` for a change request. */
  const typed = (action: string) => (options.usage ? action : `preview ${action}`);
  const { positionals, flags, lists } = parseArgs(words, { ...FLAGS, ...extra }, usage);
  const [action, name, ...rest] = positionals;
  if (action === undefined || !(PREVIEW_ACTIONS as readonly string[]).includes(action)) {
    throw new InputError(
      action === undefined
        ? 'preview needs an action: delete, create or edit.'
        : `Unknown action ${JSON.stringify(action)}: use delete, create or edit.`,
      { usage },
    );
  }
  if (name === undefined || name === '')
    throw new InputError(`${typed(action)} needs the name of a policy.`, { usage });
  if (rest.length > 0)
    throw new InputError(`${typed(action)} takes one policy name, got ${rest.length + 1}.`, {
      usage,
    });
  // Refused before the broker is asked; the preview's validation says the same (validate.ts).
  const long = nameTooLong(action as PreviewAction, name);
  if (long) throw new InputError(long.message, { usage });
  const { vhost, env } = parseWith(
    Words,
    { vhost: flags.vhost ?? options.defaults?.vhost, env: flags.env ?? options.defaults?.env },
    usage,
  );

  const fields: { -readonly [K in keyof ProposedFields]?: ProposedFields[K] } = {};
  if (typeof flags.pattern === 'string') fields.pattern = flags.pattern;
  if (typeof flags['apply-to'] === 'string') fields.applyTo = flags['apply-to'];
  if (typeof flags.priority === 'string') fields.priority = parsePriority(flags.priority, usage);
  const notes: string[] = [];
  if (typeof flags.definition === 'string') {
    const read = readDefinition(flags.definition);
    fields.definition = read.definition;
    if (read.foldedQuotes) notes.push(FOLDED_QUOTES_NOTE);
  }
  const patch = definitionPatchOf(lists.set ?? [], lists.unset ?? [], usage);
  if (patch) {
    if (action !== 'edit')
      throw new InputError(
        `${typed(action)} takes no --set or --unset: they change one key of a policy an edit keeps.`,
        {
          usage,
        },
      );
    if (fields.definition !== undefined)
      throw new InputError(
        '--set and --unset change the definition the policy has: give them without --definition.',
        {
          usage,
        },
      );
    fields.definitionPatch = patch;
  }

  if (action === 'delete') {
    const given = Object.keys(fields);
    if (given.length > 0) {
      throw new InputError(
        `${typed('delete')} takes no ${given.map((f) => (f === 'applyTo' ? '--apply-to' : `--${f}`)).join(', ')}.`,
        { usage },
      );
    }
  }
  if (action === 'create' && !options.fieldsOptional) {
    if (fields.pattern === undefined) throw new InputError(`${typed('create')} needs --pattern.`, { usage });
    if (fields.definition === undefined)
      throw new InputError(`${typed('create')} needs --definition, a JSON object.`, { usage });
  }
  return {
    action: action as PreviewAction,
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

/** `--set KEY=JSON` and `--unset KEY` -> the patch; undefined when neither is given. */
function definitionPatchOf(sets: readonly string[], unsets: readonly string[], usage: string) {
  if (sets.length === 0 && unsets.length === 0) return undefined;
  const set: Record<string, unknown> = {};
  for (const text of sets) {
    const { key, value } = readSetting(text);
    if (Object.hasOwn(set, key)) throw new InputError(`--set ${key} is given twice.`, { usage });
    // Defined, not assigned: `set.__proto__ = v` would set the prototype and the key would vanish
    // instead of being refused as one no broker knows.
    Object.defineProperty(set, key, { value, enumerable: true, writable: true, configurable: true });
  }
  const unset: string[] = [];
  for (const raw of unsets) {
    const key = raw.trim();
    if (key === '')
      throw new InputError('--unset needs the key to remove.', { usage, hint: SETTING_EXAMPLE });
    if (Object.hasOwn(set, key))
      throw new InputError(`--set and --unset both name ${key}: keep one.`, { usage });
    if (!unset.includes(key)) unset.push(key);
  }
  return { set, unset };
}

function parsePriority(text: string, usage: string): number {
  const n = text.trim() === '' ? Number.NaN : Number(text);
  if (!Number.isFinite(n))
    throw new InputError(`--priority must be a number, got ${JSON.stringify(text)}.`, { usage });
  return n;
}

/** The `--json` document: docs/json.md's keys first, then the rest. */
export function previewJson(r: PreviewResult): Record<string, unknown> {
  switch (r.status) {
    case 'answered':
      return {
        change: r.change,
        ...(r.notes?.length ? { notes: r.notes } : {}),
        objects: r.objects.map(objectJson),
        unpredictable: r.unpredictable,
        impact: r.summary.impact.totals,
        summary: r.summary,
        warnings: r.warnings,
        diff: r.diff,
        brokerVersion: r.brokerVersion,
        ms: r.ms,
        ...(r.unread?.length ? { incomplete: incompleteJson(r.unread, 'loss', quoted) } : {}),
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

/**
 * The sentence a preview that could not read what its loss depends on leads with (both views;
 * `show` formats a vhost's name), or undefined when it read all.
 */
export function previewIncompleteWords(r: PreviewResult, show: (name: string) => string): string | undefined {
  return r.status === 'answered' && r.unread?.length ? incompleteWords(r.unread, 'loss', show) : undefined;
}

/**
 * Exit code per docs/commands.md: 0 answered, 2 refused (or a vhost that does not exist), 3 broker
 * not asked, or what the loss depends on not read (an incomplete preview).
 */
export function previewExitCode(r: PreviewResult): number {
  if (r.status === 'answered') return r.unread?.length ? 3 : 0;
  if (r.status === 'refused' || r.why === 'missing-vhost') return 2;
  return 3;
}
