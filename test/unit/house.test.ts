import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The house's rules that no compiler checks: a module over 400 lines says why in its first line,
 * no comment of src/ cites the contract by a file a clone does not have (the contract in the
 * repository is docs/) or explains itself by an issue's number instead of a reason, and no schema
 * is recursive (the terminal parses without zod's memoizer for cycles: src/terminal/zodJitless.ts).
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const LONG = 400;

function modules(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return modules(path);
    return e.name.endsWith('.ts') ? [path] : [];
  });
}

const sources = modules(join(ROOT, 'src')).map((path) => {
  const text = readFileSync(path, 'utf8');
  return { file: relative(ROOT, path), text, lines: text.replace(/\n$/, '').split('\n').length };
});

describe('the modules of src/', () => {
  it('are read whole', () => {
    expect(sources.length).toBeGreaterThan(200);
  });

  it(`say in their first line why they are over ${LONG} lines, where they are`, () => {
    const unexplained = sources
      .filter(({ lines }) => lines > LONG)
      .filter(({ text }) => !/^\/\/ Over 400 lines: \S.{10,}$/m.test(text.split('\n', 1)[0] ?? ''))
      .map(({ file }) => file);
    expect(unexplained).toEqual([]);
  });

  it('cite docs/, never a contract file a clone does not have, nor an issue by number', () => {
    const cites = sources.flatMap(({ file, text }) =>
      text
        .split('\n')
        .map((line, i) => ({ line, at: `${file}:${i + 1}` }))
        .filter(({ line }) => /INTERFACE\.md|\bissue \d+/i.test(line))
        .map(({ at }) => at),
    );
    expect(cites).toEqual([]);
  });

  it('build no recursive zod schema (z.lazy): the terminal parses without the memoizer cycles need', () => {
    const recursive = sources
      .filter(({ text }) => /\bz\.lazy\(|\.lazy\(\(\)/.test(text))
      .map(({ file }) => file);
    expect(recursive).toEqual([]);
  });
});
