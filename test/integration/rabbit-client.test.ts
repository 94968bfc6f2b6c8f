/**
 * ManagementClient against the real broker (RMQ_URL, default http://127.0.0.1:15672), each test
 * in its own vhost, deleted afterwards; network failures through a local fake in front of it.
 */

import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Policy } from '../../src/policy/types.ts';
import { ManagementClient } from '../../src/rabbit/client.ts';
import { RabbitError } from '../../src/rabbit/errors.ts';
import type { LabClient } from '../../src/rabbit/lab.ts';
import type { QueueListing } from '../../src/rabbit/responses.ts';
import type { CallInfo } from '../../src/rabbit/transport.ts';
import {
  adminClient,
  brokerCredentials,
  brokerUrl,
  waitFor,
  withUser,
  withVhost,
} from '../support/broker.ts';
import { startFakeBroker } from '../support/fakeBroker.ts';

let admin: LabClient;

beforeAll(() => {
  admin = adminClient();
});

afterAll(async () => {
  await admin.close();
});

const inVhost = (fn: (vhost: string) => Promise<void>, suffix?: string) => () =>
  withVhost((vhost) => fn(vhost), { client: admin, prefix: 'client', ...(suffix ? { suffix } : {}) });

const policy = (vhost: string, name: string, extra: Partial<Policy> = {}): Policy => ({
  vhost,
  name,
  pattern: '^q',
  applyTo: 'queues',
  priority: 0,
  definition: { 'max-length': 10 },
  ...extra,
});

async function rejection(p: Promise<unknown>): Promise<RabbitError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(RabbitError);
    return e as RabbitError;
  }
  throw new Error('expected a RabbitError, got success');
}

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

const byName = <T extends { name: string }>(items: T[]): Record<string, T> =>
  Object.fromEntries(items.map((i) => [i.name, i]));

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (!address || typeof address === 'string') throw new Error('no port');
  return address.port;
}

describe('broker', () => {
  it('overview and whoami', async () => {
    const o = await admin.overview();
    expect(o.versionText).toMatch(/^\d+\.\d+\.\d+/);
    expect(o.version.major).toBeGreaterThanOrEqual(3);
    expect(await admin.whoami()).toEqual({ name: brokerCredentials().user, tags: ['administrator'] });
  });

  it(
    'lists vhosts; deleting a missing vhost is fine',
    inVhost(async (vhost) => {
      expect(await admin.listVhosts()).toContain(vhost);
      await admin.deleteVhost(`${vhost}-never-created`);
    }),
  );

  it('encodes the default vhost "/" as %2F (read-only)', async () => {
    const policies = await admin.listPolicies('/');
    expect(policies.every((p) => p.vhost === '/')).toBe(true);
    expect(await admin.getQueue('/', 'rmqtest-no-such-queue')).toBeNull();
    const exchanges = await collect(admin.streamExchanges('/'));
    expect(exchanges.map((e) => e.name)).toEqual(expect.arrayContaining(['', 'amq.direct', 'amq.topic']));
    expect((await admin.getExchange('/', ''))?.name).toBe('');
  });
});

