/**
 * `npm run build` (after the type check of tsconfig.build.json): the JavaScript that runs in
 * production, in `dist/`.
 *
 * - `dist/main.js`: the Slack bot (`npm start`, the image). Our modules in one file; packages stay
 *   in node_modules (the image installs the production ones), so Bolt, BullMQ and pino load as
 *   their authors ship them.
 * - `dist/cli.cjs`: the terminal command (`bin/rmq.js`, through `dist/cliLoader.cjs`). Everything
 *   in one CommonJS script, packages included, so a question costs one file read and no module
 *   resolution, written as the function CommonJS would wrap it in (src/terminal/cliLoader.ts); what only
 *   some commands need (preview, Redis) is in it as modules initialised when asked for
 *   (esbuild's lazy wrappers for what is only `import()`ed), and the environments file's YAML
 *   parser is required from node_modules only when there is one (src/config/config.ts), and re2js is
 *   initialised by the first pattern that needs it (`re2jsOnFirstUse`). It talks HTTP
 *   through Node's own client (`undiciForCli`). It must never reach Bolt, BullMQ, undici, Redis
 *   at start or the Slack views: `cliMustNotLoad` and `cliMustNotLoadAtStart` are checked
 *   against each build.
 * - `dist/lua/`: the request store's Lua scripts (src/workflow/lua/) and the audit trail's append (src/audit/lua/), read beside the bundles.
 * - `dist/cliLoader.cjs` (src/terminal/cliLoader.ts): runs `cli.cjs` with V8's code cache,
 *   `dist/cli.cjs.cache`, written here after a `help`, a `which` and a `preview` have run in a
 *   fresh Node process (which fails the build if the bundle cannot serve them). One script and
 *   not ES modules: Node 20 caches no ES module's compilation, and an ES module entry costs every
 *   start its loader (bench/cli).

 * Why esbuild and not tsc's emit: the CLI's start-up time is a goal (bench/cli), and bundling is
 * the largest lever; esbuild is already here (tsx is built on it) and takes about a second.
 *
 * After bundling, `dist/main.js` is imported once in a fresh Node process and the CLI runs there
 * (`smokeImport`, `codeCache`); an `import()` left in the CLI bundle (which `vm.Script` could not
 * serve) is refused: either fails the build rather than a user's first command.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cp, readFile, rm, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { type BuildOptions, build as esbuild, type Metafile, type Plugin } from 'esbuild';
import { BUILD_ID_MARK, BUNDLE_FILE } from '../src/terminal/cliLoader.ts';

const root = fileURLToPath(new URL('../', import.meta.url));

/**
 * What the CLI must never contain: what only the Slack bot uses. `src/slack/escape.ts` is pure
 * text (no Slack client) that `commands/` shares with the terminal.
 */
export const cliMustNotLoad: readonly RegExp[] = [
  /node_modules\/@slack\//,
  /node_modules\/bullmq\//,
  /^src\/slack\/(?!escape\.ts$)/,
  // replaced by src/rabbit/nodeHttpPool.ts (undiciForCli)
  /node_modules\/undici\//,
];

/**
 * What the CLI loads only for the commands that need it (`requests`, `history`: Redis), never at
 * start: reached from src/terminal/cli.ts only through an `import()`, which the bundle initialises when
 * that line runs; and re2js, only for a pattern that needs it (`re2jsOnFirstUse`).
 */
export const cliMustNotLoadAtStart: readonly RegExp[] = [
  /node_modules\/ioredis\//,
  /^src\/workflow\//,
  /^src\/audit\//,
  // required by the first pattern that needs it (re2jsOnFirstUse)
  /node_modules\/re2js\//,
];

/**
 * What must not be in the CLI bundle at all, though it is reached: zod's JSON Schema converters,
 * which no command uses. They are there only when a source takes zod's `z` as a value (`import {
 * z } from 'zod'`): esbuild then builds zod's whole namespace object, a getter for each of its
 * exports, and keeps every module behind it (~5 ms of every start, bench/cli). Written `import *
 * as z from 'zod'`, each `z.object` is bound to zod's own function and the rest is left out.
 */
export const cliMustNotBundle: readonly RegExp[] = [/node_modules\/zod\/v4\/classic\/from-json-schema\.js$/];

// The sources' `import.meta.url` in the CommonJS bundle: its own file's URL (`--version` reads
// ../package.json from it, src/config/config.ts requires the YAML parser beside it).
const importMetaUrl = 'var __rmqImportMetaUrl = require("node:url").pathToFileURL(__filename).href;';

