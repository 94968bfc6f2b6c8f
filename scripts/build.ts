/**
 * `npm run build` (after the type check of tsconfig.build.json): the JavaScript that runs in
 * production, in `dist/`.
 *
 * - `dist/main.js`: the Slack bot (`npm start`, the image). Our modules in one file; packages stay
 *   in node_modules (the image installs the production ones), so Bolt, BullMQ and pino load as
 *   their authors ship them.
 * - `dist/cli.js`: the terminal command (`bin/rmq.js`). Everything in it, packages included, so a
 *   question costs one file read and no module resolution; what only some commands need (preview,
 *   Redis) is split into chunks loaded when asked for, and the environments file's YAML parser is
 *   required from node_modules only when there is one (src/config.ts). It talks HTTP through
 *   Node's own client (`undiciForCli`). It must never reach Bolt, BullMQ, undici, Redis at start
 *   or the Slack views: `cliMustNotLoad` and `cliMustNotLoadAtStart` are checked against each build.
 *
 * Why esbuild and not tsc's emit: the CLI's start-up time is a goal (bench/cli), and bundling is
 * the largest lever; esbuild is already here (tsx is built on it) and takes about a second.
 *
 * After bundling, every built file is imported once in a fresh Node process (`smokeImport`), and
 * an `import()` that reaches a package instead of a module of ours is refused
 * (`lazyPackageImports`): either fails the build rather than a user's first command.
 */
import { execFile } from 'node:child_process';
import { readdir, rm } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
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
  // replaced by src/rabbit/nodeHttpPool.ts (undiciForCli)
  /node_modules\/undici\//,
];

/**
 * What the CLI loads only for the commands that need it (`requests`, `history`: Redis), never at
 * start: a chunk imported with `import()`, not by the entry's static imports.
 */
export const cliMustNotLoadAtStart: readonly RegExp[] = [
  /node_modules\/ioredis\//,
  /^src\/workflow\//,
  /^src\/audit\//,
];

// Bundled CommonJS packages call require() for Node's own modules; an ES module has none.
const requireShim =
  "import { createRequire as __rmqCreateRequire } from 'node:module';\nconst require = __rmqCreateRequire(import.meta.url);";

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

/**
 * The `import()`s of the CLI that reach a package instead of a module of ours. Bundled, such an
 * `import()` of a CommonJS package yields only its `default`: `const { Redis } = await
 * import('ioredis')` gave undefined ("r is not a constructor") while the sources worked. A
 * module of ours imports the package statically and is itself imported lazily (src/cliRedis.ts).
 */
export function lazyPackageImports(metafile: Metafile): string[] {
  const found: string[] = [];
  for (const [output, meta] of Object.entries(metafile.outputs)) {
    for (const i of meta.imports) {
      if (i.kind !== 'dynamic-import' || i.external) continue;
      const target = metafile.outputs[i.path]?.entryPoint;
      if (target && /(^|\/)node_modules\//.test(target)) found.push(`${target} (from ${output})`);
    }
  }
  return found;
}

/**
 * Every file of the build imported once in a fresh Node process: a chunk that cannot load (a
 * package that is not there, a require the shim cannot serve) fails the build, not a user's
 * first `rmq history`. The entries run nothing on import (they start only as a process's main).
 */
async function smokeImport(outdir: string): Promise<void> {
  const chunks = (await readdir(join(outdir, 'cli-chunks'))).filter((f) => f.endsWith('.js'));
  const files = [
    join(outdir, 'main.js'),
    join(outdir, 'cli.js'),
    ...chunks.map((f) => join(outdir, 'cli-chunks', f)),
  ];
  const script = `for (const f of ${JSON.stringify(files.map((f) => pathToFileURL(f).href))}) {
    try { await import(f); } catch (e) { console.error(f + ': ' + (e?.stack ?? e)); process.exit(1); }
  }`;
  try {
    await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], {
      cwd: outdir,
      env: { PATH: process.env.PATH ?? '' },
      timeout: 60_000,
      maxBuffer: 1 << 20,
    });
  } catch (err) {
    const said = (err as { stderr?: string }).stderr || (err instanceof Error ? err.message : String(err));
    throw new Error(`build: a built file cannot be loaded: ${said}`);
  }
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
      plugins: [undiciForCli, zodEnglishOnly],
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
  const lazyPackages = lazyPackageImports(metafile);
  if (lazyPackages.length > 0) {
    throw new Error(
      `build: import() of a package gives only its default in the bundle; import it statically from a module of ours that is imported lazily: ${lazyPackages.join(', ')}`,
    );
  }
  await smokeImport(outdir);
  return { outdir, cliInputs, cliStartInputs };
}

if (process.argv[1] && import.meta.url === `file://${process.argv[1]}`) {
  const outdir = process.argv[2] ?? join(root, 'dist');
  const started = Date.now();
  await build(outdir);
  process.stdout.write(`built ${relative(process.cwd(), outdir) || '.'} in ${Date.now() - started} ms\n`);
}
