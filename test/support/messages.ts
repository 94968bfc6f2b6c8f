/**
 * Messages on a real broker, for the tests that prove what a change does to them: publishing
 * and consuming over AMQP (rabbitmq-client, the bot's own AMQP library), declaring and counting
 * over the management API. Counts come from statistics, which lag: read them with `settled`.
 */
import { Connection, ConsumerStatus } from 'rabbitmq-client';
import type { LiveQueue } from '../../src/policy/impact/impact.ts';
import type { ObjectKind } from '../../src/policy/types.ts';
import type { ManagementClient } from '../../src/rabbit/client.ts';
import { brokerCredentials, waitFor } from './broker.ts';
import type { TestBroker } from './brokers.ts';

/** The broker's AMQP URL for a vhost, with the test credentials. */
export function amqpUrl(broker: TestBroker, vhost: string): string {
  const { user, password } = brokerCredentials();
  const url = new URL(broker.amqpUrl);
  url.username = encodeURIComponent(user);
  url.password = encodeURIComponent(password);
  url.pathname = `/${encodeURIComponent(vhost)}`;
  return url.toString();
}

export interface Messages {
  /** Publishes `n` messages of `size` bytes to the queue (default exchange), each confirmed. */
  publish(queue: string, n: number, size?: number): Promise<void>;
  /** Publishes one message; false when the broker refused it (a full queue with reject-publish). */
  tryPublish(exchange: string, routingKey: string): Promise<boolean>;
  /** A consumer that takes nothing (prefetch 1, never acks): the queue has a consumer. */
  attach(queue: string): Promise<() => Promise<void>>;
  /**
   * The ready messages the queue holds now, from the queue itself (a passive declare): no
   * statistics, so no lag. For a count that must be read once, after the fact.
   */
  count(queue: string): Promise<number>;
  close(): Promise<void>;
}

export async function messages(broker: TestBroker, vhost: string): Promise<Messages> {
  const conn = new Connection({ url: amqpUrl(broker, vhost), retryLow: 200, retryHigh: 1000 });
  conn.on('error', () => undefined);
  await conn.onConnect(10_000, true);
  const pub = conn.createPublisher({ confirm: true, maxAttempts: 1 });
  return {
    async publish(queue, n, size = 10) {
      const body = Buffer.alloc(size, 'x');
      for (let i = 0; i < n; i++) await pub.send({ routingKey: queue, durable: true }, body);
    },
    async tryPublish(exchange, routingKey) {
      try {
        await pub.send({ exchange, routingKey, mandatory: false }, 'x');
        return true;
      } catch {
        return false;
      }
    },
    async count(queue) {
      return (await conn.queueDeclare({ queue, passive: true })).messageCount;
    },
    async attach(queue) {
      let release = () => {};
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      // Holds what it gets until detached, then hands it back: the queue keeps its messages.
      const consumer = conn.createConsumer(
        { queue, queueOptions: { queue, passive: true }, qos: { prefetchCount: 1 } },
        async () => {
          await held;
          return ConsumerStatus.REQUEUE;
        },
      );
      await new Promise<void>((resolve, reject) => {
        consumer.once('ready', () => resolve());
        consumer.once('error', reject);
      });
      return async () => {
        release();
        await consumer.close();
      };
    },
    async close() {
      await pub.close();
      await conn.close();
    },
  };
}

/** What the broker did to a consumer holding one unacknowledged delivery. */
export type HoldOutcome =
  | { readonly outcome: 'cancelled' }
  | { readonly outcome: 'channel-closed'; readonly reason: string }
  | { readonly outcome: 'held' };

/**
 * Takes one message from the queue without acknowledging it (prefetch 1; a stream read from its
 * first offset), then watches until the broker cancels the consumer (a quorum queue's consumer
 * timeout on 4.3), closes the channel (the channel's consumer-timeout check before 4.3), or
 * `watchMs` pass with the delivery still held. Publishes the message itself; the clock starts
 * once the delivery has arrived, so a slow publish cannot pass for a timeout that never came.
 */