/**
 * The CLI bundle as the function CommonJS would wrap it in: what src/terminal/cliLoader.ts compiles and
 * calls with `require`, `module` and `__filename`, the file's text as read (esbuild maps the
 * banner's lines in the source map).
 */
const cliWrapper = {
  banner: `(function (exports, require, module, __filename, __dirname) {${importMetaUrl}`,
  footer: '})',
};

/**
 * The CLI sends a handful of requests and exits: undici (~290 KB compiled at start, and its
 * WebAssembly parser compiled on the first connection: ~60 ms of a `which`, bench/cli) is
 * replaced in its bundle by `src/rabbit/nodeHttpPool.ts`, the part of undici's `Pool` the
 * transport uses, on Node's own HTTP client. The bot keeps undici. The CLI suites run the built
 * CLI against the real broker and the fault servers, so a transport change that the replacement
 * does not follow fails CI, not a user.
 */
const undiciForCli: Plugin = {
  name: 'undici-for-cli',
  setup(b) {
    b.onResolve({ filter: /^undici$/ }, () => ({ path: join(root, 'src/rabbit/nodeHttpPool.ts') }));
  },
};

/**
 * zod re-exports every language's error messages (~265 KB of the bundle, a tenth of a CLI run's
 * compile time); the bot speaks English, which zod configures by itself. The CLI bundle's
 * `z.locales` holds `en` only.
 */
const zodEnglishOnly: Plugin = {
  name: 'zod-english-only',
  setup(b) {
    b.onResolve({ filter: /\/locales\/index\.js$/ }, (args) =>
      /node_modules\/zod\//.test(args.importer)
        ? { path: join(args.resolveDir, '../locales/en.js'), namespace: 'zod-locales' }
        : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'zod-locales' }, (args) => ({
      resolveDir: root,
      loader: 'js',
      contents: `export { default as en } from ${JSON.stringify(args.path)};`,
    }));
  },
};

/**
 * re2js in the CLI bundle, initialised by the first pattern that needs it rather than at every
 * start: its top level builds the Unicode tables (~1 ms and 0.4 MB of a `which` whose patterns are
 * literals, which are answered by string comparison: src/policy/pattern/pattern.ts). Its
 * CommonJS build is required from a stand-in of `RE2JS` whose members are read from the real one.
 */
const ON_FIRST_USE = 're2js-on-first-use';
export const re2jsOnFirstUse: Plugin = {
  name: ON_FIRST_USE,
  setup(b) {
    b.onResolve({ filter: /^re2js$/ }, (args) =>
      args.namespace === ON_FIRST_USE ? undefined : { path: 're2js', namespace: ON_FIRST_USE },
    );
    b.onLoad({ filter: /.*/, namespace: ON_FIRST_USE }, () => ({
      resolveDir: root,
      loader: 'js',
      contents: `let engine;
const real = () => (engine ??= require('re2js').RE2JS);
export const RE2JS = new Proxy({}, {
  get(_, key) {
    const value = real()[key];
    return typeof value === 'function' ? value.bind(real()) : value;
  },
});`,
    }));
  },
};

export interface BuildResult {
  readonly outdir: string;
  /** The CLI bundle's inputs, relative to the repository root. */
  readonly cliInputs: readonly string[];
  /** The inputs the CLI runs at start: reached from src/terminal/cli.ts by static imports and requires alone. */
  readonly cliStartInputs: readonly string[];
  /** The inputs of which the CLI bundle holds some code (esbuild left the rest of `cliInputs` out). */
  readonly cliBundled: readonly string[];
}

/**
 * Inputs reached from `entry` by static imports and requires (what an `import()` reaches is not,
 * nor what the stand-in of `re2jsOnFirstUse` requires when first used).
 */
export function startInputs(metafile: Metafile, entry = 'src/terminal/cli.ts'): string[] {
  const seen = new Set<string>();
  const visit = (input: string) => {
    if (seen.has(input)) return;
    seen.add(input);
    const onFirstUse = input.startsWith(`${ON_FIRST_USE}:`);
    for (const i of metafile.inputs[input]?.imports ?? []) {
      const atStart = i.kind === 'import-statement' || (i.kind === 'require-call' && !onFirstUse);
      if (atStart && !i.external) visit(i.path);
    }
  };
  visit(entry);
  return [...seen];
}

/**
 * The `import()`s left in a built CLI file (not bundled): `vm.Script` (src/terminal/cliLoader.ts) has no
 * loader for them, so each would fail when its line runs.
 */