describe('policies', () => {
  for (const layer of ['user', 'operator'] as const) {
    it(
      `${layer}: put, get, list, replace, delete`,
      inVhost(async (vhost) => {
        const list = () => (layer === 'user' ? admin.listPolicies(vhost) : admin.listOperatorPolicies(vhost));
        expect(await list()).toEqual([]);
        const p = policy(vhost, 'limits', {
          priority: -5,
          definition: { 'max-length': 10, 'message-ttl': 1000 },
        });
        expect(await admin.putPolicy(layer, p)).toBe('created');
        expect(await admin.getPolicy(layer, vhost, 'limits')).toEqual(p);
        expect(await list()).toEqual([p]);

        const replaced = { ...p, pattern: '^other', priority: 1.5, definition: { expires: 60_000 } };
        expect(await admin.putPolicy(layer, replaced)).toBe('updated');
        expect(await admin.putPolicy(layer, replaced)).toBe('updated'); // identical re-PUT: 204 too
        expect(await admin.getPolicy(layer, vhost, 'limits')).toEqual(replaced);

        // the layers are separate namespaces
        const other = layer === 'user' ? 'operator' : 'user';
        expect(await admin.getPolicy(other, vhost, 'limits')).toBeNull();

        await admin.deletePolicy(layer, vhost, 'limits');
        expect(await admin.getPolicy(layer, vhost, 'limits')).toBeNull();
        const gone = await rejection(admin.deletePolicy(layer, vhost, 'limits'));
        expect(gone).toMatchObject({ code: 'not-found', status: 404, method: 'DELETE' });
      }),
    );
  }

  it(
    'names with "/", spaces, "+", "%" and non-ASCII, in a vhost with "/" and non-ASCII',
    inVhost(async (vhost) => {
      const names = ['a/b', 'with space+plus', '%2F-literal', 'ttl für Straße ✓', '日本語/キュー'];
      for (const name of names) {
        expect(await admin.putPolicy('user', policy(vhost, name))).toBe('created');
        expect(await admin.putPolicy('operator', policy(vhost, name))).toBe('created');
      }
      for (const name of names) {
        expect((await admin.getPolicy('user', vhost, name))?.name).toBe(name);
        expect((await admin.getPolicy('operator', vhost, name))?.vhost).toBe(vhost);
      }
      expect((await admin.listPolicies(vhost)).map((p) => p.name).sort()).toEqual([...names].sort());
      expect((await admin.listOperatorPolicies(vhost)).map((p) => p.name).sort()).toEqual([...names].sort());
      await admin.deletePolicy('user', vhost, 'a/b');
      expect((await admin.listPolicies(vhost)).map((p) => p.name)).not.toContain('a/b');
    }, '/sub é+x'),
  );

  it(
    'refused by the broker, with its reason cleaned',
    inVhost(async (vhost) => {
      const refused = async (layer: 'user' | 'operator', extra: Partial<Policy>) => {
        const e = await rejection(admin.putPolicy(layer, policy(vhost, 'bad', extra)));
        expect(e).toMatchObject({ code: 'refused-by-broker', status: 400, method: 'PUT' });
        expect(e.isRetryable).toBe(false);
        return e.reason;
      };
      expect(await refused('user', { pattern: '(' })).toBe(
        'pattern should be regular expression but is invalid: {"missing )",1}',
      );
      // user-policy errors come HTML-escaped from the broker; operator-policy errors do not
      expect(await refused('user', { definition: { 'max-lenght': 10 } })).toBe(
        '[{<<"max-lenght">>,10}] are not recognised policy settings',
      );
      expect(await refused('operator', { definition: { 'max-lenght': 10 } })).toBe(
        '[{<<"max-lenght">>,10}] are not recognised policy settings',
      );
      expect(await refused('user', { definition: { 'max-length': -1 } })).toBe(
        '-1 is not a valid maximum length',
      );
      expect(await refused('operator', { definition: { 'max-length': -1 } })).toBe(
        '-1 is not a valid maximum length',
      );
      expect(await admin.listPolicies(vhost)).toEqual([]);
    }),
  );

  it(
    'not found: unknown vhost, unknown policy',
    inVhost(async (vhost) => {
      const missing = `${vhost}-missing`;
      const e = await rejection(admin.putPolicy('user', policy(missing, 'p')));
      expect(e).toMatchObject({ code: 'not-found', status: 404, reason: 'vhost_not_found' });
      expect(await admin.getPolicy('user', vhost, 'nope')).toBeNull();
      expect(await admin.getPolicy('operator', missing, 'nope')).toBeNull();
      expect((await rejection(collect(admin.streamQueues(missing, { stats: false })))).code).toBe(
        'not-found',
      );
    }),
  );
});

