/**
 * The rules of immediate effect (src/policy/impact/impact.ts) proven by behaviour on each real broker:
 * messages published, the preview asked what the change will do to them, the change made, and
 * the broker watched doing it (or, where the rule says nothing happens now, a control showing
 * that the change is in force while the messages stay). The table is rows here.
 *
 * Counts on the observing side are read by fetching the messages (requeued), not from the
 * statistics, which lag; the preview's own reading is polled until its statistics show what
 * was published, as a user would see them settle.
 */
import { describe, expect, it } from 'vitest';
import type { Impact, ImpactTotals } from '../../src/policy/impact/impact.ts';
import type { ObjectKind } from '../../src/policy/types.ts';
import type { LiveNow, PreviewObject } from '../../src/preview/impact.ts';
import { type PreviewAnswer, type PreviewInput, preview } from '../../src/preview/preview.ts';
import { uniqueName, waitFor } from '../support/broker.ts';
import { brokersUp, clientFor, type TestBroker } from '../support/brokers.ts';
import { deadLetteredOver, lostToMissingDeadLetter } from '../support/hazards.ts';
import { amqpUrl, type Messages, management, messages } from '../support/messages.ts';

const { up } = await brokersUp();

type Api = ReturnType<typeof management>;

interface World {
  readonly api: Api;
  readonly amqp: Messages;
  readonly kind: ObjectKind;
  /** This vhost's AMQP URL, with the test credentials (for a federation upstream). */
  readonly amqpUrl: string;
}

interface Row {
  readonly what: string;
  readonly kinds: readonly ObjectKind[];
  /** Declares and fills; returns how many messages `subject` holds before the change. */
  readonly setUp: (w: World) => Promise<number>;
  /** The change, as the preview reads it (vhost filled in). */
  readonly change: Omit<PreviewInput, 'vhost' | 'layer'>;
  /** The subject's predicted impact, and the totals. */
  readonly predicted: (kind: ObjectKind) => { impact: Impact[]; totals: Partial<ImpactTotals> };
  /**
   * Beyond the messages published, what the statistics must show before the preview is read
   * (default: all of them ready, their bytes counted).
   */
  readonly settledWhen?: (now: LiveNow) => boolean;
  /** The broker gives the preview no numbers for it (an exchange): `now` is null. */
  readonly noStatistics?: true;
  /** Needs the federation plugin: skipped, loudly, on a broker without it. */
  readonly federation?: true;
  /** Makes the change on the broker. */
  readonly apply: (w: World) => Promise<void>;
  /** Resolves once the broker has shown what it does (throws at the deadline otherwise). */
  readonly observe: (w: World, predicted: PreviewObject) => Promise<void>;
}

/**
 * Waits until the statistics say the queue holds `n`, then fetches them once to be sure (the
 * statistics lag; fetching every poll would spend a quorum queue's delivery limit).
 */
async function holds(w: World, queue: string, n: number): Promise<void> {
  await w.api.settled(queue, n);
  expect(await w.api.peek(queue)).toBe(n);
}

async function deadLetterQueue(w: World): Promise<void> {
  await w.api.exchange('dlx');
  await w.api.queue('dlq', 'classic');
  await w.api.bind('dlx', 'dlq');
}

const subjectPolicy = (definition: Record<string, unknown>, pattern = '^subject$') => ({
  action: 'create' as const,
  name: 'p',
  fields: { pattern, applyTo: 'queues', priority: 0, definition },
});

const put =
  (definition: Record<string, unknown>, pattern = '^subject$') =>
  (w: World) =>
    w.api.policy('p', pattern, definition).then(() => undefined);

/** A classic queue's limit that refuses publishes and dead-letters them, the existing excess kept. */
const REFUSING = (limit: number) => ({
  'max-length': limit,
  overflow: 'reject-publish-dlx',
  'dead-letter-exchange': 'dlx',
});

/** `subject` (classic) under p = REFUSING(30), then 19 messages published, the dead-letter queue beside it. */
async function refusingAt30(w: World): Promise<void> {
  await deadLetterQueue(w);
  await w.api.policy('p', '^subject$', REFUSING(30));
  await w.api.queue('subject', w.kind);
  await waitFor(async () => (await w.api.policyOf('subject')) === 'p', { what: 'the policy in force' });
  await w.amqp.publish('subject', 19);
}

const lowerLimitInForce = (w: World) =>
  waitFor(async () => (await w.api.effective('subject'))?.['max-length'] === 12, {
    what: 'the lower limit in force',
  });

