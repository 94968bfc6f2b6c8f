import { execFile, spawn } from 'node:child_process';
import { runCli } from '../../src/terminal/cli.ts';

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

/**
 * As `runBuiltRmq`, with stdout read as a slow reader reads a pipe (`| jq` on a busy machine):
 * nothing for `firstReadMs`, then one chunk at a time with a pause after each. A process that
 * exits before its output is taken loses what the pipe (64 KiB) did not hold, so this proves it waits.
 */
export function runBuiltRmqSlowly(
  bin: string,
  argv: readonly string[],
  env: Record<string, string>,
  cwd: string,
  { firstReadMs = 400, pauseMs = 10 }: { firstReadMs?: number; pauseMs?: number } = {},
): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...argv], {
      cwd,
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    const out: Buffer[] = [];
    let err = '';
    child.stderr.setEncoding('utf8').on('data', (s: string) => (err += s));
    child.stdout.on('data', (b: Buffer) => {
      out.push(b);
      child.stdout.pause();
      setTimeout(() => child.stdout.resume(), pauseMs);
    });
    // After the listener: adding a 'data' listener starts the flow.
    child.stdout.pause();
    setTimeout(() => child.stdout.resume(), firstReadMs);
    child.once('error', reject);
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code: code ?? (signal ? 128 : 1), out: Buffer.concat(out).toString('utf8'), err });
    });
  });
}
