/**
 * `rmq preview …` end to end on the product's lab scenario, in a fresh vhost per broker:
 * the JSON document of INTERFACE.md, the text, and the exit codes (0 answered, 2 refused,
 * 3 broker not asked).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setUpLab } from '../../scripts/lab.ts';
import { runCli } from '../../src/terminal/cli.ts';
import { uniqueName } from '../support/broker.ts';
import { brokersUp, clientFor, type TestBroker } from '../support/brokers.ts';

const { up } = await brokersUp();

async function cli(broker: TestBroker, args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const env: NodeJS.ProcessEnv = { ...process.env, RMQ_URL: broker.url };
  delete env.RMQ_ENVIRONMENTS;
  const code = await runCli(args, env, { out: (s) => (out += s), err: (s) => (err += s) });
  return { code, out, err };
}

describe.each(up.map((b) => [b.label, b] as [string, TestBroker]))('rmq preview on %s', (_label, broker) => {
  const vhost = uniqueName('preview-cli');
  const client = clientFor(broker);

  beforeAll(async () => {
    await setUpLab(client, vhost);
  }, 120_000);
  afterAll(async () => {
    await client.deleteVhost(vhost);
    await client.close();
  });

  it('delete: what orders.audit falls back to, and the dead-letter target it loses', async () => {
    const { code, out } = await cli(broker, [
      'preview',
      'delete',
      'audit-retention',
      '--vhost',
      vhost,
      '--json',
    ]);
    expect(code).toBe(0);
    const json = JSON.parse(out);
    expect(json.change).toMatchObject({
      action: 'delete',
      policy: 'audit-retention',
      vhost,
      operator: false,
      after: null,
    });
    expect(json.change.before.definition).toEqual({ 'dead-letter-exchange': 'audit.dlx' });
    expect(json.objects).toEqual([
      expect.objectContaining({
        name: 'orders.audit',
        kind: 'classic',
        before: { policy: 'audit-retention' },
        after: { policy: 'audit-fallback' },
        lost: { 'dead-letter-exchange': 'audit.dlx' },
        // The operator policy already gave both; its 10 minutes stay stricter than the fallback's hour.
        gained: {},
        changed: {},
        heldBy: { 'max-length': 'operator-policy', 'message-ttl': 'both' },
      }),
    ]);
    expect(json.unpredictable).toEqual([]);
    expect(json.summary.risks[0]).toMatchObject({ risk: 'dead-letter', count: 1 });
  });

  it('text output leads with what hurts', async () => {
    const { code, out } = await cli(broker, ['preview', 'delete', 'audit-retention', '--vhost', vhost]);
    expect(code).toBe(0);
    expect(out.split('\n').find((l) => l.startsWith('What hurts'))).toBe('What hurts:');
    expect(out).toMatch(/1 object would lose a dead-letter target \[dead-letter-exchange\]: orders\.audit/);
  });

  it('create: a new tie and the unanchored pattern catch', async () => {
    const { code, out } = await cli(broker, [
      'preview',
      'create',
      'wide',
      '--pattern',
      'orders',
      '--apply-to',
      'queues',
      '--priority',
      '1',
      '--definition',
      '{"max-length": 5}',
      '--vhost',
      vhost,
      '--json',
    ]);
    expect(code).toBe(0);
    const json = JSON.parse(out);
    const processing = json.objects.find((o: { name: string }) => o.name === 'orders.processing');
    expect(processing.after.candidates.sort()).toEqual(['audit-fallback', 'wide']);
    expect(json.summary.newTies.count).toBeGreaterThanOrEqual(1);
    expect(json.summary.unanchoredCatch).toMatchObject({ pattern: 'orders', names: ['retry.orders.dlq'] });
    expect(json.warnings.map((w: { code: string }) => w.code)).toContain('pattern-unanchored');
  });

  it('refusals exit 2 with the reasons; a missing vhost too', async () => {
    const taken = await cli(broker, [
      'preview',
      'create',
      'audit-fallback',
      '--pattern',
      '^x',
      '--definition',
      '{"max-lenght":1}',
      '--vhost',
      vhost,
      '--json',
    ]);
    expect(taken.code).toBe(2);
    const json = JSON.parse(taken.out);
    expect(json.error.code).toBe('refused');
    expect(json.refusals.map((p: { code: string }) => p.code).sort()).toEqual(['name-taken', 'unknown-key']);
    const moving = await cli(broker, [
      'preview',
      'edit',
      'orders-ceiling',
      '--priority',
      '2',
      '--vhost',
      vhost,
    ]);
    expect(moving.code).toBe(2);
    expect(moving.out).toMatch(/is an operator policy\. A policy cannot move between the two/);
    const badJson = await cli(broker, [
      'preview',
      'create',
      'x',
      '--pattern',
      'a',
      '--definition',
      '{nope',
      '--vhost',
      vhost,
    ]);
    expect(badJson.code).toBe(2);
    expect(badJson.err).toMatch(/not valid JSON/);
    const missing = await cli(broker, ['preview', 'delete', 'x', '--vhost', uniqueName('missing'), '--json']);
    expect(missing.code).toBe(2);
    expect(JSON.parse(missing.out).error.code).toBe('missing-vhost');
  });

  it('a definition number JSON cannot carry exactly (beyond 2^53) is refused, exit 2, saying so; nothing rounded', async () => {
    const create = (definition: string, ...more: string[]) =>
      cli(broker, [
        'preview',
        'create',
        'huge-cap',
        '--pattern',
        '^orders\\.',
        '--definition',
        definition,
        '--vhost',
        vhost,
        ...more,
      ]);
    const big = await create('{"max-length": 12345678901234567890}', '--json');
    expect(big.code).toBe(2);
    const json = JSON.parse(big.out);
    expect(json.refusals).toEqual([expect.objectContaining({ code: 'number-inexact', key: 'max-length' })]);
    expect(json.refusals[0].message).toMatch(/beyond 9007199254740991 .*written as 12345678901234567000/);
    const text = await create('{"message-ttl": 1e400}');
    expect(text.code).toBe(2);
    expect(text.out).toMatch(/message-ttl is a number beyond .* written as null/);
    expect(await client.getPolicy('user', vhost, 'huge-cap')).toBeNull();
  });

  it('an unreachable broker exits 3 and claims nothing', async () => {
    let out = '';
    const env: NodeJS.ProcessEnv = { ...process.env, RMQ_URL: 'http://127.0.0.1:9' };
    delete env.RMQ_ENVIRONMENTS;
    const code = await runCli(['preview', 'delete', 'audit-retention', '--vhost', vhost, '--json'], env, {
      out: (s) => (out += s),
      err: () => {},
    });
    expect(code).toBe(3);
    expect(JSON.parse(out).error.code).toBe('unreachable');
  });
});