const ROWS: Row[] = [
  {
    what: 'max-length 10 and an existing dead-letter exchange on 50: 40 dead-lettered at once',
    kinds: ['classic', 'quorum'],
    setUp: async (w) => {
      await deadLetterQueue(w);
      await w.api.queue('subject', w.kind);
      await w.amqp.publish('subject', 50);
      return 50;
    },
    change: subjectPolicy({ 'max-length': 10, 'dead-letter-exchange': 'dlx' }),
    predicted: () => ({
      impact: [deadLetteredOver(10, 40, 'dlx')],
      totals: { messagesDeadLettered: 40, messagesLost: 0 },
    }),
    apply: put({ 'max-length': 10, 'dead-letter-exchange': 'dlx' }),
    observe: async (w) => {
      await holds(w, 'subject', 10);
      await holds(w, 'dlq', 40);
    },
  },
  {
    what: 'max-length 5 and a dead-letter exchange that does not exist, on 30: 25 lost',
    kinds: ['classic', 'quorum'],
    setUp: async (w) => {
      await w.api.queue('subject', w.kind);
      await w.amqp.publish('subject', 30);
      return 30;
    },
    change: subjectPolicy({ 'max-length': 5, 'dead-letter-exchange': 'no-such-dlx' }),
    predicted: () => ({
      impact: lostToMissingDeadLetter(25, 5, 'no-such-dlx'),
      totals: { messagesDeadLettered: 0, messagesLost: 25 },
    }),
    apply: put({ 'max-length': 5, 'dead-letter-exchange': 'no-such-dlx' }),
    observe: (w) => holds(w, 'subject', 5),
  },
  {
    what: 'max-length 10 with reject-publish on 50: classic trims and refuses, quorum refuses only',
    kinds: ['classic', 'quorum'],
    setUp: async (w) => {
      await w.api.queue('subject', w.kind);
      await w.amqp.publish('subject', 50);
      return 50;
    },
    change: subjectPolicy({ 'max-length': 10, overflow: 'reject-publish' }),
    predicted: (kind) => ({
      impact: [
        ...(kind === 'classic'
          ? [{ effect: 'drop', messages: 40, fate: 'lost', because: 'max-length', limit: 10 } as const]
          : []),
        { effect: 'reject-publish', because: 'max-length', limit: 10 },
      ],
      totals: { messagesLost: kind === 'classic' ? 40 : 0, queuesRefusingPublishes: 1 },
    }),
    apply: put({ 'max-length': 10, overflow: 'reject-publish' }),
    observe: async (w) => {
      // The refusal shows the policy is in force; the count after it shows what it removed.
      await waitFor(async () => !(await w.amqp.tryPublish('', 'subject')), {
        what: 'a publish to be refused',
      });
      await holds(w, 'subject', w.kind === 'classic' ? 10 : 50);
    },
  },
  {
    // Found by the preview differential on 4.3.6 (seed 9259): the limit is set under the overflow the
    // queue had, and a queue already under reject-publish-dlx trims nothing.
    what: 'max-length 30 to 12 on 19, reject-publish-dlx before and after: nothing removed, publishes refused',
    kinds: ['classic'],
    setUp: async (w) => {
      await refusingAt30(w);
      return 19;
    },
    change: { action: 'edit', name: 'p', fields: { definition: REFUSING(12) } },
    predicted: () => ({
      impact: [{ effect: 'reject-publish', because: 'max-length', limit: 12 }],
      totals: { messagesLost: 0, messagesDeadLettered: 0, queuesRefusingPublishes: 1 },
    }),
    apply: put(REFUSING(12)),
    observe: async (w) => {
      await lowerLimitInForce(w);
      // Refused, so dead-lettered (reject-publish-dlx): the one message in the dead-letter queue.
      expect(await w.amqp.tryPublish('', 'subject')).toBe(false);
      await holds(w, 'subject', 19);
      await holds(w, 'dlq', 1);
    },
  },
  {
    what: 'overflow back to drop-head at the same limit 12, on 19 kept by reject-publish-dlx: 7 dead-lettered at once',
    kinds: ['classic'],
    setUp: async (w) => {
      await refusingAt30(w);
      await w.api.policy('p', '^subject$', REFUSING(12));
      await lowerLimitInForce(w);
      await holds(w, 'subject', 19);
      return 19;
    },
    change: {
      action: 'edit',
      name: 'p',
      fields: { definition: { 'max-length': 12, 'dead-letter-exchange': 'dlx' } },
    },
    predicted: () => ({
      impact: [deadLetteredOver(12, 7, 'dlx')],
      totals: { messagesDeadLettered: 7, messagesLost: 0 },
    }),
    apply: put({ 'max-length': 12, 'dead-letter-exchange': 'dlx' }),
    observe: async (w) => {
      await holds(w, 'subject', 12);
      await holds(w, 'dlq', 7);
    },
  },
  {
    what: 'max-length-bytes 100 on 50 messages of 10 bytes: the excess removed, counted from the mean size',
    kinds: ['classic', 'quorum'],
    setUp: async (w) => {
      await w.api.queue('subject', w.kind);
      await w.amqp.publish('subject', 50, 10);
      return 50;
    },
    change: subjectPolicy({ 'max-length-bytes': 100 }),
    // The bytes counted per message differ by version and type (4.3 quorum queues count 25 for a
    // body of 10): the broker's own count gives the mean, and what it keeps proves the number.
    predicted: () => ({
      impact: [
        {
          effect: 'drop',
          messages: expect.any(Number),
          fate: 'lost',
          because: 'max-length-bytes',
          limit: 100,
          estimated: true,
        },
      ],
      totals: {},
    }),
    apply: put({ 'max-length-bytes': 100 }),
    observe: async (w, subject) => {
      const drop = subject.impact.find((x) => x.effect === 'drop');
      const removed = drop?.effect === 'drop' ? drop.messages : 0;
      expect(removed).toBeGreaterThan(0);
      await holds(w, 'subject', 50 - removed);
    },
  },
  {
    what: 'expires 4000 on a queue of 5 with no consumer: deleted with its messages',
    kinds: ['classic', 'quorum'],
    setUp: async (w) => {
      await w.api.queue('subject', w.kind);
      await w.amqp.publish('subject', 5);
      return 5;
    },
    change: subjectPolicy({ expires: 4000 }),
    predicted: () => ({
      impact: [{ effect: 'delete', messages: 5, inMs: 4000, because: 'expires' }],
      totals: { queuesDeleted: 1, messagesLost: 5 },
    }),
    apply: put({ expires: 4000 }),
    observe: async (w) => {
      await waitFor(async () => !(await w.api.exists('subject')), { what: 'subject to expire' });
    },
  },
  {
    what: 'expires 4000 on a queue with a consumer: not deleted while it stays (a control without one goes)',
    kinds: ['classic'],
    setUp: async (w) => {
      await w.api.queue('subject', w.kind);
      await w.api.queue('control', w.kind);
      await w.amqp.publish('subject', 5);
      const detach = await w.amqp.attach('subject');
      detached.set(w, detach);
      return 5;
    },
    change: subjectPolicy({ expires: 4000 }, '^(subject|control)$'),
    settledWhen: (now) => now.consumers === 1 && now.unacked === 1,
    predicted: () => ({
      impact: [{ effect: 'delete-when-idle', inMs: 4000, consumers: 1, because: 'expires' }],
      totals: { queuesDeleted: 1, messagesLost: 0 },
    }),
    apply: put({ expires: 4000 }, '^(subject|control)$'),
    observe: async (w) => {
      await waitFor(async () => !(await w.api.exists('control')), { what: 'the control to expire' });
      expect(await w.api.exists('subject')).toBe(true);
      await detached.get(w)?.();
    },
  },
  {
    what: 'message-ttl 2000 on 20 queued: they stay; a message published after it expires',
    kinds: ['classic', 'quorum'],
    setUp: async (w) => {
      await w.api.queue('subject', w.kind);
      await w.api.queue('control', 'classic');
      await w.amqp.publish('subject', 20);
      return 20;
    },
    change: subjectPolicy({ 'message-ttl': 2000 }, '^(subject|control)$'),
    predicted: () => ({
      impact: [{ effect: 'ttl-from-now', ttlMs: 2000, because: 'message-ttl' }],
      totals: { messagesLost: 0, messagesDeadLettered: 0 },
    }),
    apply: put({ 'message-ttl': 2000 }, '^(subject|control)$'),
    observe: async (w) => {
      // In force: the subject reports the policy and a classic control's new message expires;
      // the 20 queued (seconds older than the TTL) are still there.
      await waitFor(async () => (await w.api.policyOf('subject')) === 'p', { what: 'the policy in force' });
      await w.amqp.publish('control', 1);
      await waitFor(async () => (await w.api.peek('control')) === 0, {
        what: "the control's message to expire",
      });
      expect(await w.api.peek('subject')).toBe(20);
    },
  },
  {
    what: 'deleting a policy whose fallback caps lower: the fallback removes the excess at once',
    kinds: ['classic', 'quorum'],
    setUp: async (w) => {
      await w.api.policy('high', '^subject$', { 'max-length': 100 }, { priority: 10 });
      await w.api.policy('fallback', '^sub', { 'max-length': 10 }, { priority: 0 });
      await w.api.queue('subject', w.kind);
      await w.amqp.publish('subject', 60);
      return 60;
    },
    change: { action: 'delete', name: 'high', fields: {} },
    predicted: () => ({
      impact: [{ effect: 'drop', messages: 50, fate: 'lost', because: 'max-length', limit: 10 }],
      totals: { messagesLost: 50 },
    }),
    apply: async (w) => {
      await w.api.deletePolicy('high');
    },
    observe: (w) => holds(w, 'subject', 10),
  },
  {
    what: 'a dead-letter exchange lost on a queue with messages: an expiring message is then dropped',
    kinds: ['classic', 'quorum'],
    setUp: async (w) => {
      await deadLetterQueue(w);
      await w.api.policy('p', '^subject$', { 'dead-letter-exchange': 'dlx' });
      await w.api.queue('subject', w.kind);
      await w.amqp.publish('subject', 7);
      return 7;
    },
    change: { action: 'delete', name: 'p', fields: {} },
    predicted: () => ({
      impact: [{ effect: 'dead-letter-lost', messages: 7, exchange: 'dlx' }],
      totals: { messagesLost: 0, messagesDeadLettered: 0 },
    }),
    apply: async (w) => {
      await w.api.deletePolicy('p');
    },
    observe: async (w) => {
      // A message rejected without requeue would have been dead-lettered before; now it vanishes.
      await waitFor(async () => (await w.api.policyOf('subject')) === null, { what: 'the policy gone' });
      await w.api.reject('subject');
      await holds(w, 'subject', 6);
      expect(await w.api.peek('dlq')).toBe(0);
    },
  },
  {
    what: 'delivery-limit lowered from 10 to 2: nothing at once; a message already returned 3 times goes at its next return, a new one stays',
    kinds: ['quorum'],
    setUp: async (w) => {
      await w.api.policy('p', '^subject$', { 'delivery-limit': 10 });
      await w.api.queue('subject', w.kind);
      await waitFor(async () => (await w.api.policyOf('subject')) === 'p', { what: 'the policy in force' });
      await w.amqp.publish('subject', 5);
      await w.api.settled('subject', 5);
      // Each fetch rejected with requeue is a return: every message has been returned 3 times.
      for (let i = 0; i < 3; i++) expect(await w.api.returnAll('subject')).toBe(5);
      return 5;
    },
    change: { action: 'edit', name: 'p', fields: { definition: { 'delivery-limit': 2 } } },
    predicted: () => ({
      impact: [{ effect: 'delivery-limit-lowered', limit: 2, was: 10 }],
      totals: { messagesLost: 0, messagesDeadLettered: 0, queuesDeleted: 0 },
    }),
    apply: put({ 'delivery-limit': 2 }),
    observe: async (w) => {
      await waitFor(async () => (await w.api.effective('subject'))?.['delivery-limit'] === 2, {
        what: 'the lowered delivery limit in force',
      });
      // Nothing at once: all 5 still there with the new limit in force (fetched: no statistics lag).
      await w.amqp.publish('subject', 1);
      await w.api.settled('subject', 6);
      // The next return: the 5 returned 3 times before are over the limit and go; the new one stays.
      expect(await w.api.returnAll('subject')).toBe(6);
      await w.api.settled('subject', 1);
      expect(await w.api.count('subject')).toBe(1);
    },
  },
  ...(['max-length-bytes', 'max-age'] as const).map(
    (key): Row => ({
      what: `a stream's ${key} lowered: whole segments beyond it deleted at once, the one being written kept`,
      kinds: ['stream'],
      // A stream reports its messages and never their bytes (issue 28: `which` said "unknown" for ever).
      settledWhen: (now) => now.bytes === null,
      setUp: async (w) => {
        // Small segments, so that the stream has many (the default is 500 MB: one).
        await w.api.queue('subject', w.kind, { 'x-stream-max-segment-size-bytes': 1000 });
        await w.amqp.publish('subject', 60, 100);
        // A stream counts offsets (74 for these 60 messages): what it holds is what it says.
        return waitFor(async () => (await w.api.count('subject')) ?? undefined, {
          what: "the stream's statistics",
        });
      },
      change: subjectPolicy(key === 'max-age' ? { 'max-age': '1s' } : { 'max-length-bytes': 1500 }),
      predicted: () => ({
        impact: [{ effect: 'may-remove', because: key, value: key === 'max-age' ? '1s' : 1500 }],
        totals: { messagesLost: 0, messagesDeadLettered: 0, queuesDeleted: 0 },
      }),
      apply: put(key === 'max-age' ? { 'max-age': '1s' } : { 'max-length-bytes': 1500 }),
      observe: async (w) => {
        const before = (await w.api.count('subject')) ?? 0;
        // Nothing more is published: what goes, goes because of the policy, within seconds of it.
        const after = await waitFor(
          async () => {
            const n = await w.api.count('subject');
            return n !== null && n < before ? n : undefined;
          },
          { what: 'the stream to drop segments' },
        );
        expect(after).toBeGreaterThan(0);
      },
    }),
  ),
  {
    what: 'federation-upstream lost by an exchange whose link runs: the link stops',
    kinds: ['exchange'],
    noStatistics: true,
    federation: true,
    setUp: async (w) => {
      // An upstream on this very broker and vhost: the link federates from exchange `source`.
      await w.api.exchange('source', 'fanout');
      await w.api.parameter('federation-upstream', 'up1', { uri: w.amqpUrl, exchange: 'source' });
      await w.api.exchange('subject', 'fanout');
      await w.api.policy('p', '^subject$', { 'federation-upstream': 'up1' }, { applyTo: 'exchanges' });
      await waitFor(
        async () =>
          (await w.api.federationLinks())?.some((l) => l.exchange === 'subject' && l.status === 'running'),
        { what: 'the federation link to run' },
      );
      return 0;
    },
    change: { action: 'delete', name: 'p', fields: {} },
    predicted: () => ({
      impact: [{ effect: 'link-stops', key: 'federation-upstream', upstream: 'up1' }],
      totals: { messagesLost: 0, messagesDeadLettered: 0, queuesDeleted: 0 },
    }),
    apply: async (w) => {
      await w.api.deletePolicy('p');
    },
    observe: async (w) => {
      await waitFor(async () => !(await w.api.federationLinks())?.some((l) => l.exchange === 'subject'), {
        what: 'the federation link to stop',
      });
    },
  },
];

