import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * No merge-conflict markers in what is tracked (issue 28: `src/workflow/README.md` held a
 * committed `<<<<<<< HEAD … >>>>>>> main` for a while, and nothing failed). A marker is a line
 * that starts with seven `<`, `|` or `>` and a space (or ends there), or is seven `=` alone
 * between an opening and a closing one. Files with a NUL byte are binary and not read.
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const OPEN = /^<{7}( |$)/;
const BASE = /^\|{7}( |$)/;
const SPLIT = /^={7}$/;
const CLOSE = /^>{7}( |$)/;

/** The lines (1-based) of `text` that are conflict markers. */
function conflictMarkers(text: string): number[] {
  const found: number[] = [];
  const lines = text.split(/\r?\n/);
  let open = false;
  lines.forEach((line, i) => {
    if (OPEN.test(line)) {
      open = true;
      found.push(i + 1);
    } else if (CLOSE.test(line)) {
      open = false;
      found.push(i + 1);
    } else if (BASE.test(line) || (open && SPLIT.test(line))) found.push(i + 1);
  });
  return found;
}

describe('conflict markers', () => {
  it('are found: each kind of line, and a setext heading of seven `=` is not one', () => {
    const m = (s: string) => s.repeat(7);
    const merged = [
      'a',
      `${m('<')} HEAD`,
      'ours',
      `${m('|')} base`,
      'base',
      m('='),
      'theirs',
      `${m('>')} main`,
      'Title',
      m('='),
    ];
    expect(conflictMarkers(merged.join('\n'))).toEqual([2, 4, 6, 8]);
    expect(conflictMarkers(`x\n${m('<')}\ny\n${m('>')}\n`)).toEqual([2, 4]);
    expect(conflictMarkers('<<< not one\n=======x\n')).toEqual([]);
  });

  it('none in any tracked file', () => {
    const files = execFileSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8' })
      .split('\0')
      .filter(Boolean);
    expect(files.length).toBeGreaterThan(100);
    const withMarkers: string[] = [];
    for (const file of files) {
      let bytes: Buffer;
      try {
        bytes = readFileSync(join(ROOT, file));
      } catch {
        continue; // deleted in the work tree, not yet committed
      }
      if (bytes.includes(0)) continue;
      const lines = conflictMarkers(bytes.toString('utf8'));
      if (lines.length) withMarkers.push(`${file}: line ${lines.join(', ')}`);
    }
    expect(withMarkers).toEqual([]);
  });
});
