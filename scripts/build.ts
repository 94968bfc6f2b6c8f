/**
 * `npm run build` (after the type check of tsconfig.build.json): the JavaScript that runs in
 * production, in `dist/`.
 *
 * - `dist/main.js`: the Slack bot (`npm start`, the image). Our modules in one file; packages stay
 *   in node_modules (the image installs the production ones), so Bolt, BullMQ and pino load as
 *   their authors ship them.
 * - `dist/cli.js`: the terminal command (`bin/rmq.js`). Everything in it, packages included, so a
 *   question costs one file read and no module resolution; what only some commands need (preview,
 *   the environments file's YAML) is split into chunks loaded when asked for. It must never reach
 *   Bolt, BullMQ, Redis or the Slack views: `cliMustNotLoad` is checked against each build.
 *
 * Why esbuild and not tsc's emit: the CLI's start-up time is a goal (bench/cli), and bundling is
 * the largest lever; esbuild is already here (tsx is built on it) and takes about a second.
 */
import { rm } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BuildOptions, build as esbuild, type Metafile, type Plugin } from 'esbuild';

const root = fileURLToPath(new URL('../', import.meta.url));

/**
 * What the CLI must never contain: what only the Slack bot uses. `src/slack/escape.ts` is pure
 * text (no Slack client) that `commands/` shares with the terminal.
 */
export const cliMustNotLoad: readonly RegExp[] = [
  /node_modules\/@slack\//,
  /node_modules\/bullmq\//,
  /^src\/slack\/(?!escape\.ts$)/,
];

/**
 * What the CLI loads only for the commands that need it (`requests`, `history`: Redis), never at
 * start: a chunk imported with `import()`, not by the entry's static imports.
 */
export const cliMustNotLoadAtStart: readonly RegExp[] = [/node_modules\/ioredis\//, /^src\/workflow\//];

// Bundled CommonJS packages call require() for Node's own modules; an ES module has none.
const requireShim =
  "import { createRequire as __rmqCreateRequire } from 'node:module';\nconst require = __rmqCreateRequire(import.meta.url);";

/**
 * undici's index loads every dispatcher, fetch, WebSocket, caches and mocks (~60 ms of a CLI
 * run); the management client uses `Pool` and the `request` API only. The CLI bundle gets just
 * those, assembled the way undici's index assembles them, and without the HTTP/2 client (and
 * `node:http2`), which undici uses only when a TLS server offers h2 and `allowH2` is set; the
 * client never sets it. The build test runs the bundle against the real broker, so an undici
 * upgrade that moves these files fails CI, not a user.
 */
const undiciPoolOnly: Plugin = {
  name: 'undici-pool-only',
  setup(b) {
    b.onResolve({ filter: /^undici$/ }, () => ({ path: 'undici-pool-only', namespace: 'rmq' }));
    b.onResolve({ filter: /\/client-h2\.js$/ }, (args) =>
      /node_modules\/undici\//.test(args.importer) ? { path: 'undici-no-h2', namespace: 'rmq' } : undefined,
    );
    b.onLoad({ filter: /^undici-no-h2$/, namespace: 'rmq' }, () => ({
      loader: 'js',
      contents:
        "module.exports = function connectH2() { throw new Error('rmq: HTTP/2 is not built into the CLI'); };",
    }));
    b.onLoad({ filter: /^undici-pool-only$/, namespace: 'rmq' }, () => ({
      resolveDir: root,
      loader: 'js',
      contents: [
        "const Dispatcher = require('undici/lib/dispatcher/dispatcher');",
        "const Pool = require('undici/lib/dispatcher/pool');",
        "Object.assign(Dispatcher.prototype, require('undici/lib/api'));",
        'module.exports = { Dispatcher, Pool };',
      ].join('\n'),
    }));
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

export interface BuildResult {
  readonly outdir: string;
  /** The CLI bundle's inputs, every chunk, relative to the repository root. */
  readonly cliInputs: readonly string[];
  /** The inputs `dist/cli.js` loads at start: its own and those of the chunks it imports statically. */
  readonly cliStartInputs: readonly string[];
}

/** Inputs of the entry output and of every output reached from it by static imports. */
function startInputs(metafile: Metafile): string[] {
  // Each `import()` target is an entry point of its own too: the CLI's is src/cli.ts.
  const entry = Object.keys(metafile.outputs).find((o) => metafile.outputs[o]?.entryPoint === 'src/cli.ts');
  const seen = new Set<string>();
  const visit = (output: string) => {
    if (seen.has(output)) return;
    seen.add(output);
    for (const i of metafile.outputs[output]?.imports ?? []) {
      if (i.kind === 'import-statement' && !i.external) visit(i.path);
    }
  };
  if (entry) visit(entry);
  return [...seen].flatMap((o) => Object.keys(metafile.outputs[o]?.inputs ?? {}));
}

export async function build(outdir = join(root, 'dist')): Promise<BuildResult> {
  await rm(outdir, { recursive: true, force: true });
  const common: BuildOptions = {
    absWorkingDir: root,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    sourcemap: 'linked',
    logLevel: 'warning',
    legalComments: 'none',
  };
  const [, cli] = await Promise.all([
    esbuild({
      ...common,
      entryPoints: { main: 'src/main.ts' },
      outdir,
      packages: 'external',
    }),
    esbuild({
      ...common,
      entryPoints: { cli: 'src/cli.ts' },
      outdir,
      splitting: true,
      chunkNames: 'cli-chunks/[name]-[hash]',
      minify: true,
      banner: { js: requireShim },
      plugins: [undiciPoolOnly, zodEnglishOnly],
      metafile: true,
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
  return { outdir, cliInputs, cliStartInputs };
}

if (process.argv[1] && import.meta.url === `file://${process.argv[1]}`) {
  const outdir = process.argv[2] ?? join(root, 'dist');
  const started = Date.now();
  await build(outdir);
  process.stdout.write(`built ${relative(process.cwd(), outdir) || '.'} in ${Date.now() - started} ms\n`);
}
