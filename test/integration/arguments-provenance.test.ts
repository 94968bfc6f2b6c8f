/**
 * Where `which` says a value comes from when an object's own argument and its policy set the same
 * key (src/policy/provenance.ts over arguments.ts), proven by what the object does on each real
 * broker: a message that expires (or is still there when a control queue's has expired), a queue
 * that expires (or outlives its control), a dead-lettered message landing behind one exchange and
 * not the other, the message a full queue keeps, an unroutable message reaching one alternate
 * exchange. max-length is proven the same way in arguments.test.ts.
 *
 * Every case asks the bot first, then lets the broker show which value it really uses.
 */
import { describe, expect, it } from 'vitest';
import { which } from '../../src/commands/which/which.ts';
import type { ObjectKind } from '../../src/policy/types.ts';
import { brokerCredentials, uniqueName, waitFor } from '../support/broker.ts';
import { brokersUp, clientFor, type TestBroker } from '../support/brokers.ts';

const { up } = await brokersUp();

const SHORT = 1000;
const LONG = 3_600_000;
/** Long enough for the bot to be asked before the queue is gone. */
const SHORT_EXPIRY = 5000;

function http(broker: TestBroker, vhost: string) {
  const { user, password } = brokerCredentials();
  const auth = `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
  const v = encodeURIComponent(vhost);
  const call = async (
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{ status: number; json: unknown }> => {
    const res = await fetch(new URL(`/api/${path.replace('{v}', v)}`, broker.url), {
      method,
      headers: { authorization: auth, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    if (!res.ok && res.status !== 404) throw new Error(`${method} ${path}: ${res.status} ${text}`);
    return { status: res.status, json: text ? JSON.parse(text) : null };
  };
  const e = encodeURIComponent;
  return {
    queue: (name: string, kind: ObjectKind, args: Record<string, unknown> = {}) =>
      call('PUT', `queues/{v}/${e(name)}`, {
        durable: true,
        arguments: { 'x-queue-type': kind, ...args },
      }),
    exchange: (name: string, type: string, args: Record<string, unknown> = {}) =>
      call('PUT', `exchanges/{v}/${e(name)}`, { type, durable: true, arguments: args }),
    bind: (exchange: string, queue: string) =>
      call('POST', `bindings/{v}/e/${e(exchange)}/q/${e(queue)}`, { routing_key: '' }),
    policy: (name: string, pattern: string, applyTo: string, definition: Record<string, unknown>) =>
      call('PUT', `policies/{v}/${e(name)}`, { pattern, 'apply-to': applyTo, priority: 0, definition }),
    /** Published and routed; false when the queue refused it (reject-publish answers HTTP 400 "rejected"). */
    publish: async (exchange: string, routingKey: string, payload: string): Promise<boolean> => {
      try {
        const { json } = await call('POST', `exchanges/{v}/${e(exchange || 'amq.default')}/publish`, {
          properties: {},
          routing_key: routingKey,
          payload,
          payload_encoding: 'string',
        });
        return (json as { routed: boolean }).routed;
      } catch (err) {
        if (/: 400 .*rejected/.test(String(err))) return false;
        throw err;
      }
    },
    /** The payloads in the queue, left in it. */
    peek: async (queue: string): Promise<string[]> =>
      (
        (
          await call('POST', `queues/{v}/${e(queue)}/get`, {
            count: 10,
            ackmode: 'ack_requeue_true',
            encoding: 'auto',
          })
        ).json as { payload: string }[]
      ).map((m) => m.payload),
    exists: async (queue: string) => (await call('GET', `queues/{v}/${e(queue)}`)).status === 200,
  };
}

type Http = ReturnType<typeof http>;

interface Row {
  readonly what: string;
  readonly kind: ObjectKind;
  readonly key: string;
  readonly argument: unknown;
  readonly policy: unknown;
  /** Objects the case needs besides the one asked about, declared before it. */
  readonly setUp?: (api: Http) => Promise<void>;
  /** Extra arguments of the object asked about. */
  readonly extra?: Record<string, unknown>;
  /** Shows which value the object really uses: resolves once the broker has shown it. */
  readonly behaves: (api: Http, used: unknown, row: Row) => Promise<unknown>;
}

/** A message TTL in use: SHORT expires it now; LONG keeps it past a control queue's SHORT. */
async function messageTtlInUse(api: Http, used: unknown, row: Row): Promise<unknown> {
  await api.queue('control', row.kind, { 'x-message-ttl': SHORT });
  await api.publish('', 'subject', 'm');
  await api.publish('', 'control', 'c');
  if (used === SHORT) {
    return waitFor(async () => (await api.peek('subject')).length === 0, { what: 'the message to expire' });
  }
  await waitFor(async () => (await api.peek('control')).length === 0, {
    what: "the control's message to expire",
  });
  expect(await api.peek('subject')).toEqual(['m']);
  return true;
}

/** A queue expiry in use: SHORT deletes the queue now; LONG keeps it past a control queue's SHORT. */
async function expiresInUse(api: Http, used: unknown, row: Row): Promise<unknown> {
  if (used === SHORT_EXPIRY) {
    return waitFor(async () => !(await api.exists('subject')), { what: 'the queue to expire' });
  }
  await api.queue('control', row.kind, { 'x-expires': SHORT_EXPIRY });
  await waitFor(async () => !(await api.exists('control')), { what: 'the control queue to expire' });
  expect(await api.exists('subject')).toBe(true);
  return true;
}

const deadLetterTargets = async (api: Http) => {
  for (const x of ['dlx-arg', 'dlx-pol']) {
    await api.exchange(x, 'fanout');
    await api.queue(`behind-${x}`, 'classic');
    await api.bind(x, `behind-${x}`);
  }
};

/** The dead-letter exchange in use: the expired message lands behind it, and not behind the other. */
async function deadLetterInUse(api: Http, used: unknown): Promise<unknown> {
  await api.publish('', 'subject', 'm');
  const other = used === 'dlx-arg' ? 'dlx-pol' : 'dlx-arg';
  await waitFor(async () => (await api.peek(`behind-${used}`)).length === 1, {
    what: `the message dead-lettered to ${String(used)}`,
  });
  expect(await api.peek(`behind-${other}`)).toEqual([]);
  return true;
}

/** The overflow behaviour in use, on a queue of one: drop-head keeps the newest, reject-publish the oldest. */
async function overflowInUse(api: Http, used: unknown): Promise<unknown> {
  expect(await api.publish('', 'subject', 'first')).toBe(true);
  // reject-publish refuses the second outright; drop-head takes it and drops the first.
  expect(await api.publish('', 'subject', 'second')).toBe(used === 'drop-head');
  return waitFor(
    async () => {
      const kept = await api.peek('subject');
      expect(kept).toEqual([used === 'drop-head' ? 'second' : 'first']);
      return true;
    },
    { what: `the queue to keep what ${String(used)} keeps` },
  );
}

/** The alternate exchange in use: an unroutable message reaches the queue behind it only. */
async function alternateInUse(api: Http, used: unknown): Promise<unknown> {
  await api.publish('subject', 'nowhere', 'm');
  const other = used === 'ae-arg' ? 'ae-pol' : 'ae-arg';
  await waitFor(async () => (await api.peek(`behind-${used}`)).length === 1, {
    what: `the message to reach ${String(used)}`,
  });
  expect(await api.peek(`behind-${other}`)).toEqual([]);
  return true;
}

const ROWS: Row[] = [];
for (const kind of ['classic', 'quorum'] as const) {
  ROWS.push(
    {
      what: 'argument shorter',
      kind,
      key: 'message-ttl',
      argument: SHORT,
      policy: LONG,
      behaves: messageTtlInUse,
    },
    {
      what: 'policy shorter',
      kind,
      key: 'message-ttl',
      argument: LONG,
      policy: SHORT,
      behaves: messageTtlInUse,
    },
    {
      what: 'argument shorter',
      kind,
      key: 'expires',
      argument: SHORT_EXPIRY,
      policy: LONG,
      behaves: expiresInUse,
    },
    {
      what: 'policy shorter',
      kind,
      key: 'expires',
      argument: LONG,
      policy: SHORT_EXPIRY,
      behaves: expiresInUse,
    },
    {
      what: 'both set',
      kind,
      key: 'dead-letter-exchange',
      argument: 'dlx-arg',
      policy: 'dlx-pol',
      setUp: deadLetterTargets,
      extra: { 'x-message-ttl': 100 },
      behaves: deadLetterInUse,
    },
    {
      what: 'both set',
      kind,
      key: 'overflow',
      argument: 'reject-publish',
      policy: 'drop-head',
      extra: { 'x-max-length': 1 },
      behaves: overflowInUse,
    },
  );
}
ROWS.push({
  what: 'both set',
  kind: 'exchange',
  key: 'alternate-exchange',
  argument: 'ae-arg',
  policy: 'ae-pol',
  setUp: async (api) => {
    for (const x of ['ae-arg', 'ae-pol']) {
      await api.exchange(x, 'fanout');
      await api.queue(`behind-${x}`, 'classic');
      await api.bind(x, `behind-${x}`);
    }
  },
  behaves: alternateInUse,
});

describe.each(up)("an object's own argument beside its policy ($label)", (broker) => {
  it.each(ROWS)(
    '$kind $key, $what: which says where the value comes from, and the object uses that value',
    async (row) => {
      const client = clientFor(broker);
      const vhost = uniqueName('prov');
      await client.putVhost(vhost);
      try {
        const api = http(broker, vhost);
        await row.setUp?.(api);
        const arg = row.kind === 'exchange' ? row.key : `x-${row.key}`;
        await api.policy('p', '^subject$', row.kind === 'exchange' ? 'exchanges' : 'queues', {
          [row.key]: row.policy,
        });
        if (row.kind === 'exchange') await api.exchange('subject', 'direct', { [arg]: row.argument });
        else await api.queue('subject', row.kind, { [arg]: row.argument, ...row.extra });

        const answer = await waitFor(
          async () => {
            const r = await which({ name: 'subject', vhost, kind: row.kind }, client);
            // The policy was there before the object: the object started with it.
            return r.answer === 'reported' && r.inForce?.name === 'p' ? r : undefined;
          },
          { deadlineMs: 30_000, intervalMs: 250, what: 'the broker to report the policy in force' },
        );
        expect(answer.object.arguments).toMatchObject({ [arg]: row.argument });
        const effective = answer.effective[row.key];
        expect(effective).toBeDefined();
        const used = effective?.value;
        expect(effective?.from).toBe(used === row.argument ? 'arguments' : 'policy');

        expect(await row.behaves(api, used, row)).toBeTruthy();
      } finally {
        await client.deleteVhost(vhost);
        await client.close();
      }
    },
    90_000,
  );
});
