/** The client against a local fake: requests it sends, answers it accepts. No broker needed. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManagementClient } from '../../src/rabbit/client.ts';
import { RabbitError } from '../../src/rabbit/errors.ts';
import type { QueueListing } from '../../src/rabbit/responses.ts';
import type { CallInfo } from '../../src/rabbit/transport.ts';
import { waitFor } from '../support/broker.ts';
import { type FakeBroker, startFakeBroker } from '../support/fakeBroker.ts';

let fake: FakeBroker;
let client: ManagementClient;
let calls: CallInfo[];

const make = (extra: Partial<ConstructorParameters<typeof ManagementClient>[0]> = {}) =>
  new ManagementClient({
    url: fake.url,
    user: 'bot',
    password: 's3cret:pw',
    retryBaseMs: 5,
    onCall: (info) => calls.push(info),
    ...extra,
  });

beforeEach(async () => {
  fake = await startFakeBroker();
  calls = [];
  client = make();
});

afterEach(async () => {
  await client.close();
  await fake.close();
});

const policyJson = {
  vhost: '/',
  name: 'a/b',
  pattern: '^q',
  'apply-to': 'queues',
  priority: 1.5,
  definition: { 'max-length': 5 },
};

describe('requests', () => {
  it('encodes every path segment and sends basic auth', async () => {
    fake.enqueue({ kind: 'respond', status: 200, body: policyJson });
    await client.getPolicy('user', '/', 'a/b c+é?#');
    const [req] = fake.requests;
    expect(req?.url).toBe('/api/policies/%2F/a%2Fb%20c%2B%C3%A9%3F%23');
    expect(req?.headers.authorization).toBe(`Basic ${Buffer.from('bot:s3cret:pw').toString('base64')}`);
  });

  it('keeps a path prefix of the management URL', async () => {
    const prefixed = make({ url: `${fake.url}/rabbitmq/` });
    fake.enqueue({ kind: 'respond', status: 200, body: [] });
    await prefixed.listOperatorPolicies('v');
    await prefixed.close();
    expect(fake.requests[0]?.url).toBe('/rabbitmq/api/operator-policies/v');
  });

  it('refuses credentials inside the URL', () => {
    expect(() => make({ url: 'http://u:p@127.0.0.1:1' })).toThrow(/user\/password/);
  });

  it('PUTs a policy as JSON with all four fields', async () => {
    fake.enqueue({ kind: 'respond', status: 201 }, { kind: 'respond', status: 204 });
    const policy = {
      vhost: '/',
      name: 'p',
      pattern: '^q',
      applyTo: 'queues',
      priority: -5,
      definition: { x: 1 },
    };
    expect(await client.putPolicy('operator', policy)).toBe('created');
    expect(await client.putPolicy('operator', policy)).toBe('updated');
    const req = fake.requests[0];
    expect(req?.method).toBe('PUT');
    expect(req?.url).toBe('/api/operator-policies/%2F/p');
    expect(req?.headers['content-type']).toBe('application/json');
    expect(JSON.parse(req?.body ?? '')).toEqual({
      pattern: '^q',
      definition: { x: 1 },
      priority: -5,
      'apply-to': 'queues',
    });
  });

  it('addresses the default exchange as amq.default', async () => {
    fake.enqueue({
      kind: 'respond',
      status: 200,
      body: { name: '', vhost: 'v', type: 'direct', arguments: {} },
    });
    const e = await client.getExchange('v', '');
    expect(fake.requests[0]?.url).toBe('/api/exchanges/v/amq.default');
    expect(e).toEqual({ name: '', vhost: 'v', type: 'direct', arguments: {}, policy: null });
  });

  it('reports every attempt to onCall', async () => {
    fake.enqueue({ kind: 'respond', status: 503 }, { kind: 'respond', status: 200, body: [] });
    await client.listPolicies('v');
    expect(
      calls.map(({ method, path, status, attempt, error }) => ({ method, path, status, attempt, error })),
    ).toEqual([
      { method: 'GET', path: '/api/policies/v', status: 503, attempt: 0, error: 'broker-error' },
      { method: 'GET', path: '/api/policies/v', status: 200, attempt: 1, error: undefined },
    ]);
    expect(calls.every((c) => c.ms >= 0)).toBe(true);
  });
});

describe('failures', () => {
  it('times out on headers close to the configured time', async () => {
    const quick = make({ timeouts: { headersMs: 200 }, getRetries: 0 });
    fake.setFallback({ kind: 'hang' });
    const started = performance.now();
    await expect(quick.whoami()).rejects.toMatchObject({ code: 'timeout', path: '/api/whoami' });
    expect(performance.now() - started).toBeLessThan(600);
    await quick.close();
  });

  it('a dropped connection is unreachable; getRetries: 0 tries once', async () => {
    const once = make({ getRetries: 0 });
    fake.setFallback({ kind: 'drop' });
    await expect(once.listVhosts()).rejects.toMatchObject({ code: 'unreachable' });
    expect(fake.requests).toHaveLength(1);
    await once.close();
  });

  it('retries GETs twice by default, then gives up', async () => {
    fake.setFallback({ kind: 'respond', status: 500 });
    await expect(client.listVhosts()).rejects.toMatchObject({ code: 'broker-error', status: 500 });
    expect(fake.requests).toHaveLength(3);
  });

  it('never retries writes', async () => {
    fake.setFallback({ kind: 'respond', status: 502 });
    await expect(client.deletePolicy('user', 'v', 'p')).rejects.toMatchObject({ code: 'broker-error' });
    const policy = { vhost: 'v', name: 'p', pattern: '^', applyTo: 'all', priority: 0, definition: {} };
    await expect(client.putPolicy('user', policy)).rejects.toMatchObject({ code: 'broker-error' });
    expect(fake.requests.map((r) => r.method)).toEqual(['DELETE', 'PUT']);
  });
});

describe('answers', () => {
  it('maps policies', async () => {
    fake.enqueue({ kind: 'respond', status: 200, body: [policyJson] });
    expect(await client.listPolicies('/')).toEqual([
      {
        vhost: '/',
        name: 'a/b',
        pattern: '^q',
        applyTo: 'queues',
        priority: 1.5,
        definition: { 'max-length': 5 },
      },
    ]);
  });

  it('a 404 on a single object is null', async () => {
    fake.setFallback({
      kind: 'respond',
      status: 404,
      body: { error: 'Object Not Found', reason: 'Not Found' },
    });
    expect(await client.getPolicy('user', 'v', 'p')).toBeNull();
    expect(await client.getQueue('v', 'q')).toBeNull();
    expect(await client.getExchange('v', 'e')).toBeNull();
    await expect(client.deletePolicy('user', 'v', 'p')).rejects.toMatchObject({
      code: 'not-found',
      status: 404,
    });
  });

  it('reads whoami tags as an array or a comma string', async () => {
    fake.enqueue(
      { kind: 'respond', status: 200, body: { name: 'a', tags: ['administrator'] } },
      { kind: 'respond', status: 200, body: { name: 'b', tags: 'management, policymaker' } },
      { kind: 'respond', status: 200, body: { name: 'c', tags: '' } },
    );
    expect(await client.whoami()).toEqual({ name: 'a', tags: ['administrator'] });
    expect(await client.whoami()).toEqual({ name: 'b', tags: ['management', 'policymaker'] });
    expect(await client.whoami()).toEqual({ name: 'c', tags: [] });
  });

  it('asks the overview without the statistics it would gather from every node', async () => {
    fake.enqueue({ kind: 'respond', status: 200, body: { rabbitmq_version: '4.3.6', cluster_name: 'c1' } });
    expect((await client.overview()).versionText).toBe('4.3.6');
    expect(fake.requests.map((r) => r.url)).toEqual(['/api/overview?disable_stats=true']);
  });

  it('caches the overview, but not a failure', async () => {
    fake.enqueue(
      { kind: 'respond', status: 401, body: { error: 'not_authorized', reason: 'Login failed' } },
      { kind: 'respond', status: 200, body: { rabbitmq_version: '3.10.8', cluster_name: 'c1', other: 1 } },
    );
    await expect(client.overview()).rejects.toMatchObject({ code: 'unauthorized' });
    const expected = { version: { major: 3, minor: 10, patch: 8 }, versionText: '3.10.8', clusterName: 'c1' };
    expect(await client.overview()).toEqual(expected);
    expect(await client.overview()).toEqual(expected);
    expect(fake.requests).toHaveLength(2);
  });

  it('an answer of the wrong shape is a bad response', async () => {
    fake.enqueue(
      { kind: 'respond', status: 200, body: [{ name: 'p', priority: '1' }] },
      { kind: 'respond', status: 200, body: 'not json' },
      { kind: 'respond', status: 200, body: { rabbitmq_version: 'nightly' } },
    );
    await expect(client.listPolicies('v')).rejects.toMatchObject({ code: 'bad-response' });
    await expect(client.listPolicies('v')).rejects.toMatchObject({ code: 'bad-response' });
    await expect(client.overview()).rejects.toMatchObject({ code: 'bad-response' });
    expect(fake.requests).toHaveLength(3); // not retried
  });

  it('a definition or arguments that is not a JSON object is a bad response; [] (an empty proplist) is {}', async () => {
    fake.enqueue(
      { kind: 'respond', status: 200, body: [{ ...policyJson, definition: 'max-length=5' }] },
      { kind: 'respond', status: 200, body: [{ ...policyJson, definition: null }] },
      { kind: 'respond', status: 200, body: [{ ...policyJson, definition: [5] }] },
      { kind: 'respond', status: 200, body: [{ ...policyJson, definition: [] }] },
      { kind: 'respond', status: 200, body: { name: 'q', vhost: 'v', type: 'classic', arguments: 7 } },
    );
    for (let i = 0; i < 3; i++)
      await expect(client.listPolicies('v')).rejects.toMatchObject({ code: 'bad-response' });
    expect((await client.listPolicies('v'))[0]?.definition).toEqual({});
    await expect(client.getQueue('v', 'q')).rejects.toMatchObject({ code: 'bad-response' });
  });

  it('reads a quorum queue\'s delivery_limit "unlimited" (4.0 and later, a limit below 0) as -1, none', async () => {
    const base = { name: 'q', vhost: 'v', arguments: {}, type: 'quorum' };
    fake.enqueue(
      { kind: 'respond', status: 200, body: { ...base, delivery_limit: 'unlimited' } },
      { kind: 'respond', status: 200, body: { ...base, delivery_limit: 20 } },
    );
    expect((await client.getQueue('v', 'q'))?.durability?.deliveryLimit).toBe(-1);
    expect((await client.getQueue('v', 'q'))?.durability?.deliveryLimit).toBe(20);
  });

  it('keeps absent (not reported) apart from null and "" (none) on a queue', async () => {
    const base = { name: 'q', vhost: 'v', arguments: {} };
    fake.enqueue(
      { kind: 'respond', status: 200, body: { ...base, type: 'classic' } },
      {
        kind: 'respond',
        status: 200,
        body: { ...base, type: 'quorum', policy: '', operator_policy: null, effective_policy_definition: {} },
      },
      {
        kind: 'respond',
        status: 200,
        body: {
          ...base,
          type: 'x-delayed',
          policy: 'p',
          operator_policy: 'o',
          effective_policy_definition: { a: 1 },
        },
      },
    );
    expect(await client.getQueue('v', 'q')).toEqual({
      ...base,
      kind: 'classic',
      type: 'classic',
      policy: undefined,
      operatorPolicy: undefined,
      effectiveDefinition: undefined,
      // No statistics in the answer: unknown, not zeros.
      live: null,
      // No `state: "down"` in the answer: its node is not known to be down.
      nodeDown: false,
      // Nothing of its durability in the answer: every field not reported (undefined), never a default.
      durability: {},
    });
    expect(await client.getQueue('v', 'q')).toMatchObject({
      kind: 'quorum',
      policy: null,
      operatorPolicy: null,
      effectiveDefinition: {},
    });
    expect(await client.getQueue('v', 'q')).toMatchObject({
      kind: null,
      type: 'x-delayed',
      policy: 'p',
      operatorPolicy: 'o',
      effectiveDefinition: { a: 1 },
    });
  });
});

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

describe('streamed listings', () => {
  const listing = [
    { name: 'a', type: 'classic', arguments: {}, policy: 'p' },
    { name: 'b', type: 'quorum', arguments: { 'x-queue-type': 'quorum' } },
    {
      name: 'c',
      type: 'stream',
      arguments: [],
      policy: '',
      operator_policy: null,
      effective_policy_definition: {},
    },
  ];

  it('without stats: one request, absent policy means none', async () => {
    fake.enqueue({ kind: 'respond', status: 200, body: listing });
    const got = await collect(client.streamQueues('/', { stats: false }));
    expect(fake.requests.map((r) => r.url)).toEqual([
      '/api/queues/%2F?disable_stats=true&columns=name,type,arguments,policy',
    ]);
    expect(got).toEqual<QueueListing[]>([
      { name: 'a', vhost: '/', kind: 'classic', type: 'classic', arguments: {}, policy: 'p' },
      {
        name: 'b',
        vhost: '/',
        kind: 'quorum',
        type: 'quorum',
        arguments: { 'x-queue-type': 'quorum' },
        policy: null,
      },
      { name: 'c', vhost: '/', kind: 'stream', type: 'stream', arguments: {}, policy: null },
    ]);
  });

  it('the queues a pattern finds: one filtered page; the whole listing where the broker answers otherwise', async () => {
    fake.enqueue({ kind: 'respond', status: 200, body: { filtered_count: 1, items: [listing[0]] } });
    expect((await client.findQueues('v', '^a$'))?.map((q) => q.name)).toEqual(['a']);
    expect(fake.requests[0]?.url).toBe(
      `/api/queues/v?disable_stats=true&columns=name,type,arguments,policy&use_regex=true&page=1&page_size=200&name=${encodeURIComponent('(?-i)^a$')}`,
    );
    // More found than the page holds; paging ignored (a plain listing); the filter refused.
    fake.enqueue({ kind: 'respond', status: 200, body: { filtered_count: 501, items: [listing[0]] } });
    expect(await client.findQueues('v', '.')).toBeNull();
    fake.enqueue({ kind: 'respond', status: 200, body: listing });
    expect(await client.findQueues('v', '.')).toBeNull();
    fake.enqueue({ kind: 'respond', status: 400, body: { error: 'bad_request', reason: 'bad filter' } });
    expect(await client.findQueueStats('v', '.')).toBeNull();
    // The broker failing is not a reason to read the whole listing: it is said.
    fake.enqueue({ kind: 'respond', status: 401, body: { error: 'not_authorised', reason: 'no' } });
    await expect(client.findQueues('v', '.')).rejects.toMatchObject({ code: 'forbidden' });
  });

  it('with stats: absent stays undefined', async () => {
    fake.enqueue({ kind: 'respond', status: 200, body: listing });
    const got = await collect(client.streamQueues('v', { stats: true }));
    expect(fake.requests[0]?.url).toBe(
      '/api/queues/v?columns=name,type,arguments,policy,operator_policy,effective_policy_definition',
    );
    expect(got.map((q) => [q.policy, q.operatorPolicy, q.effectiveDefinition])).toEqual([
      ['p', undefined, undefined],
      [undefined, undefined, undefined],
      [null, null, {}],
    ]);
  });

  it('exchanges: absent policy is none', async () => {
    fake.enqueue({
      kind: 'respond',
      status: 200,
      body: [
        { name: '', type: 'direct', arguments: {} },
        { name: 'e', type: 'topic', arguments: {}, policy: 'pe' },
      ],
    });
    const got = await collect(client.streamExchanges('v'));
    expect(fake.requests[0]?.url).toBe('/api/exchanges/v?columns=name,type,arguments,policy,internal');
    expect(got.map((e) => [e.name, e.policy])).toEqual([
      ['', null],
      ['e', 'pe'],
    ]);
  });

  it('is retried before the first item, like any GET', async () => {
    fake.enqueue(
      { kind: 'respond', status: 502 },
      { kind: 'drop' },
      { kind: 'respond', status: 200, body: listing },
    );
    expect(await collect(client.streamQueues('v', { stats: false }))).toHaveLength(3);
    expect(fake.requests).toHaveLength(3);
  });

  it('a bad item fails the listing as bad-response', async () => {
    fake.enqueue({ kind: 'respond', status: 200, body: [listing[0], { name: 3 }] });
    const seen: string[] = [];
    const run = async () => {
      for await (const q of client.streamQueues('v', { stats: false })) seen.push(q.name);
    };
    await expect(run()).rejects.toMatchObject({
      code: 'bad-response',
      message: expect.stringContaining('item 1'),
    });
    expect(seen).toEqual(['a']);
  });

  it('stopping early releases the connection', async () => {
    const single = make({ connections: 1 });
    fake.setFallback({ kind: 'respond', status: 200, body: listing });
    for await (const q of single.streamQueues('v', { stats: false })) {
      expect(q.name).toBe('a');
      break;
    }
    expect(await collect(single.streamQueues('v', { stats: false }))).toHaveLength(3);
    await single.close();
  });

  it('a 404 vhost fails the listing with not-found', async () => {
    fake.enqueue({ kind: 'respond', status: 404, body: { error: 'Object Not Found', reason: 'Not Found' } });
    await expect(collect(client.streamExchanges('nope'))).rejects.toBeInstanceOf(RabbitError);
    expect(fake.requests).toHaveLength(1);
  });
});

describe('bounds: size, deadline, budget, shutdown', () => {
  it('an answer over bodyBytes is too-large, read no further, not retried', async () => {
    const small = make({ limits: { bodyBytes: 64 * 1024 } });
    fake.setFallback({ kind: 'endless', head: '{"name":"' });
    await expect(small.whoami()).rejects.toMatchObject({ code: 'too-large', path: '/api/whoami' });
    expect(fake.requests).toHaveLength(1);
    await small.close();
  });

  it('one listing item over itemBytes is too-large, naming the item', async () => {
    const small = make({ limits: { itemBytes: 4096 } });
    const big = JSON.stringify({ name: 'b', type: 'classic', arguments: { 'x-note': 'n'.repeat(5000) } });
    const small1 = JSON.stringify({ name: 'a', type: 'classic', arguments: {} });
    fake.enqueue({ kind: 'respond', status: 200, body: `[${small1},${big}]` });
    const seen: string[] = [];
    const run = async () => {
      for await (const q of small.streamQueues('v', { stats: false })) seen.push(q.name);
    };
    await expect(run()).rejects.toMatchObject({
      code: 'too-large',
      message: expect.stringContaining('item 1'),
    });
    expect(seen).not.toContain('b');
    await small.close();
  });

  it('an endless listing stops at listingBytes', async () => {
    const small = make({ limits: { listingBytes: 1024 * 1024 } });
    fake.setFallback({ kind: 'endless' });
    await expect(collect(small.streamQueues('v', { stats: false }))).rejects.toMatchObject({
      code: 'too-large',
    });
    await small.close();
  });

  it('a body that drips is cut at requestMs, whatever bodyMs says', async () => {
    const quick = make({ timeouts: { requestMs: 300, bodyMs: 10_000 }, getRetries: 0 });
    fake.setFallback({ kind: 'drip', body: '{"name":"bot","tags":[]}', intervalMs: 50 });
    await expect(quick.whoami()).rejects.toMatchObject({ code: 'timeout' });
    await quick.close();
  });

  it('forQuestion: every call and retry of the question inside one budget', async () => {
    fake.setFallback({ kind: 'hang' });
    const question = client.forQuestion(300);
    await expect(question.whoami()).rejects.toMatchObject({ code: 'timeout' });
    // The budget is spent: the next call of the same question fails at once, never reaching the
    // broker. (A retry of whoami sent just before the budget ran out may still be recorded by the
    // fake after the rejection: only the vhosts' requests count.)
    const vhostsAsked = () => fake.requests.filter((r) => r.url.startsWith('/api/vhosts')).length;
    const before = vhostsAsked();
    await expect(question.listVhosts()).rejects.toMatchObject({ code: 'timeout' });
    expect(vhostsAsked()).toBe(before);
    // Closing a question's view leaves the client's pool open.
    await question.close();
    fake.setFallback({ kind: 'respond', status: 200, body: [{ name: '/' }] });
    expect(await client.listVhosts()).toEqual(['/']);
  });

  it('a default budget stretched to fit the broker gives an answer in flight the time; a budget set is not stretched', async () => {
    const slow = { kind: 'respond', status: 200, body: { name: 'bot', tags: [] }, delayMs: 600 } as const;
    fake.setFallback(slow);
    // The default (stretchable): stretched while the answer is awaited, it arrives.
    const stretchable = client.forQuestion(200, { stretchableToMs: 5_000 });
    const answered = stretchable.whoami();
    stretchable.stretchBudget(2_000);
    await expect(answered).resolves.toMatchObject({ name: 'bot' });
    // Never past where it may stretch to.
    const capped = client.forQuestion(200, { stretchableToMs: 300 });
    const cut = capped.whoami();
    capped.stretchBudget(2_000);
    await expect(cut).rejects.toMatchObject({ code: 'timeout' });
    // RMQ_TIMEOUT set: stretching does nothing.
    const set = client.forQuestion(200);
    const refused = set.whoami();
    set.stretchBudget(2_000);
    await expect(refused).rejects.toMatchObject({ code: 'timeout' });
  });

  it('a default budget stretched for the listing with statistics from a page asked beside it; nothing asked without one', async () => {
    // RMQ_TIMEOUT set: no page asked.
    await client.forQuestion(300).stretchBudgetForStatistics('v');
    expect(fake.requests).toEqual([]);
    const stretchable = client.forQuestion(300, { stretchableToMs: 10_000 });
    fake.enqueue({
      kind: 'respond',
      status: 200,
      body: { filtered_count: 1, items: [{ name: 'q' }] },
      delayMs: 100,
    });
    const stretched = stretchable.stretchBudgetForStatistics('v');
    await waitFor(async () => fake.requests.length === 1 || undefined, { deadlineMs: 2_000 });
    expect(fake.requests[0]?.url).toBe('/api/queues/v?disable_stats=true&columns=name&page=1&page_size=1');
    // The listing in flight (here a slow whoami) outlives the 300 ms it was given: 32 times the page's time.
    fake.setFallback({ kind: 'respond', status: 200, body: { name: 'bot', tags: [] }, delayMs: 900 });
    const answered = stretchable.whoami();
    await stretched;
    await expect(answered).resolves.toMatchObject({ name: 'bot' });
  });

  it('close(graceMs) ends requests that hang, instead of waiting for them', async () => {
    const closing = make({ getRetries: 0 });
    fake.setFallback({ kind: 'hang' });
    const outcome = closing.whoami().then(
      () => 'answered',
      (e: unknown) => e,
    );
    await waitFor(() => fake.requests.length === 1, { what: 'the request to arrive' });
    await closing.close(100);
    expect(await outcome).toMatchObject({ code: 'timeout', message: expect.stringContaining('closed') });
  });

  it('refuses "." and ".." as a vhost or name before any request', async () => {
    await expect(client.listPolicies('.')).rejects.toMatchObject({ code: 'bad-input' });
    await expect(client.getQueue('v', '..')).rejects.toMatchObject({ code: 'bad-input' });
    expect(fake.requests).toHaveLength(0);
  });
});

describe('deprecatedFeaturesUsed', () => {
  it("reads each feature's name and phase; a path this version lacks (404, 406) is null, not an error", async () => {
    fake.enqueue({
      kind: 'respond',
      status: 200,
      body: [
        {
          name: 'transient_nonexcl_queues',
          desc: '',
          deprecation_phase: 'permitted_by_default',
          doc_url: '',
        },
      ],
    });
    expect(await client.deprecatedFeaturesUsed()).toEqual([
      { name: 'transient_nonexcl_queues', phase: 'permitted_by_default' },
    ]);
    expect(fake.requests[0]?.url).toBe('/api/deprecated-features/used');
    fake.enqueue({ kind: 'respond', status: 406, body: { error: 'Not Acceptable' } });
    expect(await client.deprecatedFeaturesUsed()).toBeNull();
    fake.enqueue({ kind: 'respond', status: 404, body: { error: 'Object Not Found' } });
    expect(await client.deprecatedFeaturesUsed()).toBeNull();
  });

  it('refused (403) or unreadable: an error with its code', async () => {
    fake.enqueue({ kind: 'respond', status: 403, body: { error: 'not_authorised' } });
    await expect(client.deprecatedFeaturesUsed()).rejects.toMatchObject({ code: 'forbidden' });
    fake.enqueue({ kind: 'respond', status: 200, body: [{ name: 'x' }] });
    await expect(client.deprecatedFeaturesUsed()).rejects.toBeInstanceOf(RabbitError);
  });
});
