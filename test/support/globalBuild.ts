/**
 * Vitest's global setup: the production JavaScript built once for the whole run (built.ts) and
 * named in RMQ_TEST_BUILD for the test processes (each test file runs in one of its own; a build
 * per file cost about 1.7 s each), removed when the run ends.
 */
import { rmSync } from 'node:fs';
import { BUILD_ENV, buildHome, buildInto } from './built.ts';

export default async function setup(): Promise<() => void> {
  const home = buildHome(`run-${process.pid}`);
  await buildInto(home);
  process.env[BUILD_ENV] = home;
  return () => rmSync(home, { recursive: true, force: true });
}