const detached = new WeakMap<World, () => Promise<void>>();

/** The subject's preview object, once its statistics show the messages published. */
async function previewSettled(
  broker: TestBroker,
  vhost: string,
  row: Row,
  published: number,
): Promise<{ answer: PreviewAnswer; subject: PreviewObject | undefined }> {
  const client = clientFor(broker);
  try {
    return await waitFor(
      async () => {
        const r = await preview({ ...row.change, vhost, layer: 'user' }, client);
        if (r.status !== 'answered') throw new Error(`preview ${r.status}: ${JSON.stringify(r)}`);
        const subject = r.objects.find((o) => o.name === 'subject');
        const now = subject?.now;
        // Each column of the statistics catches up on its own: wait for all the row reads.
        const settled = row.noStatistics
          ? subject !== undefined && now === null
          : now?.messages === published &&
            (row.settledWhen ? row.settledWhen(now) : now.ready === published && (now.bytes ?? 0) > 0);
        return settled ? { answer: r, subject } : undefined;
      },
      { deadlineMs: 45_000, intervalMs: 500, what: 'the preview to read the published messages' },
    );
  } finally {
    await client.close();
  }
}

const CASES = ROWS.flatMap((row) => row.kinds.map((kind) => ({ ...row, kind })));

describe.each(up)('what a change does to the messages there now ($label)', (broker) => {
  it.concurrent.each(CASES)(
    '$kind: $what',
    async (row) => {
      const client = clientFor(broker);
      const vhost = uniqueName('impact');
      await client.putVhost(vhost);
      const amqp = await messages(broker, vhost);
      const w: World = {
        api: management(broker, vhost),
        amqp,
        kind: row.kind,
        amqpUrl: amqpUrl(broker, vhost),
      };
      try {
        if (row.federation && (await w.api.federationLinks()) === null) {
          console.warn(
            `\n*** SKIPPED on ${broker.label}: the federation plugin is not enabled there (GET /api/federation-links answers 404), so "${row.what}" did not run. ***\n`,
          );
          return;
        }
        const published = await row.setUp(w);
        const { answer, subject } = await previewSettled(broker, vhost, row, published);
        const expected = row.predicted(row.kind);
        expect(subject?.impact).toEqual(expected.impact);
        expect(answer.summary.impact.totals).toMatchObject(expected.totals);
        await row.apply(w);
        if (!subject) throw new Error('the preview does not list subject');
        await row.observe(w, subject);
      } finally {
        await detached.get(w)?.();
        await amqp.close();
        await client.deleteVhost(vhost);
        await client.close();
      }
    },
    120_000,
  );
});
