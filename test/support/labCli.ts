/**
 * The built CLI (`bin/rmq.js`, built.ts) against the lab (scripts/lab.ts) in a vhost of its own on
 * the machine's broker: set up before the file's tests, removed after. For the e2e files that ask
 * the lab as a user would.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { setUpLab } from '../../scripts/lab.ts';
import type { LabClient } from '../../src/rabbit/lab.ts';
import { adminClient, brokerCredentials, brokerUrl, uniqueName } from './broker.ts';
import { type Built, built } from './built.ts';
import { type CliRun, runBuiltRmq } from './cli.ts';

export interface LabCli {
  readonly vhost: string;
  readonly client: LabClient;
  /** `rmq …args` as a process, with the broker's URL and credentials only. */
  rmq(...args: string[]): Promise<CliRun>;
}

/** Registers the lab's setup and removal with the file's `beforeAll` / `afterAll`. */
export function builtCliOnLab(name: string): LabCli {
  const vhost = uniqueName(name);
  const client = adminClient();
  const cwd = mkdtempSync(join(tmpdir(), `rmq-cli-${name}-`));
  let pkg: Built | undefined;
  beforeAll(async () => {
    [pkg] = await Promise.all([built(), setUpLab(client, vhost)]);
  });
  afterAll(async () => {
    await client.deleteVhost(vhost);
    await client.close();
    rmSync(cwd, { recursive: true, force: true });
  });
  return {
    vhost,
    client,
    rmq(...args) {
      if (!pkg) throw new Error('builtCliOnLab: asked before the lab was set up');
      const { user, password } = brokerCredentials();
      return runBuiltRmq(
        pkg.bin,
        args,
        { RMQ_URL: brokerUrl(), RMQ_USER: user, RMQ_PASSWORD: password },
        cwd,
      );
    },
  };
}
