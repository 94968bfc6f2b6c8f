/**
 * `npx rmq path` as users run it: the built `bin/rmq.js` against the lab (scripts/lab.ts) in a
 * vhost of its own on the real broker: payments.inbox's 12 transient messages of 16 are what a
 * restart loses, the --json document has the contract's keys, a missing name exits 0 with the
 * close names, a bad flag exits 2.
 */
import { describe, expect, it } from 'vitest';
import type { PathResult } from '../../src/commands/path/index.ts';
import { waitFor } from '../support/broker.ts';
import { builtCliOnLab } from '../support/labCli.ts';

const { vhost, rmq } = builtCliOnLab('path-lab');

describe('rmq path on the lab', () => {
  it('--json: the contract keys, and the 12 transient messages a restart loses', async () => {
    const r = await waitFor(
      async () => {
        const run = await rmq('path', 'payments.inbox', '--vhost', vhost, '--json');
        expect(run.code, run.err).toBe(0);
        const p = JSON.parse(run.out) as PathResult;
        expect(p.queue.messages).toBe(16);
        // The persistent count is collected apart from the count (3.10): both out, not one.
        expect(p.queue.transient).toBe(12);
        return p;
      },
      { what: 'the statistics of payments.inbox' },
    );
    expect(Object.keys(r)).toEqual(
      expect.arrayContaining(['env', 'vhost', 'object', 'in', 'queue', 'out', 'survives']),
    );
    expect(r.object).toEqual({
      name: 'payments.inbox',
      kind: 'classic',
      durable: true,
      type: 'classic',
      exists: true,
    });
    expect(Object.keys(r.in)).toEqual(expect.arrayContaining(['exchanges', 'publishers']));
    expect(Object.keys(r.in.exchanges[0] ?? {})).toEqual(
      expect.arrayContaining([
        'name',
        'durable',
        'alternateExchange',
        'alternateExists',
        'unroutableDropped',
        'unroutableReturned',
      ]),
    );
    expect(Object.keys(r.queue)).toEqual(
      expect.arrayContaining([
        'messages',
        'transient',
        'replicas',
        'online',
        'nodes',
        'deadLetter',
        'deliveryLimit',
        'poison',
      ]),
    );
    expect(Object.keys(r.out)).toEqual(['consumers', 'autoAck', 'unlimitedPrefetch']);
    expect(Object.keys(r.survives).sort()).toEqual([
      'consumer-crash',
      'node-loss',
      'poison',
      'restart',
      'unroutable',
    ]);
    expect(r.survives.restart).toMatchObject({ holds: false, lost: 12 });
    expect(r.queue.transient).toBe(12);
    expect(r.upgrade).toBeNull();
  });

  it('text: the failures first, then the chain; the vhost and environment last', async () => {
    const run = await rmq('path', 'payments.inbox', '--vhost', vhost);
    expect(run.code, run.err).toBe(0);
    expect(run.out.split('\n')[2]).toMatch(/^ {2}DOES NOT HOLD {2}restart: 12 transient messages of 16/);
    expect(run.out.trimEnd().split('\n').at(-1)).toBe(
      `Answered for vhost "${vhost}" in environment default.`,
    );
  });

  it('a name nothing has: exit 0, the close names; a bad flag: exit 2 with the usage', async () => {
    const missing = await rmq('path', 'payments.inbx', '--vhost', vhost);
    expect(missing.code, missing.err).toBe(0);
    expect(missing.out).toContain('"payments.inbox"');
    const bad = await rmq('path', 'payments.inbox', '--kind', 'topic', '--vhost', vhost);
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/path NAME/);
  });
});
