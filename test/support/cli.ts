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