export function dynamicImportsLeft(metafile: Metafile): string[] {
  return Object.entries(metafile.outputs).flatMap(([output, meta]) =>
    meta.imports.filter((i) => i.kind === 'dynamic-import').map((i) => `${i.path} (in ${output})`),
  );
}

/**
 * Ends the bundle with its build id, the hash of what comes before it (src/terminal/cliLoader.ts). The
 * bundle must be ASCII (esbuild's `charset` default escapes the rest): the loader reads it as
 * latin1, which spares decoding ~1 MB of UTF-8 at every start.
 */
async function stampBuildId(bundle: string): Promise<void> {
  const text = await readFile(bundle, 'utf8');
  const wide = /[^\x00-\x7f]/.exec(text);
  if (wide) throw new Error(`build: ${bundle} is not ASCII (${JSON.stringify(wide[0])} at ${wide.index})`);
  const id = createHash('sha256').update(text).digest('hex');
  await writeFile(bundle, `${text}${text.endsWith('\n') ? '' : '\n'}${BUILD_ID_MARK}${id}\n`);
}

/** `script` (an ES module's text) run by the Node of the build in a fresh process, in `cwd`. */
async function runNode(cwd: string, script: string, what: string): Promise<void> {
  try {
    await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], {
      cwd,
      env: { PATH: process.env.PATH ?? '' },
      timeout: 60_000,
      maxBuffer: 1 << 20,
    });
  } catch (err) {
    const said = (err as { stderr?: string }).stderr || (err instanceof Error ? err.message : String(err));
    throw new Error(`build: ${what}: ${said}`);
  }
}

/** The bot's bundle imported once in a fresh Node process: one that cannot load fails the build. */
/**
 * The request store's Lua scripts, read from beside the bundle when the store is first loaded
 * (src/workflow/lua/scripts.ts), and the audit trail's append (src/audit/trail.ts): `dist/lua/`,
 * as `.lua` files so they stay readable as Lua.
 */
async function copyLua(outdir: string): Promise<void> {
  // The audit trail's append (src/audit/lua/append.lua) beside them, read the same way.
  for (const from of ['src/workflow/lua', 'src/audit/lua'])
    await cp(join(root, from), join(outdir, 'lua'), {
      recursive: true,
      filter: (src) => !/\.[cm]?ts$/.test(src),
    });
}

function smokeImport(outdir: string): Promise<void> {
  const main = JSON.stringify(pathToFileURL(join(outdir, 'main.js')).href);
  return runNode(outdir, `await import(${main});`, 'dist/main.js cannot be loaded');
}

/**
 * What the cache step's stand-in broker answers (`codeCache`): a queue governed by a policy, an
 * operator policy and one that loses, as the policies lab has them, so the question's whole path
 * (the answers parsed, the policies read and resolved, the hazards, the text) is compiled into the
 * cache; any other path is the broker's 404.
 */
const CACHE_BROKER: Record<string, unknown> = {
  '/api/overview': { rabbitmq_version: '3.13.7', management_version: '3.13.7' },
  '/api/policies/%2F': [
    {
      vhost: '/',
      name: 'orders-cap',
      pattern: 'orders',
      'apply-to': 'queues',
      definition: { 'max-length': 100 },
      priority: 0,
    },
    {
      vhost: '/',
      name: 'audit-retention',
      pattern: '^orders\\.audit$',
      'apply-to': 'queues',
      definition: { 'dead-letter-exchange': 'audit.dlx' },
      priority: 10,
    },
  ],
  '/api/operator-policies/%2F': [
    {
      vhost: '/',
      name: 'orders-ceiling',
      pattern: '^orders\\.',
      'apply-to': 'queues',
      definition: { 'max-length': 50000 },
      priority: 0,
    },
  ],
  '/api/queues/%2F/orders.audit': {
    name: 'orders.audit',
    vhost: '/',
    type: 'classic',
    arguments: {},
    policy: 'audit-retention',
    operator_policy: 'orders-ceiling',
    effective_policy_definition: { 'dead-letter-exchange': 'audit.dlx', 'max-length': 50000 },
    messages: 3,
    messages_ready: 3,
    message_bytes_ready: 30,
    messages_unacknowledged: 0,
    consumers: 0,
    idle_since: '2026-12-01 09:00:00',
    state: 'running',
  },
};

/**
 * The CLI's code cache (src/terminal/cliLoader.ts `writeCodeCache`), made in a fresh Node process after
 * `help`, `--version`, `which orders.audit` (text and `--json`) answered by a stand-in broker in
 * that process (`CACHE_BROKER`), and a `preview` sent to a port nobody listens on (exit 3), so
 * what a question runs is compiled before it is asked; what else a command runs is compiled then,
 * as without a cache. The run doubles as the CLI's smoke test.
 */
