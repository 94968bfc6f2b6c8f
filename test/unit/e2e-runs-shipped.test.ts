import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The e2e suites and the harness they (and the Slack benches) start the bot with run it as it
 * ships (`dist/main.js`, see test/README.md), never from the sources: none of them imports a
 * value of the bot's entry points (src/bot/bot.ts and its parts src/bot/botClients.ts and
 * src/bot/botChangeRequests.ts, src/bot/main.ts). (The integration suites' workflow
 * fixture, support/workflow.ts, starts the apply worker from src/ on purpose: not a front door.) Type-only imports are fine (they run nothing), as is reading
 * Redis or the broker with other src/ classes.
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const ENTRY = String.raw`(?:\.\./)+src/bot/(?:bot|botClients|botChangeRequests|main)\.ts`;
/** `import { … } from '…/src/bot/bot.ts'` (not `import type`), `export … from`, or `import('…')` not in a type. */
const VALUE_IMPORT = new RegExp(
  String.raw`(?:^|\n)\s*(?:import|export)\s+(?!type\b)[^;]*?from\s+'${ENTRY}'|(?<!typeof\s)import\(\s*'${ENTRY}'`,
);

const filesIn = (dir: string) =>
  readdirSync(join(ROOT, dir))
    .filter((f) => f.endsWith('.ts'))
    .map((f) => `${dir}/${f}`);

describe('what the e2e suites run', () => {
  const files = [
    ...filesIn('test/e2e'),
    ...['harness', 'processHarness', 'botProcess', 'slackRequests'].map((f) => `test/support/${f}.ts`),
  ];

  it('is the built bundle: no e2e suite, nor the harness, imports the bot from src/', () => {
    const offenders = files.filter((f) => VALUE_IMPORT.test(readFileSync(join(ROOT, f), 'utf8')));
    expect(offenders).toEqual([]);
  });

  it('would see a value import of the bot from src/ (the check is not blind)', () => {
    expect(VALUE_IMPORT.test("import { createBot } from '../../src/bot/bot.ts';")).toBe(true);
    expect(VALUE_IMPORT.test("import {\n  type Bot,\n  createBot,\n} from '../../src/bot/bot.ts';")).toBe(
      true,
    );
    expect(VALUE_IMPORT.test("const m = await import('../../src/bot/main.ts');")).toBe(true);
    expect(VALUE_IMPORT.test("import { createBrokers } from '../../src/bot/botClients.ts';")).toBe(true);
    expect(VALUE_IMPORT.test("import type { Bot } from '../../src/bot/bot.ts';")).toBe(false);
    expect(VALUE_IMPORT.test("type Shipped = typeof import('../../src/bot/main.ts');")).toBe(false);
  });
});
