import { execFile } from 'node:child_process';
import { runCli } from '../../src/cli.ts';

/** What one in-process run of the terminal command printed, and its exit code. */
export interface CliRun {
  readonly code: number;
  readonly out: string;
  readonly err: string;
}

/** Runs `rmq …argv` in this process with `env` as its environment, capturing both streams. */
export async function runRmq(env: NodeJS.ProcessEnv, argv: readonly string[]): Promise<CliRun> {
  let out = '';
  let err = '';
  const code = await runCli([...argv], env, { out: (s) => (out += s), err: (s) => (err += s) });
  return { code, out, err };
}

/**
 * Runs the package's `bin` (`node bin/rmq.js …argv`, see built.ts) as a process, as a user runs
 * `npx rmq`: a clean environment (PATH and `env` only) and `cwd`, so a developer's own `.env`
 * does not count.
 */
export function runBuiltRmq(
  bin: string,
  argv: readonly string[],
  env: Record<string, string>,
  cwd: string,
): Promise<CliRun> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [bin, ...argv],
      { cwd, env: { PATH: process.env.PATH ?? '', ...env }, timeout: 60_000, maxBuffer: 16 << 20 },
      (err, out, errOut) => {
        const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
        resolve({ code, out, err: errOut });
      },
    );
  });
}
