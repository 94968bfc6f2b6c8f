/**
 * `dist/cli.js`, what `bin/rmq.js` imports: the terminal's bundle (`dist/cli.cjs`, one script,
 * scripts/build.ts) compiled with V8's code cache (`dist/cli.cjs.cache`), so a question does not
 * parse and compile ~1 MB of JavaScript again on every run (bench/cli: the terminal's start is a
 * goal, `rmq which` <= 1.5x `node -e 0`). Node 20 caches no ES module's compilation and
 * `module.enableCompileCache` arrives in Node 22.1, so the bundle is a CommonJS script run through
 * `vm.Script` with `cachedData`, which every Node since 10 has.
 *
 * The cache is written by the build (`writeCodeCache`, after a `help` and a `which` have compiled
 * what they run) and names the bundle it was made from (the bundle's last line carries its hash):
 * a cache of another bundle is never offered to V8, whose own check is the source's length. A
 * cache V8 refuses (another Node, other flags) costs only the compilation it would have saved, and
 * is written again at exit where `dist/` may be written, for the next run.
 *
 * Imported by nothing of ours: it imports Node only, and runs nothing until `cliMain` is called.
 */
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Script } from 'node:vm';

/** What the bundle exports (src/cli.ts). */
interface CliBundle {
  cliMain(): Promise<never>;
  runCli(argv: readonly string[], env: NodeJS.ProcessEnv, io?: unknown): Promise<number>;
}

/** The bundle's last line: `//# rmq-build=<sha256 of what comes before it>` (scripts/build.ts). */
export const BUILD_ID_MARK = '//# rmq-build=';
const BUILD_ID = /\/\/# rmq-build=([0-9a-f]{64})\s*$/;

const bundlePath = fileURLToPath(new URL('./cli.cjs', import.meta.url));
const cachePath = `${bundlePath}.cache`;

interface Loaded {
  readonly cli: CliBundle;
  readonly script: Script;
  readonly buildId: string;
  /** The cache was missing or V8 refused it. */
  readonly cold: boolean;
}

/** The cache file: the build id (64 hex digits), then V8's bytes. */
function cacheFor(buildId: string): Buffer | undefined {
  let file: Buffer;
  try {
    file = readFileSync(cachePath);
  } catch {
    return undefined;
  }
  return file.subarray(0, 64).toString('latin1') === buildId ? file.subarray(64) : undefined;
}

function load(): Loaded {
  const source = readFileSync(bundlePath, 'utf8');
  const buildId = BUILD_ID.exec(source.slice(-100))?.[1] ?? '';
  const cachedData = buildId ? cacheFor(buildId) : undefined;
  // CommonJS's own wrapper, so the bundle's `require` and `__filename` are what Node would give it.
  const script = new Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, {
    filename: bundlePath,
    ...(cachedData ? { cachedData } : {}),
  });
  const module = { exports: {} as CliBundle };
  const wrapper = script.runInThisContext() as (...args: unknown[]) => void;
  wrapper(module.exports, createRequire(bundlePath), module, bundlePath, dirname(bundlePath));
  return { cli: module.exports, script, buildId, cold: !cachedData || script.cachedDataRejected === true };
}

/** Writes V8's cache of everything compiled so far, whole or not at all (a temporary file renamed). */
function saveCache(loaded: Loaded): void {
  if (!loaded.buildId) return;
  const temporary = `${cachePath}.${process.pid}`;
  writeFileSync(
    temporary,
    Buffer.concat([Buffer.from(loaded.buildId, 'latin1'), loaded.script.createCachedData()]),
  );
  renameSync(temporary, cachePath);
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
