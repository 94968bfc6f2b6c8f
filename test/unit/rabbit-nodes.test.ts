/**
 * A cluster's nodes behind one ManagementClient (transport.ts), against local fakes: a node that
 * refuses, hangs or fails is left for the next inside the question's budget and remembered; a 4xx
 * is an answer; a write goes to a second node only when the first never received it.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManagementClient } from '../../src/rabbit/client.ts';
import type { CallInfo } from '../../src/rabbit/transport.ts';
import { closedPortUrl, type FakeBroker, startFakeBroker } from '../support/fakeBroker.ts';

const POLICY = { vhost: 'v', name: 'p', pattern: '.*', applyTo: 'queues', priority: 0, definition: {} };
const POLICIES = [
  { vhost: 'v', name: 'p', pattern: '.*', 'apply-to': 'queues', priority: 0, definition: {} },
];

let fakes: FakeBroker[];
let calls: CallInfo[];
let clients: ManagementClient[];

const make = (url: string[], extra: Partial<ConstructorParameters<typeof ManagementClient>[0]> = {}) => {
  const client = new ManagementClient({
    url,
    user: 'bot',
    password: 'pw',
    retryBaseMs: 5,
    onCall: (info) => calls.push(info),
    ...extra,
  });
  clients.push(client);
  return client;
};

beforeEach(async () => {
  fakes = [await startFakeBroker(), await startFakeBroker()];
  calls = [];
  clients = [];
});

afterEach(async () => {
  await Promise.all(clients.map((c) => c.close(0)));
  await Promise.all(fakes.map((f) => f.close()));
});

const [first, second] = [0, 1];

describe('a cluster of nodes', () => {
  it('a refused node costs one failed connect: the answer comes from the next, which is remembered', async () => {
    const dead = await closedPortUrl();
    const live = fakes[first] as FakeBroker;
    live.setFallback({ kind: 'respond', status: 200, body: POLICIES });
    const client = make([dead, live.url]);
    expect(client.node).toBe(dead);
    expect((await client.forQuestion(5_000).listPolicies('v')).map((p) => p.name)).toEqual(['p']);
    expect(client.node).toBe(live.url);
    await client.forQuestion(5_000).listPolicies('v');
    expect(calls.map((c) => [c.node, c.error])).toEqual([
      [dead, 'unreachable'],
      [live.url, undefined],
      [live.url, undefined],
    ]);
  });

  it('a node that hangs is left once the attempt times out, inside the one budget', async () => {
    const [hung, live] = fakes as [FakeBroker, FakeBroker];
    hung.setFallback({ kind: 'hang' });
    live.setFallback({ kind: 'respond', status: 200, body: POLICIES });
    const client = make([hung.url, live.url], { timeouts: { headersMs: 200 } });
    await client.forQuestion(2_000).listPolicies('v');
    expect(calls.map((c) => [c.node, c.error])).toEqual([
      [hung.url, 'timeout'],
      [live.url, undefined],
    ]);
  });

  it('a 5xx moves a read to the next node; a 4xx is an answer and stays', async () => {
    const [a, b] = fakes as [FakeBroker, FakeBroker];
    a.enqueue({ kind: 'respond', status: 503 });
    b.setFallback({ kind: 'respond', status: 404, body: { error: 'Object Not Found', reason: 'Not Found' } });
    const client = make([a.url, b.url]);
    expect(await client.forQuestion(5_000).getQueue('v', 'q')).toBeNull();
    expect(calls.map((c) => [c.node, c.status])).toEqual([
      [a.url, 503],
      [b.url, 404],
    ]);
    expect(client.node).toBe(b.url);
  });

  it('every node down: the question fails as unreachable within its budget, each node tried', async () => {
    const client = make([await closedPortUrl(), await closedPortUrl()], { getRetries: 1 });
    await expect(client.forQuestion(2_000).listPolicies('v')).rejects.toMatchObject({ code: 'unreachable' });
    expect(new Set(calls.map((c) => c.node)).size).toBe(2);
  });

  it('a streamed listing fails over before its first element', async () => {
    const dead = await closedPortUrl();
    const live = fakes[second] as FakeBroker;
    live.setFallback({ kind: 'respond', status: 200, body: [{ name: 'q1', vhost: 'v' }] });
    const client = make([dead, live.url]);
    const names: string[] = [];
    for await (const q of client.forQuestion(5_000).streamNames('queues', 'v')) names.push(q.name);
    expect(names).toEqual(['q1']);
  });
});

describe('writes on a cluster', () => {
  it('a write refused by a node (never sent) goes to the next, once', async () => {
    const dead = await closedPortUrl();
    const live = fakes[first] as FakeBroker;
    live.setFallback({ kind: 'respond', status: 201 });
    const client = make([dead, live.url]);
    await client.forQuestion(5_000).putPolicy('user', POLICY);
    expect(live.requests.map((r) => r.method)).toEqual(['PUT']);
  });

  it('a write whose answer was lost is never sent to a second node; the next call goes elsewhere', async () => {
    const [a, b] = fakes as [FakeBroker, FakeBroker];
    a.setFallback({ kind: 'drop' });
    b.setFallback({ kind: 'respond', status: 200, body: POLICIES });
    const client = make([a.url, b.url]);
    await expect(client.forQuestion(5_000).putPolicy('user', POLICY)).rejects.toMatchObject({
      code: 'unreachable',
    });
    expect(a.requests.map((r) => r.method)).toEqual(['PUT']);
    expect(b.requests).toEqual([]);
    // The read back goes to the other node.
    await client.forQuestion(5_000).listPolicies('v');
    expect(b.requests.map((r) => r.method)).toEqual(['GET']);
  });

  it('a write that timed out is not sent again anywhere', async () => {
    const [a, b] = fakes as [FakeBroker, FakeBroker];
    a.setFallback({ kind: 'hang' });
    const client = make([a.url, b.url], { timeouts: { headersMs: 200 } });
    await expect(client.forQuestion(5_000).deletePolicy('user', 'v', 'p')).rejects.toMatchObject({
      code: 'timeout',
    });
    expect(b.requests).toEqual([]);
    expect(client.node).toBe(b.url);
  });
});

it('refuses nodes with different path prefixes', () => {
  expect(() => make(['http://a:15672/x', 'http://b:15672/y'])).toThrow(/one path prefix/);
  expect(() => make([])).toThrow(/at least one node/);
});
