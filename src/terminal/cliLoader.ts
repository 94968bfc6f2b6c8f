/**
 * `dist/cliLoader.cjs`, what `bin/rmq.js` requires: runs the terminal's bundle (`dist/cli.cjs`, one
 * script, scripts/build.ts) with V8's code cache (`dist/cli.cjs.cache`), so a question
 * does not parse and compile ~1 MB of JavaScript again on every run (bench/cli: the terminal's
 * start is a goal). Node 20 caches no ES module's compilation and `module.enableCompileCache`
 * arrives in Node 22.1, so the bundle is a script run through `vm.Script` with `cachedData`, which
 * every Node since 10 has; and this loader and `bin/rmq.js` are CommonJS, as an ES module entry
 * costs every start its loader (~3 ms, bench/HISTORY.md).
 *
 * The bundle is written as the function CommonJS would wrap it in (`(function (exports, require,
 * module, __filename, __dirname) {…})`), so the text read is the text compiled: no second copy of
 * ~1 MB to build and flatten before V8 sees it. It is ASCII (the build checks), read as latin1:
 * no UTF-8 decoding.
 *
 * The cache is written by the build (`writeCodeCache`, after a `help` and a `which` have compiled
 * what they run) and names the bundle it was made from (the bundle's last line carries its hash):
 * a cache of another bundle is never offered to V8, whose own check is the source's length. A
 * cache V8 refuses (another Node, other flags) costs only the compilation it would have saved, and
 * is written again at exit where `dist/` may be written, for the next run.
 *
 * Imported by nothing of ours but the build: it requires Node only, and runs nothing until
 * `cliMain` is called.
 */
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { Script } from 'node:vm';

/** What the bundle exports (src/terminal/cli.ts). */
interface CliBundle {
  cliMain(): Promise<never>;
  runCli(argv: readonly string[], env: NodeJS.ProcessEnv, io?: unknown): Promise<number>;
}

/** The bundle's last line: `//# rmq-build=<sha256 of what comes before it>` (scripts/build.ts). */
export const BUILD_ID_MARK = '//# rmq-build=';
const BUILD_ID = /\/\/# rmq-build=([0-9a-f]{64})\s*$/;

/** The bundle beside this file in `dist/` (the loader is CommonJS there: `__dirname` is its folder). */
export const BUNDLE_FILE = 'cli.cjs';

interface Loaded {
  readonly cli: CliBundle;
  readonly script: Script;
  readonly buildId: string;
  readonly cachePath: string;
  /** The cache was missing or V8 refused it. */
  readonly cold: boolean;
}

/** The cache file: the build id (64 hex digits), then V8's bytes. */
function cacheFor(cachePath: string, buildId: string): Buffer | undefined {
  let file: Buffer;
  try {
    file = readFileSync(cachePath);
  } catch {
    return undefined;
  }
  return file.subarray(0, 64).toString('latin1') === buildId ? file.subarray(64) : undefined;
}

function load(): Loaded {
  const bundlePath = join(__dirname, BUNDLE_FILE);
  const cachePath = `${bundlePath}.cache`;
  const source = readFileSync(bundlePath, 'latin1');
  const buildId = BUILD_ID.exec(source.slice(-100))?.[1] ?? '';
  const cachedData = buildId ? cacheFor(cachePath, buildId) : undefined;
  const script = new Script(source, { filename: bundlePath, ...(cachedData ? { cachedData } : {}) });
  const module = { exports: {} as CliBundle };
  const wrapper = script.runInThisContext() as (...args: unknown[]) => void;
  // What Node would give a CommonJS module here: its own `require` and `__filename`.
  wrapper(module.exports, createRequire(bundlePath), module, bundlePath, __dirname);
  return {
    cli: module.exports,
    script,
    buildId,
    cachePath,
    cold: !cachedData || script.cachedDataRejected === true,
  };
}

/** Writes V8's cache of everything compiled so far, whole or not at all (a temporary file renamed). */
function saveCache(loaded: Loaded): void {
  if (!loaded.buildId) return;
  const temporary = `${loaded.cachePath}.${process.pid}`;
  writeFileSync(
    temporary,
    Buffer.concat([Buffer.from(loaded.buildId, 'latin1'), loaded.script.createCachedData()]),
  );
  renameSync(temporary, loaded.cachePath);
}

/**
 * Whether V8 takes this build's code cache, the bundle run once to ask (test/integration/build.test.ts:
 * a cache V8 refuses fails nothing but the start's speed, so it is checked where it is made).
 */
export function codeCacheTaken(): boolean {
  return !load().cold;
}

/** The terminal command: `bin/rmq.js`. */
export function cliMain(): Promise<never> {
  const loaded = load();
  if (loaded.cold) {
    process.once('exit', () => {
      try {
        saveCache(loaded);
      } catch {
        // An installation the user may not write to: the next run compiles again, as this one did.
      }
    });
  }
  return loaded.cli.cliMain();
}

/**
 * For the build: runs each command (output dropped) so what they run is compiled, then writes the
 * cache. A command that throws fails the build (the bundle cannot serve it).
 */
export async function writeCodeCache(runs: readonly (readonly string[])[], env: NodeJS.ProcessEnv) {
  const loaded = load();
  const io = { out: () => {}, err: () => {} };
  for (const words of runs) await loaded.cli.runCli(words, env, io);
  saveCache(loaded);
}