export async function holdOneDelivery(
  broker: TestBroker,
  vhost: string,
  queue: string,
  kind: ObjectKind,
  watchMs: number,
): Promise<HoldOutcome> {
  const conn = new Connection({
    url: amqpUrl(broker, vhost),
    retryLow: 100,
    retryHigh: 500,
    connectionTimeout: 10_000,
  });
  conn.on('error', () => undefined);
  const ch = await conn.acquire({ emitErrorsFromChannel: true });
  let end: (o: HoldOutcome) => void = () => {};
  const ended = new Promise<HoldOutcome>((resolve) => {
    end = resolve;
  });
  ch.on('basic.cancel', () => end({ outcome: 'cancelled' }));
  ch.on('error', (err: unknown) =>
    end({ outcome: 'channel-closed', reason: err instanceof Error ? err.message : String(err) }),
  );
  ch.on('close', () => end({ outcome: 'channel-closed', reason: 'closed' }));
  let delivered: () => void = () => {};
  const arrived = new Promise<void>((resolve) => {
    delivered = resolve;
  });
  let watch: NodeJS.Timeout | undefined;
  try {
    await ch.confirmSelect();
    await ch.basicPublish({ routingKey: queue, durable: true }, 'held');
    await ch.basicQos({ prefetchCount: 1 });
    await ch.basicConsume(
      { queue, noAck: false, ...(kind === 'stream' ? { arguments: { 'x-stream-offset': 'first' } } : {}) },
      () => delivered(),
    );
    const late = new Promise<never>((_, reject) => {
      watch = setTimeout(() => reject(new Error(`no delivery from ${queue} within 15 s`)), 15_000);
    });
    const early = await Promise.race([arrived.then(() => undefined), ended, late]);
    if (early) return early;
    clearTimeout(watch);
    const held = new Promise<HoldOutcome>((resolve) => {
      watch = setTimeout(() => resolve({ outcome: 'held' }), watchMs);
    });
    return await Promise.race([ended, held]);
  } finally {
    clearTimeout(watch);
    // The channel first: closing the connection under a cancelled consumer's channel hangs.
    if (ch.active) await ch.close().catch(() => undefined);
    await conn.close();
  }
}

