/**
 * The production JavaScript (`scripts/build.ts`), built into a folder of its own inside the
 * repository (so `main.js` finds node_modules as it does in the image), laid out as the package
 * is (`bin/rmq.js` beside `dist/`). Built once per test run by vitest's global setup
 * (globalBuild.ts), which names the folder in RMQ_TEST_BUILD for every test process; a process
 * started without it (a bench, a file run another way) builds its own, removed when it ends.
 */
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BuildResult, build } from '../../scripts/build.ts';

export const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

/** The environment variable naming the run's build folder (globalBuild.ts sets it). */
export const BUILD_ENV = 'RMQ_TEST_BUILD';

export interface Built extends BuildResult {
  /** The package's `bin`, next to this build's `dist/`. */
  readonly bin: string;
}

/** Builds into `home` (`home/dist`, `home/bin/rmq.js`) and notes what was built (`home/built.json`). */
export async function buildInto(home: string): Promise<Built> {
  const result = await build(join(home, 'dist'));
  mkdirSync(join(home, 'bin'), { recursive: true });
  const bin = join(home, 'bin', 'rmq.js');
  copyFileSync(join(repoRoot, 'bin', 'rmq.js'), bin);
  // What makes `bin/rmq.js` CommonJS (its `type`), as in the package.
  copyFileSync(join(repoRoot, 'bin', 'package.json'), join(home, 'bin', 'package.json'));
  // As the package lays it out: package.json beside bin/ and dist/ (`rmq --version` reads it).
  copyFileSync(join(repoRoot, 'package.json'), join(home, 'package.json'));
  const done: Built = { ...result, bin };
  writeFileSync(join(home, 'built.json'), JSON.stringify(done));
  return done;
}

/** A folder for a build, under node_modules/.cache. */
export const buildHome = (owner: number | string) =>
  join(repoRoot, 'node_modules', '.cache', `rmq-test-build-${owner}`);

let once: Promise<Built> | undefined;

export function built(): Promise<Built> {
  if (!once) {
    const shared = process.env[BUILD_ENV];
    if (shared && existsSync(join(shared, 'built.json'))) {
      once = Promise.resolve(JSON.parse(readFileSync(join(shared, 'built.json'), 'utf8')) as Built);
    } else {
      const home = buildHome(process.pid);
      process.once('exit', () => rmSync(home, { recursive: true, force: true }));
      once = buildInto(home);
    }
  }
  return once;
}
