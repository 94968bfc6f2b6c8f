/**
 * `lint` against the real brokers (3.10.8, 4.0.5, 4.3.6): one vhost holding every kind of §2b
 * once, each beside a case that must not fire, linted, and then the broker asked what governs
 * each object: a `tie` is two policies both matching an object there now (the broker reports one;
 * without it, the other); `shadowed` means the broker reports another policy on every object it
 * matches; `cannot-govern` means the broker reports no policy from it on that object; the rest
 * as each says. Nothing else is found: the exact list of findings is asserted.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LintResult, lint } from '../../src/commands/lint/lint.ts';
import { policies } from '../../src/commands/policies/policies.ts';
import { atLeast } from '../../src/policy/types.ts';
import type { LabClient } from '../../src/rabbit/lab.ts';
import { uniqueName, waitFor } from '../support/broker.ts';
import { brokersUp, clientFor, type TestBroker } from '../support/brokers.ts';
import { type Messages, messages } from '../support/messages.ts';

const { up } = await brokersUp();

type Def = Record<string, unknown>;

async function world(client: LabClient, vhost: string, perQueueType: boolean): Promise<void> {
  const user = (name: string, pattern: string, priority: number, definition: Def, applyTo = 'queues') =>
    client.putPolicy('user', { vhost, name, pattern, applyTo, priority, definition });
  const operator = (name: string, pattern: string, definition: Def) =>
    client.putPolicy('operator', { vhost, name, pattern, applyTo: 'queues', priority: 0, definition });
  const q = (name: string, kind: 'classic' | 'quorum' | 'stream' = 'classic') =>
    client.putQueue(vhost, name, { kind });
  // tie, and two policies at one priority whose apply-tos never meet
  await user('tie-a', '^tie\\.', 5, { 'max-length': 10 });
  await user('tie-b', '^tie\\.', 5, { 'max-length': 20 });
  await q('tie.q');
  await user('nt-q', '^nt\\.', 6, { 'max-length': 5 });
  await user('nt-x', '^nt\\.', 6, { 'alternate-exchange': 'ae.ok' }, 'exchanges');
  await q('nt.q');
  await client.putExchange(vhost, 'nt.x', 'fanout');
  await client.putExchange(vhost, 'ae.ok', 'fanout');
  if (perQueueType) {
    await user('nt-c', '^ntc\\.', 7, { 'max-length': 5 }, 'classic_queues');
    await user('nt-qq', '^ntc\\.', 7, { 'max-length': 6 }, 'quorum_queues');
    await q('ntc.c');
    await q('ntc.q', 'quorum');
  }
  // shadowed, and one that loses somewhere but governs elsewhere
  await user('sh-high', '^sh\\.', 9, { 'max-length': 3 });
  await user('sh-low', '^sh\\.', 2, { 'max-length': 4 });
  await user('sh-some', '^(sh|sx)\\.', 3, { 'max-length': 7 });
  await q('sh.q');
  await q('sx.q');
  // cannot-govern: a stream and message-ttl; max-age it takes
  await user('cg-ttl', '^cg\\.', 1, { 'message-ttl': 1000 });
  await user('cg-age', '^cga\\.', 1, { 'max-age': '1D' });
  await q('cg.s', 'stream');
  await q('cga.s', 'stream');
  // unanchored: catches retry.unx.q; uny only names that start with it
  await user('un', 'unx', 1, { 'max-length': 9 });
  await user('un-ok', 'uny', 1, { 'max-length': 9 });
  await q('retry.unx.q');
  await q('unx.q');
  await q('uny.q');
  // missing-target, and a dead-letter exchange that exists
  await user('mt', '^mt\\.', 1, { 'dead-letter-exchange': 'mt.nope' });
  await user('mt-ok', '^mtok\\.', 1, { 'dead-letter-exchange': 'mt.dlx' });
  await client.putExchange(vhost, 'mt.dlx', 'fanout');
  await q('mt.q');
  await q('mtok.q');
  // missing-target on an exchange: an alternate exchange that does not exist
  await user('ae-gone', '^aex\\.', 1, { 'alternate-exchange': 'ae.nope' }, 'exchanges');
  await client.putExchange(vhost, 'aex.x', 'topic');
  // expires-idle: messages and no consumer; empty; a consumer attached
  await user('ex', '^ex\\.', 1, { expires: 3_600_000 });
  await user('ex-c', '^exc\\.', 1, { expires: 3_600_000 });
  await q('ex.full');
  await q('ex.empty');
  await q('exc.q');
  // operator-never-stricter, and an operator limit that bites
  await user('op-user', '^op\\.', 1, { 'max-length': 10 });
  await operator('op-high', '^op\\.', { 'max-length': 1000 });
  await user('opl-user', '^opl\\.', 1, { 'max-length': 10 });
  await operator('op-low', '^opl\\.', { 'max-length': 5 });
  await q('op.q');
  await q('opl.q');
}

describe.each(up.map((b) => [b.label, b] as const))('lint on %s', (_label, broker: TestBroker) => {
  const vhost = uniqueName('lint');
  let client: LabClient;
  let amqp: Messages;
  let detach: () => Promise<void>;
  let perQueueType = false;
  let result: LintResult;

  beforeAll(async () => {
    client = clientFor(broker);
    await client.putVhost(vhost);
    perQueueType = atLeast((await client.overview()).version, 3, 12);
    await world(client, vhost, perQueueType);
    amqp = await messages(broker, vhost);
    await amqp.publish('ex.full', 3);
    await amqp.publish('exc.q', 2);
    detach = await amqp.attach('exc.q');
    // The statistics lag: first until the broker reports ex.full's messages and exc.q's consumer
    // (exc.q's messages seen before its consumer made a second, passing expires-idle), then lint
    // until it reads them too.
    await waitFor(
      async () => {
        const [full, held] = await Promise.all([
          client.getQueue(vhost, 'ex.full'),
          client.getQueue(vhost, 'exc.q'),
        ]);
        return full?.live?.messages === 3 && held?.live?.consumers === 1;
      },
      {
        what: "the statistics to show ex.full's messages and exc.q's consumer",
        deadlineMs: 45_000,
        intervalMs: 500,
      },
    );
    result = await waitFor(
      async () => {
        const r = await lint({ vhost }, client, { env: 'test' });
        const idle = r.findings.filter((f) => f.kind === 'expires-idle');
        return idle.length === 1 && idle[0]?.kind === 'expires-idle' && idle[0].messages === 3
          ? r
          : undefined;
      },
      { what: 'lint to see the queued messages', deadlineMs: 45_000, intervalMs: 1000 },
    );
  }, 90_000);

  afterAll(async () => {
    await detach?.();
    await amqp?.close();
    await client.deleteVhost(vhost);
    await client.close();
  });

  const userPolicyOf = (name: string) => client.queuePolicyFromRecord(vhost, name);
  const find = (kind: string, policy: string) =>
    result.findings.find((f) => f.kind === kind && f.policy === policy);

  it('finds exactly the kinds set up, the most severe first, and nothing from the clean cases', () => {
    expect(result.answer).toBe('linted');
    expect(result.env).toBe('test');
    // The policy kinds; the durability kinds of the same world after (test/integration/lint-durability.test.ts).
    const byPolicy = result.findings.filter((f) => f.policy !== '');
    expect(byPolicy.map((f) => [f.severity, f.kind, f.policy, f.objects])).toEqual([
      ['error', 'tie', 'tie-a', ['tie.q']],
      ['error', 'missing-target', 'ae-gone', ['aex.x']],
      ['error', 'missing-target', 'mt', ['mt.q']],
      ['error', 'expires-idle', 'ex', ['ex.full']],
      ['warning', 'cannot-govern', 'cg-ttl', ['cg.s']],
      ['warning', 'unanchored', 'un', ['retry.unx.q']],
      ['info', 'shadowed', 'sh-low', ['sh.q']],
      ['info', 'operator-never-stricter', 'op-high', ['op.q']],
    ]);
    for (const f of result.findings) {
      expect(f.objectCount).toBe(f.objects.length);
      expect(f.why).toMatch(/^[A-Z].*\.$/);
    }
  });

  it('tie: the broker reports one of the two on the object, and without it the other', async () => {
    const tie = find('tie', 'tie-a');
    expect(tie).toMatchObject({ policies: ['tie-a', 'tie-b'], priority: 5 });
    const first = await userPolicyOf('tie.q');
    expect(['tie-a', 'tie-b']).toContain(first);
    const other = first === 'tie-a' ? 'tie-b' : 'tie-a';
    const kept = (await client.getPolicy('user', vhost, first as string))!;
    await client.deletePolicy('user', vhost, first as string);
    try {
      expect(await userPolicyOf('tie.q')).toBe(other);
    } finally {
      await client.putPolicy('user', kept);
    }
  });

  it('no tie where the apply-tos never meet: each governs its own kind, and policies marks no tie', async () => {
    expect(await userPolicyOf('nt.q')).toBe('nt-q');
    expect((await client.getExchange(vhost, 'nt.x'))?.policy).toBe('nt-x');
    if (perQueueType) {
      expect(await userPolicyOf('ntc.c')).toBe('nt-c');
      expect(await userPolicyOf('ntc.q')).toBe('nt-qq');
    }
    // `policies` reads no objects: at one priority, the apply-tos decide (issue 28, item 12).
    const listed = await policies({ vhost }, client);
    const tie = new Map(listed.policies.map((p) => [p.name, p.tie]));
    expect([tie.get('tie-a'), tie.get('tie-b'), tie.get('nt-q'), tie.get('nt-x')]).toEqual([
      true,
      true,
      false,
      false,
    ]);
    if (perQueueType) expect([tie.get('nt-c'), tie.get('nt-qq')]).toEqual([false, false]);
  });

  it('shadowed: the broker reports another policy on every object it matches; one that governs somewhere is not', async () => {
    expect(find('shadowed', 'sh-low')).toMatchObject({ by: ['sh-high'] });
    expect(await userPolicyOf('sh.q')).toBe('sh-high');
    expect(await userPolicyOf('sx.q')).toBe('sh-some');
  });

  it('cannot-govern: the broker reports no policy from it on the stream; the same with max-age governs', async () => {
    expect(find('cannot-govern', 'cg-ttl')).toMatchObject({ keys: ['message-ttl'] });
    expect(await userPolicyOf('cg.s')).toBeNull();
    expect(await userPolicyOf('cga.s')).toBe('cg-age');
  });

  it('unanchored: the broker applies it to the name that merely contains it; a name starting with it is no catch', async () => {
    expect(find('unanchored', 'un')).toMatchObject({ pattern: 'unx', objects: ['retry.unx.q'] });
    expect(await userPolicyOf('retry.unx.q')).toBe('un');
    expect(await userPolicyOf('unx.q')).toBe('un');
    expect(await userPolicyOf('uny.q')).toBe('un-ok');
  });

  it('missing-target: the policy governs the queue and the exchange it names does not exist; one that exists is fine', async () => {
    expect(find('missing-target', 'mt')).toMatchObject({ key: 'dead-letter-exchange', target: 'mt.nope' });
    expect(await userPolicyOf('mt.q')).toBe('mt');
    expect(await client.getExchange(vhost, 'mt.nope')).toBeNull();
    expect(await userPolicyOf('mtok.q')).toBe('mt-ok');
    expect(await client.getExchange(vhost, 'mt.dlx')).not.toBeNull();
    expect(find('missing-target', 'ae-gone')).toMatchObject({ key: 'alternate-exchange', target: 'ae.nope' });
    expect((await client.getExchange(vhost, 'aex.x'))?.policy).toBe('ae-gone');
    expect(await client.getExchange(vhost, 'ae.nope')).toBeNull();
  });

  it('expires-idle: the governed queue holds messages and no consumer; with a consumer it is not', async () => {
    const idle = find('expires-idle', 'ex');
    expect(idle).toMatchObject({ expiresMs: 3_600_000, messages: 3, objectCount: 1 });
    const full = await client.getQueue(vhost, 'ex.full');
    expect(full?.live).toMatchObject({ messages: 3, consumers: 0 });
    expect(await userPolicyOf('ex.full')).toBe('ex');
    const held = await client.getQueue(vhost, 'exc.q');
    expect(held?.live?.consumers).toBe(1);
    expect(await userPolicyOf('exc.q')).toBe('ex-c');
  });

  it('operator-never-stricter: the broker keeps the user limit under it; the lower one bites', async () => {
    expect(find('operator-never-stricter', 'op-high')).toMatchObject({
      operator: true,
      key: 'max-length',
      limit: 1000,
      highestOwn: 10,
    });
    const seen = await waitFor(
      async () => {
        const [high, low] = await Promise.all([
          client.getQueue(vhost, 'op.q'),
          client.getQueue(vhost, 'opl.q'),
        ]);
        return high?.operatorPolicy && low?.operatorPolicy ? { high, low } : undefined;
      },
      { what: 'the operator policies in the statistics', deadlineMs: 30_000, intervalMs: 500 },
    );
    expect(seen.high.operatorPolicy).toBe('op-high');
    expect(seen.high.effectiveDefinition?.['max-length']).toBe(10);
    expect(seen.low.operatorPolicy).toBe('op-low');
    expect(seen.low.effectiveDefinition?.['max-length']).toBe(5);
  });
});
