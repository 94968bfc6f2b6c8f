import type { PolicyFields } from '../src/preview/preview.ts';
import { showInvisible } from '../src/slack/escape.ts';

/**
 * A policy's fields exactly as they will be written to the broker, for every preview and every
 * change request: the pattern as the regex the broker gets (never JSON-quoted, which would double
 * its backslashes), the definition as the JSON sent. What the bot understood is then visible
 * before anyone approves it. Characters that do not show, and spaces at either end, are said.
 */

export interface AsWritten {
  /** `field  value` lines, values verbatim (invisible characters as `\uXXXX`). */
  readonly lines: string[];
  /** What a reader could not see in the lines (and what was read differently from as typed). */
  readonly notes: string[];
}

export function asWritten(p: PolicyFields, readNotes: readonly string[] = []): AsWritten {
  const pattern = showInvisible(p.pattern);
  const notes: string[] = [];
  if (pattern !== p.pattern)
    notes.push('the pattern has characters that do not show: they are written \\uXXXX above');
  if (p.pattern !== p.pattern.trim())
    notes.push('the pattern starts or ends with a space, which it must match');
  if (p.pattern === '') notes.push('the pattern is empty: it matches every name');
  return {
    lines: [
      `pattern     ${pattern}`,
      `apply-to    ${p.applyTo}`,
      `priority    ${p.priority}`,
      `definition  ${showInvisible(JSON.stringify(p.definition))}`,
    ],
    notes: [...notes, ...readNotes],
  };
}