describe('who may', () => {
  it('a wrong password is unauthorized, and not retried', async () => {
    const calls: CallInfo[] = [];
    const client = new ManagementClient({
      url: brokerUrl(),
      user: brokerCredentials().user,
      password: 'definitely-wrong',
      onCall: (c) => calls.push(c),
    });
    try {
      const e = await rejection(client.overview());
      expect(e).toMatchObject({
        code: 'unauthorized',
        status: 401,
        reason: 'Login failed',
        path: '/api/overview?disable_stats=true',
      });
      expect(e.message).not.toContain('definitely-wrong');
      expect(calls).toHaveLength(1);
    } finally {
      await client.close();
    }
  });

  it(
    'a management-only user is forbidden to write policies',
    inVhost(async (vhost) => {
      await withUser({ tags: ['management'], vhost }, async ({ user, password }) => {
        const client = new ManagementClient({ url: brokerUrl(), user, password });
        try {
          expect(await client.whoami()).toEqual({ name: user, tags: ['management'] });
          expect(await client.listPolicies(vhost)).toEqual([]); // reading is allowed
          const e = await rejection(client.putPolicy('user', policy(vhost, 'p')));
          expect(e).toMatchObject({
            code: 'forbidden',
            status: 401,
            reason: 'User not authorised to access object',
          });
          const op = await rejection(client.getPolicy('operator', vhost, 'p'));
          expect(op).toMatchObject({ code: 'forbidden', status: 401, reason: 'Not administrator user' });
        } finally {
          await client.close();
        }
      });
      expect(await admin.getPolicy('user', vhost, 'p')).toBeNull();
    }),
  );
});

describe('network failures', () => {
  it('a closed port is unreachable; GETs are retried first', async () => {
    const calls: CallInfo[] = [];
    const port = await closedPort();
    const client = new ManagementClient({
      url: `http://127.0.0.1:${port}`,
      user: 'guest',
      password: 'guest',
      getRetries: 1,
      retryBaseMs: 10,
      onCall: (c) => calls.push(c),
    });
    try {
      const e = await rejection(client.listPolicies('/'));
      expect(e).toMatchObject({ code: 'unreachable', method: 'GET', path: '/api/policies/%2F' });
      expect(e.status).toBeUndefined();
      expect(e.isRetryable).toBe(true);
      expect(calls.map((c) => [c.attempt, c.status, c.error])).toEqual([
        [0, null, 'unreachable'],
        [1, null, 'unreachable'],
      ]);
    } finally {
      await client.close();
    }
  });

  it('an answer slower than the timeout is a timeout; a retry that is fast succeeds', async () => {
    const fake = await startFakeBroker({ fallback: { kind: 'proxy', target: brokerUrl() } });
    const make = (getRetries: number) =>
      new ManagementClient({
        url: fake.url,
        ...brokerCredentials(),
        timeouts: { headersMs: 300 },
        getRetries,
        retryBaseMs: 10,
      });
    const noRetry = make(0);
    const oneRetry = make(1);
    try {
      fake.enqueue({ kind: 'proxy', target: brokerUrl(), delayMs: 3_000 });
      const started = Date.now();
      const e = await rejection(noRetry.whoami());
      expect(e).toMatchObject({ code: 'timeout', path: '/api/whoami' });
      // our own timer, not undici's once-a-second one (300 ms would fire after ~1 s)
      expect(Date.now() - started).toBeLessThan(800);

      fake.enqueue({ kind: 'hang' });
      expect((await oneRetry.whoami()).name).toBe(brokerCredentials().user);
      expect(fake.requests).toHaveLength(3);
    } finally {
      await noRetry.close();
      await oneRetry.close();
      await fake.close();
    }
  });

  it(
    'a GET is retried on 5xx and dropped connections; a PUT is not',
    inVhost(async (vhost) => {
      const fake = await startFakeBroker({ fallback: { kind: 'proxy', target: brokerUrl() } });
      const client = new ManagementClient({ url: fake.url, ...brokerCredentials(), retryBaseMs: 10 });
      try {
        await admin.putPolicy('user', policy(vhost, 'p'));
        fake.enqueue({ kind: 'respond', status: 503, body: 'busy' }, { kind: 'drop' });
        expect((await client.listPolicies(vhost)).map((p) => p.name)).toEqual(['p']);
        expect(fake.requests.map((r) => r.method)).toEqual(['GET', 'GET', 'GET']);

        fake.requests.length = 0;
        fake.enqueue({ kind: 'respond', status: 503, body: 'busy' });
        const e = await rejection(client.putPolicy('user', policy(vhost, 'q')));
        expect(e).toMatchObject({ code: 'broker-error', status: 503, method: 'PUT' });
        fake.enqueue({ kind: 'drop' });
        expect((await rejection(client.deletePolicy('user', vhost, 'p'))).code).toBe('unreachable');
        expect(fake.requests.map((r) => r.method)).toEqual(['PUT', 'DELETE']);
        expect(await admin.getPolicy('user', vhost, 'q')).toBeNull();
        expect(await admin.getPolicy('user', vhost, 'p')).not.toBeNull();

        const noRetries = new ManagementClient({ url: fake.url, ...brokerCredentials(), getRetries: 0 });
        fake.enqueue({ kind: 'respond', status: 500 });
        expect((await rejection(noRetries.listPolicies(vhost))).code).toBe('broker-error');
        await noRetries.close();
      } finally {
        await client.close();
        await fake.close();
      }
    }),
  );
});