/** The management API as the tests here use it: declare, bind, put policies, count. */
export function management(broker: TestBroker, vhost: string) {
  const { user, password } = brokerCredentials();
  const auth = `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
  const v = encodeURIComponent(vhost);
  const e = encodeURIComponent;
  const call = async (
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{ status: number; json: unknown }> => {
    const res = await fetch(new URL(`/api/${path.replace('{v}', v)}`, broker.url), {
      method,
      headers: { authorization: auth, 'content-type': 'application/json' },
      // A call that hangs fails the test in time rather than holding it to vitest's timeout.
      signal: AbortSignal.timeout(30_000),
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    if (!res.ok && res.status !== 404) throw new Error(`${method} ${path}: ${res.status} ${text}`);
    return { status: res.status, json: text ? JSON.parse(text) : null };
  };
  /** Fetches up to 1000 messages, requeued as `ackmode` says; how many came. */
  const fetchAll = async (queue: string, ackmode: 'ack_requeue_true' | 'reject_requeue_true') => {
    const { json } = await call('POST', `queues/{v}/${e(queue)}/get`, {
      count: 1000,
      ackmode,
      encoding: 'auto',
    });
    return (json as unknown[]).length;
  };
  const api = {
    queue: (name: string, kind: ObjectKind, args: Record<string, unknown> = {}) =>
      call('PUT', `queues/{v}/${e(name)}`, { durable: true, arguments: { 'x-queue-type': kind, ...args } }),
    exchange: (name: string, type = 'fanout', args: Record<string, unknown> = {}) =>
      call('PUT', `exchanges/{v}/${e(name)}`, { type, durable: true, arguments: args }),
    bind: (exchange: string, queue: string) =>
      call('POST', `bindings/{v}/e/${e(exchange)}/q/${e(queue)}`, { routing_key: '' }),
    policy: (
      name: string,
      pattern: string,
      definition: Record<string, unknown>,
      more: { priority?: number; applyTo?: string } = {},
    ) =>
      call('PUT', `policies/{v}/${e(name)}`, {
        pattern,
        'apply-to': more.applyTo ?? 'queues',
        priority: more.priority ?? 0,
        definition,
      }),
    deletePolicy: (name: string) => call('DELETE', `policies/{v}/${e(name)}`),
    /** The queue's message count as its statistics say; null when it does not exist or has none yet. */
    count: async (queue: string): Promise<number | null> => {
      const { status, json } = await call('GET', `queues/{v}/${e(queue)}`);
      if (status === 404) return null;
      const n = (json as { messages?: number }).messages;
      return typeof n === 'number' ? n : null;
    },
    /**
     * How many messages the queue really holds: fetched and requeued (no statistics). Each fetch
     * counts as a delivery: a quorum queue's delivery limit (20 by default from 4.0) allows few.
     */
    peek: (queue: string): Promise<number> => fetchAll(queue, 'ack_requeue_true'),
    /**
     * Fetches every message and rejects it with requeue: a return that counts against a quorum
     * queue's delivery limit on every version (a requeued fetch, `peek`, did not on 4.3.6: after
     * three and the limit lowered below them, the messages stayed).
     * How many it fetched.
     */
    returnAll: (queue: string): Promise<number> => fetchAll(queue, 'reject_requeue_true'),
    /** Takes one message and rejects it without requeue: dead-lettered, or dropped. */
    reject: async (queue: string) => {
      await call('POST', `queues/{v}/${e(queue)}/get`, {
        count: 1,
        ackmode: 'reject_requeue_false',
        encoding: 'auto',
      });
    },
    /** The user policy the queue's statistics report (they appear only once it is applied). */
    policyOf: async (queue: string): Promise<string | null | undefined> => {
      const { json } = await call('GET', `queues/{v}/${e(queue)}`);
      return (json as { policy?: string | null } | null)?.policy;
    },
    /** A runtime parameter of the vhost (a federation upstream: component `federation-upstream`). */
    parameter: (component: string, name: string, value: Record<string, unknown>) =>
      call('PUT', `parameters/${component}/{v}/${e(name)}`, { value }),
    /** The federation links of the vhost; null when the federation plugin is not enabled (404). */
    federationLinks: async (): Promise<{ exchange?: string; queue?: string; status?: string }[] | null> => {
      const { status, json } = await call('GET', 'federation-links/{v}');
      return status === 404 ? null : (json as { exchange?: string; queue?: string; status?: string }[]);
    },
    /** The policies' merged definition the queue's statistics report (lags like `policyOf`). */
    effective: async (queue: string): Promise<Record<string, unknown> | null | undefined> => {
      const { json } = await call('GET', `queues/{v}/${e(queue)}`);
      return (json as { effective_policy_definition?: Record<string, unknown> | null } | null)
        ?.effective_policy_definition;
    },
    exists: async (queue: string) => (await call('GET', `queues/{v}/${e(queue)}`)).status === 200,
    /** Waits until the statistics say the queue holds `n` messages (they lag, quorum queues most). */
    settled: (queue: string, n: number, deadlineMs = 30_000) =>
      waitFor(async () => (await api.count(queue)) === n, {
        deadlineMs,
        intervalMs: 250,
        what: `${queue} to hold ${n} messages`,
      }),
  };
  return api;
}

/**
 * Waits until the broker's length history holds `n` ready messages for the queue: a sample taken
 * after the publish, which is what a change made now is measured against (src/watch/effect.ts).
 */
export function lengthHistoryHolds(
  client: Pick<ManagementClient, 'streamQueueStats'>,
  vhost: string,
  queue: string,
  n: number,
): Promise<true> {
  return waitFor(
    async () => {
      for await (const q of client.streamQueueStats(vhost, { asOf: new Date() }))
        if (q.name === queue) return q.live?.ready === n;
      return false;
    },
    { what: `a sample of ${n} in the length history of ${queue}`, deadlineMs: 30_000 },
  );
}

/** What a test set up on one queue, as the live listing should show it (absent counts: none). */
export interface LiveWant {
  readonly ready: number;
  readonly unacked?: number;
  readonly consumers?: number;
}

/**
 * Waits until the live listing a preview reads (the bot's own `streamQueueStats`) shows every
 * queue as `want` says: ready, unacknowledged, consumers, and bytes for the ready messages. The
 * message count comes first and the other columns an emission or more later (the byte count
 * last, later still under load); a preview read before then rightly says "unknown" or less.
 */
export function liveShows(
  client: Pick<ManagementClient, 'streamQueueStats'>,
  vhost: string,
  want: Readonly<Record<string, LiveWant>>,
): Promise<true> {
  return waitFor(
    async () => {
      const seen = new Map<string, LiveQueue | null>();
      for await (const q of client.streamQueueStats(vhost)) seen.set(q.name, q.live);
      return Object.entries(want).every(([name, w]) => {
        const now = seen.get(name);
        return (
          now?.ready === w.ready &&
          now.unacked === (w.unacked ?? 0) &&
          now.consumers === (w.consumers ?? 0) &&
          // A stream never reports its bytes (null); any other queue's come after its messages.
          (now.ready === 0 || now.bytes === null || now.bytes > 0)
        );
      });
    },
    { what: `the live listing to show ${JSON.stringify(want)}`, deadlineMs: 30_000, intervalMs: 250 },
  );
}

/**
 * The queues' messages sampled over AMQP (a passive declare: the queue's own count, not the
 * statistics) in a loop until stopped: the fewest each one held while it ran, and how many rounds.
 */
export async function fewestMessages(broker: TestBroker, vhost: string, queues: readonly string[]) {
  const conn = new Connection({ url: amqpUrl(broker, vhost) });
  conn.on('error', () => undefined);
  await conn.onConnect(10_000, true);
  const fewest = new Map(queues.map((q) => [q, Number.POSITIVE_INFINITY]));
  let rounds = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      for (const queue of queues) {
        const { messageCount } = await conn.queueDeclare({ queue, passive: true });
        fewest.set(queue, Math.min(fewest.get(queue) ?? Number.POSITIVE_INFINITY, messageCount));
      }
      rounds++;
    }
  })();
  return {
    async stop(): Promise<{ fewest: ReadonlyMap<string, number>; rounds: number }> {
      running = false;
      await loop;
      await conn.close();
      return { fewest, rounds };
    },
  };
}
