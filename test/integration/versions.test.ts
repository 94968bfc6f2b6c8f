/**
 * The same policies, explained by the rules of the version the bot reads from each broker.
 * Needs both brokers: the machine's 3.10 and the 4.0 of scripts/broker-4.
 */
import { describe, expect, it } from 'vitest';
import { which } from '../../commands/which.ts';
import { acceptedApplyTo } from '../../src/policy/keys.ts';
import { RabbitError } from '../../src/rabbit/index.ts';
import { uniqueName, waitFor } from '../support/broker.ts';
import { BROKERS, brokersUp, clientFor } from '../support/brokers.ts';

const { up } = await brokersUp();
const three = up.find((b) => b.label === 'machine');
const four = up.find((b) => b.label === 'rabbitmq-4');

async function explainOn(broker: (typeof BROKERS)[number]) {
  const client = clientFor(broker);
  const vhost = uniqueName('ver');
  await client.putVhost(vhost);
  try {
    const { version } = await client.overview();
    const put = (name: string, priority: number, definition: Record<string, unknown>, applyTo = 'queues') =>
      client.putPolicy('user', { vhost, name, pattern: '^cq$', applyTo, priority, definition });
    // 3.x vetoes queue-leader-locator for classic queues; 4.0 uses it. 3.12.7+ vetoes max-in-memory-length.
    await put('lead', 5, { 'queue-leader-locator': 'client-local' });
    await put('mem', 3, { 'max-in-memory-length': 10 });
    await put('base', 0, { 'max-length': 1 });
    let scoped: string;
    try {
      await put('classic-only', -1, { 'max-length': 2 }, 'classic_queues');
      scoped = 'accepted';
    } catch (err) {
      scoped = err instanceof RabbitError && err.code === 'refused-by-broker' ? 'refused' : 'error';
    }
    await client.putQueue(vhost, 'cq', { kind: 'classic' });
    const answer = await waitFor(
      async () => {
        const r = await which({ name: 'cq', vhost }, client);
        return r.answer === 'reported' ? r : undefined;
      },
      { deadlineMs: 30_000, intervalMs: 500, what: 'the broker to report cq' },
    );
    return { version, answer, scoped };
  } finally {
    await client.deleteVhost(vhost);
    await client.close();
  }
}

describe.skipIf(!three || !four)('one set of policies, two broker versions', () => {
  it('3.10 and 4.0 govern the same classic queue with different policies, and the bot explains each', async () => {
    const [old, neu] = await Promise.all([explainOn(three!), explainOn(four!)]);
    expect(old.version.major).toBe(3);
    expect(neu.version.major).toBe(4);

    // 3.10: queue-leader-locator refuses `lead` for a classic queue; `mem` wins.
    expect(old.answer.inForce?.name).toBe('mem');
    expect(old.answer.alsoMatched).toEqual([
      { name: 'lead', priority: 5, reason: 'refused-key', keys: ['queue-leader-locator'], unanchored: false },
      { name: 'base', priority: 0, reason: 'lower-priority', unanchored: false },
    ]);
    expect(old.answer.disagreements).toEqual([]);
    // 4.0: classic queues take queue-leader-locator and refuse max-in-memory-length.
    expect(neu.answer.inForce?.name).toBe('lead');
    expect(neu.answer.alsoMatched).toEqual([
      { name: 'mem', priority: 3, reason: 'refused-key', keys: ['max-in-memory-length'], unanchored: false },
      { name: 'base', priority: 0, reason: 'lower-priority', unanchored: false },
      { name: 'classic-only', priority: -1, reason: 'lower-priority', unanchored: false },
    ]);
    expect(neu.answer.disagreements).toEqual([]);

    // apply-to classic_queues: refused by 3.10, accepted by 4.0 — as the bot's table says.
    expect(old.scoped).toBe(acceptedApplyTo(old.version).includes('classic_queues') ? 'accepted' : 'refused');
    expect(neu.scoped).toBe(acceptedApplyTo(neu.version).includes('classic_queues') ? 'accepted' : 'refused');
    expect([old.scoped, neu.scoped]).toEqual(['refused', 'accepted']);
  }, 90_000);
});

if (!three || !four) {
  describe('one set of policies, two broker versions', () => {
    it.skip(`SKIPPED: needs both brokers up (${BROKERS.map((b) => b.url).join(', ')})`, () => {});
  });
}
