/**
 * `npm run lab` as a user runs it (`tsx scripts/lab.ts`, a process of its own, an empty working
 * directory so a developer's .env does not count): `--help` prints help and changes nothing,
 * `--vhost NAME` builds the lab there (and `--down --vhost NAME` removes it), arguments it does
 * not know are refused with exit 2, named, before the broker is asked anything.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LAB_VHOST, parseLabArgs } from '../../scripts/lab.ts';
import { links } from '../../src/commands/links/index.ts';
import { adminClient, brokerCredentials, brokerUrl, uniqueName, waitFor } from '../support/broker.ts';
import type { CliRun } from '../support/cli.ts';

const root = resolve(import.meta.dirname, '../..');
const cwd = mkdtempSync(join(tmpdir(), 'rmq-lab-script-'));
const client = adminClient();
const made: string[] = [];

function lab(args: readonly string[]): Promise<CliRun> {
  const { user, password } = brokerCredentials();
  return new Promise((done) => {
    execFile(
      process.execPath,
      [join(root, 'node_modules/tsx/dist/cli.mjs'), join(root, 'scripts/lab.ts'), ...args],
      {
        cwd,
        env: { PATH: process.env.PATH ?? '', RMQ_URL: brokerUrl(), RMQ_USER: user, RMQ_PASSWORD: password },
        timeout: 60_000,
      },
      (err, out, errOut) =>
        done({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, out, err: errOut }),
    );
  });
}

async function exists(vhost: string): Promise<boolean> {
  return (await client.listVhosts()).includes(vhost);
}

afterAll(async () => {
  for (const v of made) await client.deleteVhost(v);
  await client.close();
  rmSync(cwd, { recursive: true, force: true });
});

describe('parseLabArgs', () => {
  it('reads the default, --vhost NAME, --vhost=NAME, --down and --help', () => {
    expect(parseLabArgs([])).toEqual({ kind: 'up', vhost: LAB_VHOST });
    expect(parseLabArgs(['--vhost', 'mine'])).toEqual({ kind: 'up', vhost: 'mine' });
    expect(parseLabArgs(['--vhost=mine', '--down'])).toEqual({ kind: 'down', vhost: 'mine' });
    expect(parseLabArgs(['--down', '--help'])).toEqual({ kind: 'help' });
    expect(parseLabArgs(['--consume', '--vhost', 'mine'])).toEqual({ kind: 'consume', vhost: 'mine' });
    expect(parseLabArgs(['--consume', '--down'])).toMatchObject({ kind: 'refused' });
  });

  it('refuses a --vhost without a name, and names every argument it does not know', () => {
    expect(parseLabArgs(['--vhost'])).toMatchObject({ kind: 'refused' });
    expect(parseLabArgs(['--vhost', '--down'])).toMatchObject({ kind: 'refused' });
    const r = parseLabArgs(['--dwon', 'extra']);
    expect(r.kind).toBe('refused');
    expect(r.kind === 'refused' && r.message).toContain('"--dwon", "extra"');
  });
});

describe('npm run lab (scripts/lab.ts as a process)', () => {
  it('--help prints the help, exit 0, and builds nothing', async () => {
    const vhost = uniqueName('lab-help');
    made.push(vhost);
    const r = await lab(['--vhost', vhost, '--help']);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toContain('--vhost NAME');
    expect(r.out).not.toContain('is ready');
    expect(await exists(vhost)).toBe(false);
  });

  it('refuses unknown arguments with exit 2, naming them, and builds nothing', async () => {
    const vhost = uniqueName('lab-bad');
    made.push(vhost);
    const r = await lab(['--vhost', vhost, '--donw']);
    expect(r.code).toBe(2);
    expect(r.err).toContain('"--donw"');
    expect(r.out).toBe('');
    expect(await exists(vhost)).toBe(false);
  });

  it('--vhost NAME builds the lab there and prints questions for it; --down --vhost NAME removes it', async () => {
    const vhost = uniqueName('lab-own');
    made.push(vhost);
    const up = await lab(['--vhost', vhost]);
    expect(up.code, up.err).toBe(0);
    expect(up.out).toContain(`npx rmq which orders.audit --vhost ${vhost}`);
    expect(up.out).toContain(`npm run lab -- --down --vhost ${vhost}`);
    const policies = await client.listPolicies(vhost);
    expect(policies.map((p) => p.name).sort()).toContain('audit-retention');
    // Its links, where the plugins are enabled: one federated exchange runs, one fails on purpose.
    expect(up.out).toContain(`npx rmq links --vhost ${vhost}`);
    if ((await client.overview()).exchangeTypes?.includes('x-federation-upstream')) {
      const answer = await waitFor(
        async () => {
          const r = await links({ vhost }, client, { env: 'lab' });
          const state = (o: string) => r.links.find((l) => l.object === o)?.state;
          return state('orders.inbound') === 'running' && state('orders.west') === 'stopped' ? r : undefined;
        },
        { deadlineMs: 30_000, what: "the lab's links to settle" },
      );
      expect(answer.risks.some((k) => k.name === 'dc-west' && k.key === 'ack-mode')).toBe(true);
    }

    const down = await lab(['--down', '--vhost', vhost]);
    expect(down.code, down.err).toBe(0);
    expect(await exists(vhost)).toBe(false);
  });
});