function codeCache(outdir: string): Promise<void> {
  const loader = JSON.stringify(pathToFileURL(join(outdir, 'cliLoader.cjs')).href);
  const answers = JSON.stringify(CACHE_BROKER);
  const runs = JSON.stringify([
    ['help'],
    ['--version'],
    ['which', 'orders.audit'],
    ['which', 'orders.audit', '--json'],
    ['preview', 'delete', 'orders-cap'],
  ]);
  return runNode(
    outdir,
    `import { createServer } from 'node:http';
const answers = ${answers};
const server = createServer((req, res) => {
  const body = answers[(req.url ?? '').split('?')[0]];
  res.writeHead(body ? 200 : 404, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body ?? { error: 'Object Not Found', reason: 'Not Found' }));
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const env = { RMQ_URL: 'http://127.0.0.1:' + server.address().port, RMQ_TIMEOUT: '5s' };
const { writeCodeCache } = await import(${loader});
try { await writeCodeCache(${runs}, env); } finally { server.close(); server.closeAllConnections(); }`,
    'the CLI bundle cannot run',
  );
}

export async function build(outdir = join(root, 'dist')): Promise<BuildResult> {
  await rm(outdir, { recursive: true, force: true });
  const common: BuildOptions = {
    absWorkingDir: root,
    bundle: true,
    platform: 'node',
    target: 'node20',
    sourcemap: 'linked',
    logLevel: 'warning',
    legalComments: 'none',
  };
  const [, cli] = await Promise.all([
    esbuild({
      ...common,
      entryPoints: { main: 'src/bot/main.ts' },
      outdir,
      format: 'esm',
      packages: 'external',
    }),
    esbuild({
      ...common,
      entryPoints: { cli: 'src/terminal/cli.ts' },
      outfile: join(outdir, BUNDLE_FILE),
      format: 'cjs',
      minify: true,
      define: { 'import.meta.url': '__rmqImportMetaUrl' },
      banner: { js: cliWrapper.banner },
      footer: { js: cliWrapper.footer },
      plugins: [undiciForCli, zodEnglishOnly, re2jsOnFirstUse],
      metafile: true,
    }),
    esbuild({
      ...common,
      entryPoints: { cliLoader: 'src/terminal/cliLoader.ts' },
      outfile: join(outdir, 'cliLoader.cjs'),
      format: 'cjs',
      sourcemap: false,
    }),
  ]);
  const metafile = cli.metafile as Metafile;
  const cliInputs = Object.keys(metafile.inputs);
  const cliStartInputs = startInputs(metafile);
  const forbidden = cliInputs.filter((p) => cliMustNotLoad.some((re) => re.test(p)));
  if (forbidden.length > 0) {
    throw new Error(`build: the CLI bundle reaches what only the bot needs: ${forbidden.join(', ')}`);
  }
  const eager = cliStartInputs.filter((p) => cliMustNotLoadAtStart.some((re) => re.test(p)));
  if (eager.length > 0) {
    throw new Error(
      `build: the CLI loads at start what only some commands need (import() it): ${eager.join(', ')}`,
    );
  }
  const cliBundled = Object.values(metafile.outputs).flatMap((o) =>
    Object.entries(o.inputs)
      .filter(([, i]) => i.bytesInOutput > 0)
      .map(([p]) => p),
  );
  const unwanted = cliBundled.filter((p) => cliMustNotBundle.some((re) => re.test(p)));
  if (unwanted.length > 0) {
    throw new Error(
      `build: the CLI bundle holds zod's namespace (write import * as z from 'zod', not import { z }): ${unwanted.join(', ')}`,
    );
  }
  const left = dynamicImportsLeft(metafile);
  if (left.length > 0) {
    throw new Error(
      `build: an import() left in the CLI bundle cannot run under vm.Script (import it statically, or bundle it): ${left.join(', ')}`,
    );
  }
  await stampBuildId(join(outdir, BUNDLE_FILE));
  await copyLua(outdir);
  await Promise.all([smokeImport(outdir), codeCache(outdir)]);
  return { outdir, cliInputs, cliStartInputs, cliBundled };
}

if (process.argv[1] && import.meta.url === `file://${process.argv[1]}`) {
  const outdir = process.argv[2] ?? join(root, 'dist');
  const started = Date.now();
  await build(outdir);
  process.stdout.write(`built ${relative(process.cwd(), outdir) || '.'} in ${Date.now() - started} ms\n`);
}
