import * as z from 'zod';
import { InputError, type Instant, parseInstant } from '../core/index.ts';
import { MAX_NAME_BYTES, OBJECT_KINDS, utf8Length } from '../policy/index.ts';
import { usageOf } from './registry.ts';

/**
 * Command words -> a typed command. Shared by Slack (`/rmq …`, `@rmq …`) and the terminal.
 * Every refusal is an InputError that says what to type instead; nothing runs on bad input.
 */

/** `list`: repeatable, every value kept in order (`--set a=1 --set b=2`). */
type FlagKind = 'string' | 'boolean' | 'list';

export interface ParsedArgs {
  readonly positionals: string[];
  readonly flags: Record<string, string | boolean>;
  /** The values of the `list` flags given, in order. */
  readonly lists: Record<string, string[]>;
}

export function parseArgs(
  words: readonly string[],
  spec: Readonly<Record<string, FlagKind>>,
  usage: string,
): ParsedArgs {
  const positionals: string[] = [];
  const flags: Record<string, string | boolean> = {};
  const lists: Record<string, string[]> = {};
  for (let i = 0; i < words.length; i++) {
    const w = words[i] as string;
    if (w === '--') {
      // Everything after `--` is a name, even one that starts with dashes (a queue named --x).
      positionals.push(...words.slice(i + 1));
      break;
    }
    if (!w.startsWith('--')) {
      positionals.push(w);
      continue;
    }
    const eq = w.indexOf('=');
    const name = eq > 0 ? w.slice(2, eq) : w.slice(2);
    const kind = spec[name];
    if (!kind) throw new InputError(`Unknown flag --${name}.`, { usage });
    if (kind === 'list') {
      const value = eq > 0 ? w.slice(eq + 1) : words[++i];
      if (value === undefined) throw new InputError(`--${name} needs a value.`, { usage });
      lists[name] = [...(lists[name] ?? []), value];
      continue;
    }
    if (name in flags) throw new InputError(`--${name} is given twice.`, { usage });
    if (kind === 'boolean') {
      if (eq > 0) throw new InputError(`--${name} takes no value.`, { usage });
      flags[name] = true;
    } else {
      const value = eq > 0 ? w.slice(eq + 1) : words[++i];
      if (value === undefined) throw new InputError(`--${name} needs a value.`, { usage });
      flags[name] = value;
    }
  }
  return { positionals, flags, lists };
}

/** A queue or exchange name: at most 255 UTF-8 bytes, checked before any pattern runs. */
export const ObjectName = z.string().superRefine((s, ctx) => {
  const bytes = utf8Length(s);
  if (bytes > MAX_NAME_BYTES) {
    ctx.addIssue({
      code: 'custom',
      message: `the name is ${bytes} bytes; RabbitMQ names are at most ${MAX_NAME_BYTES} bytes, so it names nothing`,
    });
  }
});

export const Vhost = z.string().min(1, 'the vhost cannot be empty').default('/');

/** zod failure -> one InputError sentence naming the field. */
export function parseWith<T extends z.ZodType>(schema: T, value: unknown, usage: string): z.output<T> {
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  const first = r.error.issues[0];
  const where = first?.path.length ? `--${first.path.join('.')}` : 'input';
  throw new InputError(`${where}: ${first?.message ?? 'invalid'}.`, { usage });
}

const WHICH_USAGE = usageOf('which');

export const WhichInput = z.object({
  name: ObjectName,
  kind: z.enum(OBJECT_KINDS).optional(),
  vhost: Vhost,
  env: z.string().optional(),
});
export type WhichInput = z.output<typeof WhichInput>;

/**
 * What `--vhost` and `--env` are when not given: a Slack channel's defaults (`/rmq use`), or the
 * terminal's (`RMQ_VHOST`). Without either, the vhost is `/` and the environment the first.
 */
export interface FlagDefaults {
  readonly vhost?: string | undefined;
  readonly env?: string | undefined;
}

/** Whether the words give `--name` (as `--name V` or `--name=V`). */
export function givesFlag(words: readonly string[], name: string): boolean {
  const end = words.indexOf('--');
  return (end < 0 ? words : words.slice(0, end)).some((w) => w === `--${name}` || w.startsWith(`--${name}=`));
}

/**
 * `--at TIME` (src/core/instant.ts): the past instant asked about, replayed from the audit trail.
 * A time to come is refused: nothing is recorded after now.
 */
export function atOf(text: string | boolean | undefined, now: Date, usage: string): Instant | undefined {
  if (text === undefined) return undefined;
  if (typeof text !== 'string') throw new InputError('--at needs a TIME.', { usage });
  const at = parseInstant(text, now, '--at', usage);
  if (at.ms > now.getTime())
    throw new InputError(
      `--at ${JSON.stringify(at.written)} is ${at.iso}, in the future: the trail holds only what was${at.form === 'today' ? ' (HH:MM is today, UTC)' : ''}.`,
      { usage },
    );
  return at;
}

export function parseWhich(
  words: readonly string[],
  extra: Readonly<Record<string, FlagKind>> = {},
  defaults: FlagDefaults = {},
  command: 'which' | 'path' = 'which',
  now: Date = new Date(),
): WhichInput & { flags: Record<string, string | boolean>; at?: Instant } {
  const usage = command === 'which' ? WHICH_USAGE : usageOf(command);
  // `--at` is which's alone: the trail answers for the policies, not for the messages `path` reads.
  const { positionals, flags } = parseArgs(
    words,
    {
      kind: 'string',
      vhost: 'string',
      env: 'string',
      ...(command === 'which' ? { at: 'string' } : {}),
      ...extra,
    },
    usage,
  );
  if (positionals.length !== 1) {
    throw new InputError(
      positionals.length === 0
        ? `${command} needs the name of a queue or exchange.`
        : `${command} takes one name, got ${positionals.length}.`,
      { usage },
    );
  }
  const input = parseWith(
    WhichInput,
    {
      name: positionals[0],
      kind: flags.kind,
      vhost: flags.vhost ?? defaults.vhost,
      env: flags.env ?? defaults.env,
    },
    usage,
  );
  const at = atOf(flags.at, now, usage);
  return { ...input, flags, ...(at ? { at } : {}) };
}

/** `--vhost-map FROM=TO`, each as given: the file's vhost FROM read as the broker's TO. */
export interface VhostMapping {
  readonly from: string;
  readonly to: string;
}

/** The `--vhost-map` values -> the mappings, each FROM once; undefined when none is given. */
export function parseVhostMap(
  values: readonly string[] | undefined,
  usage: string,
): VhostMapping[] | undefined {
  if (!values?.length) return undefined;
  const out: VhostMapping[] = [];
  for (const value of values) {
    const eq = value.indexOf('=');
    const from = value.slice(0, eq);
    const to = value.slice(eq + 1);
    if (eq < 0 || from === '' || to === '')
      throw new InputError(
        `--vhost-map takes FROM=TO, the file's vhost and the broker's it is read as (--vhost-map staging=production), got ${JSON.stringify(value)}.`,
        { usage },
      );
    if (out.some((m) => m.from === from))
      throw new InputError(`--vhost-map ${from}=… is given twice: map each vhost of the file once.`, {
        usage,
      });
    out.push({ from, to });
  }
  return out;
}

/** The mappings as the definitions reader takes them. */
export const vhostMapOf = (m: readonly VhostMapping[] | undefined): Map<string, string> | undefined =>
  m?.length ? new Map(m.map((x) => [x.from, x.to])) : undefined;
