/**
 * The compiled package as it ships: `bin/rmq.js` running the bundled CLI against the real broker
 * (the same answers as the sources give), the lazily loaded `preview`, the exit codes, and what
 * the CLI bundle must never contain. `npm test` also runs `npm run build` itself.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build as esbuild } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  cliMustNotBundle,
  cliMustNotLoad,
  cliMustNotLoadAtStart,
  re2jsOnFirstUse,
} from '../../scripts/build.ts';
import { setUpLab } from '../../scripts/lab.ts';
import type { WhichResult } from '../../src/commands/which/which.ts';
import { adminClient, brokerCredentials, brokerUrl, uniqueName, waitFor } from '../support/broker.ts';
import { type Built, built, repoRoot } from '../support/built.ts';
import { type CliRun, runBuiltRmq } from '../support/cli.ts';

const vhost = uniqueName('build');
const client = adminClient();
/** An empty working directory: a developer's own .env must not change what is tested. */
const cwd = mkdtempSync(join(tmpdir(), 'rmq-build-'));
let pkg: Built;

function rmq(args: readonly string[], env: Record<string, string> = {}): Promise<CliRun> {
  const { user, password } = brokerCredentials();
  return runBuiltRmq(
    pkg.bin,
    args,
    { RMQ_URL: brokerUrl(), RMQ_USER: user, RMQ_PASSWORD: password, ...env },
    cwd,
  );
}

beforeAll(async () => {
  pkg = await built();
  await setUpLab(client, vhost);
});

afterAll(async () => {
  await client.deleteVhost(vhost);
  await client.close();
  rmSync(cwd, { recursive: true, force: true });
});

