import { InputError } from './errors.ts';

/**
 * TIME as people type it, for `history --since/--until` (and `--at` later): ISO 8601 with an
 * offset (`2026-12-04T03:12:00Z`, `2026-12-04T04:12+01:00`), `HH:MM` (today, UTC), or a time
 * before now (`-2h`, `-30m`, `-1d`). Pure: `now` is given. Anything else is refused naming the
 * three forms; an ISO time without an offset too (whose clock would it be?).
 */

export type InstantForm = 'iso' | 'today' | 'relative';

export interface Instant {
  /** Milliseconds since the epoch. */
  readonly ms: number;
  /** The instant as ISO 8601, UTC (`…Z`). */
  readonly iso: string;
  /** How it was written: `today` is an `HH:MM` read as today, UTC (the answer says so). */
  readonly form: InstantForm;
  /** As typed. */
  readonly written: string;
}

export const TIME_FORMS =
  'an ISO 8601 time with its offset (2026-12-04T03:12:00Z or 2026-12-04T04:12:00+01:00), HH:MM (today, UTC), or a time before now (-2h, -30m, -1d)';

const ISO =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(?:([Zz])|([+-])(\d{2}):?(\d{2}))?$/;
const HHMM = /^(\d{1,2}):(\d{2})$/;
const RELATIVE = /^-(\d{1,6})([mhd])$/;
const UNIT_MS = { m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** `flag`: the flag it came with (`--since`), to name in a refusal. */
export function parseInstant(text: string, now: Date, flag: string, usage?: string): Instant {
  const written = text.trim();
  const refuse = (why: string): never => {
    throw new InputError(
      `${flag} ${JSON.stringify(text)}: ${why}; TIME is ${TIME_FORMS}.`,
      usage ? { usage } : {},
    );
  };
  const iso = ISO.exec(written);
  if (iso) {
    const [, y, mo, d, h, mi, s = '0', frac = '', z, sign, oh, om] = iso;
    if (!z && !sign) refuse('an ISO time needs its offset (Z for UTC, or +01:00)');
    const n = (v: string | undefined) => Number(v);
    const parts = [n(y), n(mo), n(d), n(h), n(mi), n(s)] as const;
    const ms = Math.floor(Number(`0.${frac || '0'}`) * 1000);
    const local = Date.UTC(parts[0], parts[1] - 1, parts[2], parts[3], parts[4], parts[5], ms);
    const back = new Date(local);
    if (
      back.getUTCFullYear() !== parts[0] ||
      back.getUTCMonth() !== parts[1] - 1 ||
      back.getUTCDate() !== parts[2] ||
      parts[3] > 23 ||
      parts[4] > 59 ||
      parts[5] > 59
    )
      refuse('no such date or time');
    const offset = sign ? (sign === '-' ? -1 : 1) * (n(oh) * 60 + n(om)) : 0;
    if (sign && (n(oh) > 23 || n(om) > 59)) refuse('no such offset');
    return at(local - offset * 60_000, 'iso', written);
  }
  const hm = HHMM.exec(written);
  if (hm) {
    const h = Number(hm[1]);
    const m = Number(hm[2]);
    if (h > 23 || m > 59) refuse('no such time of day');
    const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate(), h, m);
    return at(today, 'today', written);
  }
  const rel = RELATIVE.exec(written);
  if (rel)
    return at(now.getTime() - Number(rel[1]) * UNIT_MS[rel[2] as keyof typeof UNIT_MS], 'relative', written);
  if (/^\d{4}-\d{2}-\d{2}$/.test(written)) refuse('a date alone has no time and no offset');
  if (/^\+?\d+[mhd]$/.test(written)) refuse('a relative time counts back from now: write it with a minus');
  return refuse('not a time the bot reads');
}

function at(ms: number, form: InstantForm, written: string): Instant {
  return { ms, iso: new Date(ms).toISOString(), form, written };
}

/** An instant as the answer says it: the ISO time, and "today, UTC" for an `HH:MM`. */
export function instantWords(i: Instant): string {
  return i.form === 'today' ? `${i.written} (today, UTC: ${i.iso})` : i.iso;
}
