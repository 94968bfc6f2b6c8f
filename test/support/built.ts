/**
 * The production JavaScript (`scripts/build.ts`), built once per test process into a folder of
 * its own inside the repository (so `main.js` finds node_modules as it does in the image), laid
 * out as the package is (`bin/rmq.js` beside `dist/`), removed when the process ends.
 */
import { copyFileSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BuildResult, build } from '../../scripts/build.ts';

export const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

export interface Built extends BuildResult {
  /** The package's `bin`, next to this build's `dist/`. */
  readonly bin: string;
}

let once: Promise<Built> | undefined;

export function built(): Promise<Built> {
  if (!once) {
    const home = join(repoRoot, 'node_modules', '.cache', `rmq-test-build-${process.pid}`);
    process.once('exit', () => rmSync(home, { recursive: true, force: true }));
    once = build(join(home, 'dist')).then((result) => {
      mkdirSync(join(home, 'bin'), { recursive: true });
      const bin = join(home, 'bin', 'rmq.js');
      copyFileSync(join(repoRoot, 'bin', 'rmq.js'), bin);
      return { ...result, bin };
    });
  }
  return once;
}