describe('the compiled CLI (bin/rmq.js -> dist/cliLoader.cjs -> dist/cli.cjs)', () => {
  it('answers which orders.audit from the broker, in JSON and in text', async () => {
    const r = await waitFor(
      async () => {
        const run = await rmq(['which', 'orders.audit', '--vhost', vhost, '--json']);
        expect(run.code, run.err).toBe(0);
        const result = JSON.parse(run.out) as WhichResult;
        return result.answer === 'reported' && result.operatorPolicySource === 'broker' ? result : undefined;
      },
      { deadlineMs: 30_000, intervalMs: 500, what: 'the broker to report orders.audit' },
    );
    expect(r.inForce).toMatchObject({ name: 'audit-retention', priority: 10 });
    expect(r.alsoMatched.map((m) => m.name)).toEqual(['audit-fallback', 'orders-cap']);

    const text = await rmq(['which', 'orders.audit', '--vhost', vhost]);
    expect(text.code, text.err).toBe(0);
    expect(text.out).toContain('audit-retention');
  });

  it('loads preview when asked for it', async () => {
    const run = await rmq(['preview', 'delete', 'audit-retention', '--vhost', vhost, '--json']);
    expect(run.code, run.err).toBe(0);
    const doc = JSON.parse(run.out) as { change: { action: string }; objects: { name: string }[] };
    expect(doc.change.action).toBe('delete');
    expect(doc.objects.map((o) => o.name)).toContain('orders.audit');
  });

  it('reads a pattern only RE2 reads: re2js, initialised by the first pattern that needs it, is there', async () => {
    const run = await rmq([
      'preview',
      'create',
      'regex-cap',
      '--pattern',
      '^orders\\.(audit|x)$',
      '--priority',
      '20',
      '--definition',
      '{"max-length": 7}',
      '--vhost',
      vhost,
      '--json',
    ]);
    expect(run.code, run.err).toBe(0);
    const doc = JSON.parse(run.out) as { objects: { name: string; after: { policy: string | null } }[] };
    expect(doc.objects.find((o) => o.name === 'orders.audit')?.after.policy).toBe('regex-cap');
  });

  it('bundles re2js behind a stand-in that compiles as RE2JS does (a failure would fall back to the backtracking worker unseen)', async () => {
    const bundled = await esbuild({
      stdin: {
        contents:
          "import { RE2JS } from 're2js'; export const found = [RE2JS.compile('^a(b|c)$').matches('ac'), RE2JS.compile('^a(b|c)$').matches('ad')];",
        resolveDir: repoRoot,
        loader: 'ts',
      },
      bundle: true,
      platform: 'node',
      format: 'cjs',
      write: false,
      logLevel: 'silent',
      plugins: [re2jsOnFirstUse],
    });
    const module = { exports: {} as { found?: boolean[] } };
    new Function('module', 'exports', 'require', bundled.outputFiles[0]?.text ?? '')(
      module,
      module.exports,
      createRequire(import.meta.url),
    );
    expect(module.exports.found).toEqual([true, false]);
  });

  it('keeps the exit codes: 2 for refused input, 3 when the broker cannot be asked', async () => {
    const refused = await rmq(['which']);
    expect(refused.code).toBe(2);
    expect(refused.err).toMatch(/^rmq: /);
    const unreachable = await rmq(['which', 'orders.audit', '--json'], { RMQ_URL: 'http://127.0.0.1:9' });
    expect(unreachable.code).toBe(3);
    expect(JSON.parse(unreachable.out)).toMatchObject({ answer: 'not-asked' });
    expect(unreachable.err).not.toMatch(/\n\s+at /);
  });

  it("reads only the variables the terminal uses: the bot's own, even wrong, are the bot's to refuse", async () => {
    const answered = await rmq(['which', 'orders.audit', '--vhost', vhost, '--json'], {
      SLACK_APPROVERS: 'alice',
      PORT: 'eighty',
    });
    expect(answered.code, answered.err).toBe(0);
    const refused = await rmq(['which', 'orders.audit', '--vhost', vhost], { RMQ_TIMEOUT: 'soon' });
    expect(refused.code).toBe(2);
    expect(refused.err).toMatch(/^rmq: Invalid configuration: RMQ_TIMEOUT: a duration/);
  });

  it('starts with no ES module loader, from a bundle compiled as it is read (bench/cli: the start of every command)', () => {
    const binType = JSON.parse(readFileSync(join(dirname(pkg.bin), 'package.json'), 'utf8')) as {
      type?: string;
    };
    expect(binType.type).toBe('commonjs');
    expect(readFileSync(pkg.bin, 'utf8')).toContain("require('../dist/cliLoader.cjs')");
    const bundle = readFileSync(join(pkg.outdir, 'cli.cjs'), 'latin1');
    expect(bundle.startsWith('(function (exports, require, module, __filename, __dirname) {')).toBe(true);
    // Read as latin1 by the loader: a character beyond ASCII would be read wrong.
    expect(/^[\x00-\x7f]*$/.test(bundle)).toBe(true);
  });

  it('runs from the V8 code cache the build made beside it (bench/cli: the compilation of every start)', async () => {
    const loader = (await import(pathToFileURL(join(pkg.outdir, 'cliLoader.cjs')).href)) as {
      codeCacheTaken(): boolean;
    };
    expect(loader.codeCacheTaken()).toBe(true);
  });

  it('contains none of what only the Slack bot needs, and loads Redis only for the commands that use it', () => {
    expect(pkg.cliStartInputs).toContain('src/terminal/cli.ts');
    expect(pkg.cliStartInputs).toContain('src/commands/which/which.ts');
    const botOnly = pkg.cliInputs.filter(
      (p) => cliMustNotLoad.some((re) => re.test(p)) || /node_modules\/pino\//.test(p),
    );
    expect(botOnly).toEqual([]);
    expect(pkg.cliInputs.some((p) => /node_modules\/ioredis\//.test(p))).toBe(true);
    const atStart = pkg.cliStartInputs.filter((p) => cliMustNotLoadAtStart.some((re) => re.test(p)));
    expect(atStart).toEqual([]);
    // The preview service loads with `preview` only (the live impact's words, which `which` says
    // its hazards in, live beside the rules: src/policy/impact/impactWords.ts).
    const previewAtStart = pkg.cliStartInputs.filter(
      (p) => p.startsWith('src/commands/preview/') || p.startsWith('src/preview/'),
    );
    expect(previewAtStart).toEqual([]);
  });

  it("holds zod's functions, not its namespace object (bench/cli: ~5 ms of every start)", () => {
    expect(pkg.cliBundled).toContain('node_modules/zod/v4/classic/schemas.js');
    expect(pkg.cliBundled.filter((p) => cliMustNotBundle.some((re) => re.test(p)))).toEqual([]);
  });
});
