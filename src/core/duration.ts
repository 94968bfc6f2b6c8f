/**
 * Durations as people type them: `20s`, `30m`, `2h`, `1d`, `1h30m`, `500ms`. Pure.
 */

const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const PART = /(\d+(?:\.\d+)?)(ms|s|m|h|d)/y;

/** Milliseconds, or undefined when the text is not a duration (a bare number is not: say the unit). */
export function parseDuration(text: string): number | undefined {
  const t = text.trim().toLowerCase();
  if (t === '') return undefined;
  let total = 0;
  PART.lastIndex = 0;
  while (PART.lastIndex < t.length) {
    const at = PART.lastIndex;
    const m = PART.exec(t);
    if (!m || m.index !== at) return undefined;
    total += Number(m[1]) * (UNIT_MS[m[2] as string] as number);
  }
  return Math.round(total);
}

/** `2h`, `1h 30m`, `20s`: the largest units, down to seconds. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  let rest = Math.round(ms / 1000);
  const parts: string[] = [];
  for (const [unit, seconds] of [
    ['d', 86_400],
    ['h', 3600],
    ['m', 60],
    ['s', 1],
  ] as const) {
    const n = Math.floor(rest / seconds);
    if (n > 0) parts.push(`${n}${unit}`);
    rest -= n * seconds;
  }
  return parts.join(' ');
}
