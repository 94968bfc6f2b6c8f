/**
 * Plurals: a number with its noun in the right number, and no view writes "object(s)" (issue 30).
 * The scan reads every module of the views and the sentences, so a new "(s)" fails here.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { agree, count } from '../../src/text/count.ts';

const root = resolve(fileURLToPath(import.meta.url), '../../..');

function modules(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? modules(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

describe('count', () => {
  it('one, none and many', () => {
    expect([0, 1, 2].map((n) => `${count(n, 'object')} ${agree(n, 'changes', 'change')}`)).toEqual([
      '0 objects change',
      '1 object changes',
      '2 objects change',
    ]);
    expect(count(1, 'more object', 'more objects')).toBe('1 more object');
  });

  it('no sentence of src/ writes a noun as "word(s)"', () => {
    const found = modules(join(root, 'src')).flatMap((file) =>
      readFileSync(file, 'utf8')
        .split('\n')
        .map((line, i) => ({ line, at: `${relative(root, file)}:${i + 1}` }))
        .filter(
          ({ line }) =>
            /[`'"][^`'"]*[\s*_](?!https?\()[a-z]{2,}\(s\)(?=[\s,.:)_*])/.test(line) &&
            !/^\s*(\*|\/\/)/.test(line),
        )
        .map(({ at }) => at),
    );
    expect(found).toEqual([]);
  });
});
