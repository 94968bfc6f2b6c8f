/**
 * `which`'s live hazards (src/policy/impact/impact.ts, hazardsOf) proven by behaviour on each real
 * broker: the object set up, `which` asked through the terminal's entry point (`--json` and its
 * text), then the broker made to show the hazard is real — a publish to a queue at its limit
 * pushes out the oldest or is refused, an idle queue with `expires` goes by the time said, a
 * queue with a consumer stays while a control without one goes, a missing alternate exchange
 * stops being one once declared.
 *
 * The answers are polled: the statistics (and the policy in force they carry) lag by seconds.
 */
import { describe, expect, it } from 'vitest';
import type { WhichResult } from '../../src/commands/which/which.ts';
import type { Hazard } from '../../src/policy/impact/impact.ts';
import type { ObjectKind } from '../../src/policy/types.ts';
import { brokerCredentials, uniqueName, waitFor } from '../support/broker.ts';
import { brokersUp, clientFor, type TestBroker } from '../support/brokers.ts';
import { runRmq } from '../support/cli.ts';
import { fullWithMissingDeadLetter } from '../support/hazards.ts';
import { type Messages, management, messages } from '../support/messages.ts';

const { up } = await brokersUp();

interface World {
  readonly broker: TestBroker;
  readonly vhost: string;
  readonly api: ReturnType<typeof management>;
  readonly amqp: Messages;
  readonly kind: ObjectKind;
  /** Run at the end, even on failure (a consumer to detach). */
  readonly cleanups: (() => Promise<void>)[];
}

const env = (w: World) => {
  const { user, password } = brokerCredentials();
  return { RMQ_URL: w.broker.url, RMQ_USER: user, RMQ_PASSWORD: password };
};

async function whichJson(w: World, name: string, ...flags: string[]): Promise<WhichResult> {
  const r = await runRmq(env(w), ['which', name, '--vhost', w.vhost, '--json', ...flags]);
  expect(r.code, r.err).toBe(0);
  return JSON.parse(r.out) as WhichResult;
}

/** Asks until `which` gives these hazards with these messages (the statistics lag); returns it. */
function settled(
  w: World,
  name: string,
  expected: Hazard[],
  messagesNow: number | null,
  ...flags: string[]
): Promise<WhichResult> {
  return waitFor(
    async () => {
      const r = await whichJson(w, name, ...flags);
      if (messagesNow !== null) expect(r.now?.messages).toBe(messagesNow);
      expect(r.hazards).toEqual(expected);
      return r;
    },
    { deadlineMs: 45_000, intervalMs: 500, what: `which ${name} to show its hazards` },
  );
}

async function whichText(w: World, name: string, ...flags: string[]): Promise<string> {
  const r = await runRmq(env(w), ['which', name, '--vhost', w.vhost, ...flags]);
  expect(r.code, r.err).toBe(0);
  return r.out;
}

interface Case {
  readonly what: string;
  readonly kinds: readonly ObjectKind[];
  readonly run: (w: World) => Promise<void>;
}

