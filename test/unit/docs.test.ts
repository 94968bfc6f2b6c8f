/**
 * docs/: the reference users read, kept true to the code. Every variable `.env.example` lists and
 * the configuration schema reads, every command of the table and every field of the environments
 * file has its entry there; each list is read from the code, so a new variable, command or field
 * without its entry fails here, naming it and where to write it. Links between the documents
 * (and the README) lead somewhere.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { COMMAND_TABLE } from '../../src/commands/registry.ts';
import { environmentsFile, envVariables } from '../../src/config/config.ts';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const docsDir = join(root, 'docs');
const docs = readdirSync(docsDir)
  .filter((f) => f.endsWith('.md'))
  .map((f) => ({ file: `docs/${f}`, text: readFileSync(join(docsDir, f), 'utf8') }));
const example = readFileSync(join(root, '.env.example'), 'utf8');

/** The names written in backticks in the first cell of a table row, over every document. */
function rowNames(): Set<string> {
  const names = new Set<string>();
  for (const { text } of docs) {
    for (const m of text.matchAll(/^\|([^|\n]*)\|/gm)) {
      for (const n of (m[1] ?? '').matchAll(/`([^`]+)`/g)) names.add(n[1] ?? '');
    }
  }
  return names;
}

/** The names written in backticks in a heading, over every document. */
function headingNames(): Set<string> {
  const names = new Set<string>();
  for (const { text } of docs) {
    for (const m of text.matchAll(/^#+ (.*)$/gm)) {
      for (const n of (m[1] ?? '').matchAll(/`([^`\s]+)/g)) names.add(n[1] ?? '');
    }
  }
  return names;
}

/** The schema under optional, default and pipe wrappers. */
function unwrap(schema: z.ZodType): z.ZodType {
  let s: z.ZodType = schema;
  for (;;) {
    if (s instanceof z.ZodOptional || s instanceof z.ZodDefault || s instanceof z.ZodNullable)
      s = s.unwrap() as z.ZodType;
    else if (s instanceof z.ZodPipe) s = s.in as z.ZodType;
    else return s;
  }
}

/** An object schema's fields, nested objects' fields as `outer.inner`. */
function fieldsOf(schema: z.ZodType, prefix = ''): string[] {
  const s = unwrap(schema);
  if (!(s instanceof z.ZodObject)) return [];
  return Object.entries(s.shape as Record<string, z.ZodType>).flatMap(([key, value]) => [
    `${prefix}${key}`,
    ...fieldsOf(value, `${prefix}${key}.`),
  ]);
}

const exampleVariables = [...example.matchAll(/^([A-Z][A-Z0-9_]*)=/gm)].map((m) => m[1] ?? '');
const schemaVariables = envVariables();
const environmentsEntry = unwrap(environmentsFile().shape.environments);
const environmentFields =
  environmentsEntry instanceof z.ZodArray ? fieldsOf(environmentsEntry.element as z.ZodType) : [];

describe('docs/ has an entry for', () => {
  it('every variable of .env.example and of the configuration schema: a table row', () => {
    expect(exampleVariables.length).toBeGreaterThan(20);
    const rows = rowNames();
    const missing = [...new Set([...exampleVariables, ...schemaVariables])].filter((v) => !rows.has(v));
    expect(missing, 'add a row (| `NAME` | default | what it sets |) to docs/configuration.md').toEqual([]);
  });

  it('every command of src/commands/registry.ts: a heading', () => {
    const headings = headingNames();
    const missing = COMMAND_TABLE.map((c) => c.name).filter((n) => !headings.has(n));
    expect(missing, 'add a heading (## `NAME`) to docs/commands.md').toEqual([]);
  });

  it('every field of the environments file (src/config/config.ts), nested ones as outer.inner: a table row', () => {
    expect(environmentFields).toEqual(expect.arrayContaining(['name', 'url', 'breakGlass.reviewWithin']));
    const rows = rowNames();
    const missing = environmentFields.filter((f) => !rows.has(f));
    expect(missing, 'add a row (| `field` | required | what it sets |) to docs/configuration.md').toEqual([]);
  });
});

describe('.env.example', () => {
  it('lists every variable the configuration schema reads', () => {
    const listed = new Set(exampleVariables);
    expect(schemaVariables.filter((v) => !listed.has(v))).toEqual([]);
  });
});

describe('the tags reading needs (issue 30)', () => {
  // test/integration/least-privilege.test.ts proves on the broker that `management` answers
  // which and preview; the README's table and .env.example must say the same.
  it('.env.example and the README both say questions need the management tag', () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    expect(example).toMatch(/Questions need the "management" tag/);
    expect(example).not.toMatch(/Reading policies needs the "policymaker"/);
    expect(readme).toMatch(/^\| questions only \([^|]*\) \| `management` \|/m);
  });
});

describe('the README, operator-first (issue 30, item 2)', () => {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');

  it("what it is, then an operator's sections in order; the rest in docs/", () => {
    const intro = readme.slice(0, readme.indexOf('\n## '));
    expect(intro).toMatch(/RabbitMQ/);
    const sections = [...readme.matchAll(/^## (.*)$/gm)].map((m) => m[1] ?? '');
    const wanted = [
      /two commands/i,
      /trial/i,
      /^Running it/,
      /^Least privilege/,
      /^Backup and restore/,
      /^Upgrading/,
      /^Rotating the audit key/,
    ];
    const at = wanted.map((w) => sections.findIndex((h) => w.test(h)));
    expect(
      at.every((i) => i >= 0),
      `sections: ${sections.join(' | ')}`,
    ).toBe(true);
    expect(at).toEqual([...at].sort((a, b) => a - b));
    for (const doc of ['architecture.md', 'benchmarks.md', 'broker-facts.md']) {
      expect(existsSync(join(docsDir, doc))).toBe(true);
      expect(readme).toContain(`docs/${doc}`);
    }
  });

  it('short, and no diary of how it was built', () => {
    expect(readme.split('\n').length).toBeLessThanOrEqual(300);
    expect(readme).not.toMatch(/load average|engineers used it|while .* other .* used/i);
  });
});

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as dashes. */
const anchorOf = (heading: string) =>
  heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');

describe('links in docs/ and the README', () => {
  const files = [...docs, { file: 'README.md', text: readFileSync(join(root, 'README.md'), 'utf8') }];

  it('lead to a file of the repository, and to a heading of it where they name one', () => {
    const broken: string[] = [];
    for (const { file, text } of files) {
      for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = m[1] ?? '';
        if (/^[a-z]+:/.test(target)) continue;
        const [path = '', anchor] = target.split('#');
        const to = path === '' ? join(root, file) : resolve(dirname(join(root, file)), path);
        if (!existsSync(to)) {
          broken.push(`${file}: ${target}`);
          continue;
        }
        if (anchor === undefined || !to.endsWith('.md')) continue;
        const headings = [...readFileSync(to, 'utf8').matchAll(/^#+ (.*)$/gm)].map((h) =>
          anchorOf(h[1] ?? ''),
        );
        if (!headings.includes(anchor)) broken.push(`${file}: ${target} (no such heading)`);
      }
    }
    expect(broken).toEqual([]);
  });
});

/**
 * Where the bot is not checked out, `npx rmq` asks the public registry for a package named `rmq`,
 * which is not ours: with `--yes` it would run whatever is published under that name with the
 * broker's credentials. The CI recipes name the bot's repository at a commit (`-p "$RMQ_BOT"`,
 * run as a job runs it by test/e2e/cli-elsewhere.test.ts); a checkout's `npx rmq` runs its own bin.
 */
describe("the CI recipes run the bot's own package", () => {
  const files = [...docs, { file: 'README.md', text: readFileSync(join(root, 'README.md'), 'utf8') }];

  it('never `npx --yes rmq`: a package of the registry by that name', () => {
    const found = files.flatMap(({ file, text }) =>
      [...text.matchAll(/npx (?:(?:--yes|-y)\s+)+rmq\b.*/g)].map((m) => `${file}: ${m[0]}`),
    );
    expect(found).toEqual([]);
  });

  it('in every YAML recipe, npx names the package: -p "$RMQ_BOT", the repository at a commit', () => {
    const recipes = files.flatMap(({ file, text }) =>
      [...text.matchAll(/^```ya?ml\n([\s\S]*?)^```$/gm)].map((m) => ({ file, block: m[1] ?? '' })),
    );
    const withNpx = recipes.filter((r) => /\bnpx\b/.test(r.block));
    expect(withNpx.length).toBeGreaterThanOrEqual(2);
    for (const { file, block } of withNpx) {
      for (const line of block.split('\n').filter((l) => /\bnpx\b/.test(l)))
        expect(line, file).toMatch(/\bnpx --yes -p "\$RMQ_BOT" rmq /);
      expect(block, `${file}: RMQ_BOT names a repository at a commit`).toMatch(
        /^\s*RMQ_BOT: (?:github|gitlab):[\w.-]+\/[\w.-]+#\S+$/m,
      );
    }
  });
});