describe('queues and exchanges', () => {
  it(
    'getQueue: policy fields absent at first, then null, then the policy after a lag',
    inVhost(async (vhost) => {
      // a quorum queue's first stats take longest (about 10 s here), so "absent" is observable
      await admin.putQueue(vhost, 'qq', { kind: 'quorum' });
      const fresh = await admin.getQueue(vhost, 'qq');
      expect(fresh).toMatchObject({ name: 'qq', vhost, kind: 'quorum', type: 'quorum' });
      expect(fresh?.arguments).toEqual({ 'x-queue-type': 'quorum' });
      expect(fresh?.policy).toBeUndefined();
      expect(fresh?.operatorPolicy).toBeUndefined();
      expect(fresh?.effectiveDefinition).toBeUndefined();

      const reported = await waitFor(
        async () => {
          const q = await admin.getQueue(vhost, 'qq');
          return q?.policy !== undefined && q;
        },
        { deadlineMs: 40_000, intervalMs: 250, what: 'queue stats' },
      );
      expect(reported).toMatchObject({ policy: null, operatorPolicy: null, effectiveDefinition: {} });

      await admin.putPolicy('user', policy(vhost, 'p', { definition: { 'max-length': 10 } }));
      await admin.putPolicy('operator', policy(vhost, 'op', { definition: { 'max-length': 5 } }));
      const updated = await waitFor(
        async () => {
          const q = await admin.getQueue(vhost, 'qq');
          return q?.policy === 'p' && q?.operatorPolicy === 'op' && q;
        },
        { deadlineMs: 40_000, intervalMs: 250, what: 'policy on the queue' },
      );
      expect(updated.effectiveDefinition).toEqual({ 'max-length': 5 });
    }),
  );

  it(
    'streamQueues: without stats the policy is current; with stats it lags and brings operator fields',
    inVhost(async (vhost) => {
      await admin.putQueue(vhost, 'q-classic', { kind: 'classic', arguments: { 'x-max-length': 100 } });
      await admin.putQueue(vhost, 'q-quorum', { kind: 'quorum' });
      await admin.putQueue(vhost, 'q-stream', { kind: 'stream' });
      await admin.putQueue(vhost, 'other', { kind: 'classic' });

      const before = byName(await collect(admin.streamQueues(vhost, { stats: false })));
      expect(Object.keys(before).sort()).toEqual(['other', 'q-classic', 'q-quorum', 'q-stream']);
      expect(before['q-classic']).toEqual<QueueListing>({
        name: 'q-classic',
        vhost,
        kind: 'classic',
        type: 'classic',
        arguments: { 'x-max-length': 100 },
        policy: null,
      });
      expect(before['q-stream']?.kind).toBe('stream');

      await admin.putPolicy('user', policy(vhost, 'p', { definition: { 'max-length-bytes': 1_000_000 } }));
      await admin.putPolicy('operator', policy(vhost, 'op', { definition: { 'max-length-bytes': 500_000 } }));
      // no waiting: this listing reads the queue records
      const now = byName(await collect(admin.streamQueues(vhost, { stats: false })));
      expect(Object.values(now).map((q) => [q.name, q.policy, q.operatorPolicy])).toEqual(
        expect.arrayContaining([
          ['q-classic', 'p', undefined],
          ['q-quorum', 'p', undefined],
          ['q-stream', 'p', undefined],
          ['other', null, undefined],
        ]),
      );

      const withStats = await waitFor(
        async () => {
          const qs = byName(await collect(admin.streamQueues(vhost, { stats: true })));
          const ours = ['q-classic', 'q-quorum', 'q-stream'].map((n) => qs[n]);
          return ours.every((q) => q?.policy === 'p' && q.operatorPolicy === 'op') && qs;
        },
        { deadlineMs: 45_000, intervalMs: 500, what: 'stats-derived policy fields' },
      );
      expect(withStats['q-classic']?.effectiveDefinition).toEqual({ 'max-length-bytes': 500_000 });
      expect(withStats['q-stream']?.effectiveDefinition).toEqual({ 'max-length-bytes': 500_000 });

      await admin.deletePolicy('user', vhost, 'p');
      const afterDelete = byName(await collect(admin.streamQueues(vhost, { stats: false })));
      expect(afterDelete['q-classic']?.policy).toBeNull();
    }),
  );

  it(
    'exchanges report their user policy at once, absent key = none; the default exchange is ""',
    inVhost(async (vhost) => {
      await admin.putExchange(vhost, 'ex/1', 'topic');
      await admin.putExchange(vhost, 'plain', 'fanout');
      await admin.putPolicy(
        'user',
        policy(vhost, 'pe', {
          pattern: '^ex',
          applyTo: 'exchanges',
          definition: { 'alternate-exchange': 'ae' },
        }),
      );
      await admin.putPolicy('operator', policy(vhost, 'ope', { pattern: '.*', applyTo: 'all' }));

      expect(await admin.getExchange(vhost, 'ex/1')).toEqual({
        name: 'ex/1',
        vhost,
        type: 'topic',
        arguments: {},
        policy: 'pe',
        internal: false,
        durable: true,
      });
      expect((await admin.getExchange(vhost, 'plain'))?.policy).toBeNull();
      expect(await admin.getExchange(vhost, 'missing')).toBeNull();
      expect(await admin.getExchange(vhost, '')).toMatchObject({ name: '', type: 'direct', policy: null });

      const listed = byName(await collect(admin.streamExchanges(vhost)));
      expect(listed['ex/1']?.policy).toBe('pe');
      expect(listed.plain?.policy).toBeNull();
      expect(listed['']?.type).toBe('direct');
      expect(listed['amq.topic']).toBeDefined();
    }),
  );

  it(
    'queue helpers: declare, refuse an inequivalent redeclare, delete',
    inVhost(async (vhost) => {
      await admin.putQueue(vhost, 'a/b é', { kind: 'classic' });
      expect((await admin.getQueue(vhost, 'a/b é'))?.name).toBe('a/b é');
      const e = await rejection(admin.putQueue(vhost, 'a/b é', { kind: 'quorum' }));
      expect(e.code).toBe('refused-by-broker');
      expect(e.reason).toContain('inequivalent arg');
      await admin.deleteQueue(vhost, 'a/b é');
      expect(await admin.getQueue(vhost, 'a/b é')).toBeNull();
      expect((await rejection(admin.deleteQueue(vhost, 'a/b é'))).code).toBe('not-found');
    }),
  );
});