const CASES: Case[] = [
  {
    what: 'at max-length with a dead-letter exchange that does not exist: a publish pushes the oldest out, lost',
    kinds: ['classic', 'quorum'],
    run: async (w) => {
      await w.api.policy('p', '^subject$', { 'max-length': 5, 'dead-letter-exchange': 'no-such-dlx' });
      await w.api.queue('subject', w.kind);
      await w.amqp.publish('subject', 30);
      const r = await settled(w, 'subject', fullWithMissingDeadLetter(5, 'no-such-dlx'), 5);
      expect(Date.parse(r.now?.sampledAt ?? '')).not.toBeNaN();
      const text = await whichText(w, 'subject');
      expect(text).toMatch(
        /Now: 5 messages ready, 0 unacked, 0 consumers — as the broker's statistics said at/,
      );
      expect(text).toMatch(
        /each message published pushes out the oldest, lost — dead-letter exchange "no-such-dlx" does not exist/,
      );
      expect(text).toMatch(/dead-letter-exchange names "no-such-dlx", which does not exist/);
      // The broker: the publish is accepted and the queue stays at 5.
      expect(await w.amqp.tryPublish('', 'subject')).toBe(true);
      await w.api.settled('subject', 5);
      expect(await w.api.peek('subject')).toBe(5);
    },
  },
  {
    what: 'at max-length with an existing dead-letter exchange: the oldest pushed out is dead-lettered',
    kinds: ['classic', 'quorum'],
    run: async (w) => {
      await w.api.exchange('dlx');
      await w.api.queue('dlq', 'classic');
      await w.api.bind('dlx', 'dlq');
      await w.api.policy('p', '^subject$', { 'max-length': 3, 'dead-letter-exchange': 'dlx' });
      await w.api.queue('subject', w.kind);
      await w.amqp.publish('subject', 3);
      await settled(
        w,
        'subject',
        [
          {
            effect: 'full',
            because: 'max-length',
            limit: 3,
            overflow: 'drop-head',
            refused: false,
            dropped: 'dead-lettered',
            exchange: 'dlx',
          },
        ],
        3,
      );
      await w.amqp.publish('subject', 1);
      await w.api.settled('dlq', 1);
      expect(await w.api.peek('dlq')).toBe(1);
      expect(await w.api.peek('subject')).toBe(3);
    },
  },
  {
    what: 'at max-length with reject-publish: publishers refused (quorum: after one more), nothing pushed out',
    kinds: ['classic', 'quorum'],
    run: async (w) => {
      await w.api.policy('p', '^subject$', { 'max-length': 3, overflow: 'reject-publish' });
      await w.api.queue('subject', w.kind);
      await w.amqp.publish('subject', 3);
      await settled(
        w,
        'subject',
        [
          {
            effect: 'full',
            because: 'max-length',
            limit: 3,
            overflow: 'reject-publish',
            refused: w.kind === 'classic',
            dropped: null,
          },
        ],
        3,
      );
      // Measured: a classic queue refuses at its limit, a quorum queue takes one more first.
      if (w.kind === 'quorum') {
        expect(await whichText(w, 'subject')).toMatch(
          /the next message is taken .*then publishers are refused/,
        );
        expect(await w.amqp.tryPublish('', 'subject')).toBe(true);
      } else {
        expect(await whichText(w, 'subject')).toMatch(/publishers are refused from now on/);
      }
      expect(await w.amqp.tryPublish('', 'subject')).toBe(false);
      expect(await w.api.peek('subject')).toBe(w.kind === 'quorum' ? 4 : 3);
    },
  },
  {
    what: 'idle with expires: deleted with its messages by the time said',
    kinds: ['classic', 'quorum'],
    run: async (w) => {
      await w.api.queue('subject', w.kind, { 'x-expires': 20_000 });
      await w.amqp.publish('subject', 2);
      const r = await waitFor(
        async () => {
          const a = await whichJson(w, 'subject');
          expect(a.now?.messages).toBe(2);
          return a;
        },
        { deadlineMs: 15_000, intervalMs: 500, what: 'the statistics to show 2 messages' },
      );
      const [h] = r.hazards;
      expect(h).toEqual({ effect: 'expires-idle', messages: 2, inMs: 20_000, by: expect.any(String) });
      const by = h?.effect === 'expires-idle' ? Date.parse(h.by) : Number.NaN;
      expect(by).toBe(Date.parse(r.now?.sampledAt ?? '') + 20_000);
      expect(await whichText(w, 'subject')).toMatch(
        /no consumer: deleted with its 2 messages once unused for 20 s \(expires 20000 ms\) — by \d\d:\d\d:\d\d UTC at the latest/,
      );
      // Gone by then: the deadline is the time said, plus the broker's timer and a poll's slack.
      await waitFor(async () => !(await w.api.exists('subject')), {
        deadlineMs: Math.max(0, by - Date.now()) + 3000,
        what: 'subject to expire by the time which said',
      });
    },
  },
  {
    what: 'expires with a consumer attached: stays while it has one (a control without one goes)',
    kinds: ['classic', 'quorum'],
    run: async (w) => {
      await w.api.queue('subject', w.kind, { 'x-expires': 5000 });
      await w.api.queue('control', w.kind, { 'x-expires': 5000 });
      w.cleanups.push(await w.amqp.attach('subject'));
      await settled(w, 'subject', [{ effect: 'expires-when-unused', inMs: 5000, consumers: 1 }], 0);
      expect(await whichText(w, 'subject')).toMatch(
        /deleted 5 s after its last consumer leaves \(expires 5000 ms; 1 consumer now\)/,
      );
      await waitFor(async () => !(await w.api.exists('control')), { what: 'the control to expire' });
      expect(await w.api.exists('subject')).toBe(true);
    },
  },
  {
    what: 'an exchange whose alternate exchange does not exist: named until it is declared',
    kinds: ['exchange'],
    run: async (w) => {
      await w.api.policy('p', '^ex$', { 'alternate-exchange': 'no-ae' }, { applyTo: 'exchanges' });
      await w.api.exchange('ex', 'direct');
      const r = await settled(
        w,
        'ex',
        [{ effect: 'missing-target', key: 'alternate-exchange', target: 'no-ae' }],
        null,
        '--kind',
        'exchange',
      );
      expect(r.now).toBeUndefined();
      // Declared, it catches what the exchange cannot route: the hazard is gone.
      await w.api.exchange('no-ae', 'fanout');
      await w.api.queue('caught', 'classic');
      await w.api.bind('no-ae', 'caught');
      await settled(w, 'ex', [], null, '--kind', 'exchange');
      expect(await w.amqp.tryPublish('ex', 'nobody-binds-this')).toBe(true);
      await w.api.settled('caught', 1);
    },
  },
];

const RUNS = CASES.flatMap((c) => c.kinds.map((kind) => ({ ...c, kind })));

describe.each(up)("which: the object's live hazards ($label)", (broker) => {
  it.concurrent.each(RUNS)(
    '$kind: $what',
    async (c) => {
      const client = clientFor(broker);
      const vhost = uniqueName('hazard');
      await client.putVhost(vhost);
      const amqp = await messages(broker, vhost);
      const w: World = { broker, vhost, api: management(broker, vhost), amqp, kind: c.kind, cleanups: [] };
      try {
        await c.run(w);
      } finally {
        for (const f of w.cleanups) await f();
        await amqp.close();
        await client.deleteVhost(vhost);
        await client.close();
      }
    },
    120_000,
  );
});
