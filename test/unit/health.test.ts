/**
 * The probes' background check (src/bot/health.ts) on parts that answer, hang or refuse: readiness
 * answers at once from the last result, each part with its state, error code and age; Redis
 * gates readiness, a broker does not; draining does; Redis persistence read from CONFIG GET.
 * The probes against the real Redis and brokers (and a drip and a black hole) are in
 * test/e2e/slack-probes.test.ts.
 */
import { describe, expect, it } from 'vitest';
import {
  createHealthMonitor,
  type PartCheck,
  type Persistence,
  redisPersistence,
} from '../../src/bot/health.ts';

const never = () => new Promise<never>(() => {});
const refused = (code: string) => () => Promise.reject(Object.assign(new Error('x'), { code }));
const configOf =
  (values: Record<string, string>) =>
  async (_: 'GET', name: string): Promise<unknown> =>
    name in values ? [name, values[name]] : [];

describe('health monitor', () => {
  it('reports each part from its last check, a part that hangs as timed out, and answers while a check hangs', async () => {
    let clock = 1_000_000;
    const told: [string, PartCheck | Persistence][] = [];
    const monitor = createHealthMonitor({
      brokers: new Map([
        ['a', { whoami: async () => ({}) }],
        ['b', { whoami: never }],
        ['c', { whoami: refused('unauthorized') }],
      ]),
      redis: { ping: async () => 'PONG', config: configOf({ appendonly: 'no', save: '' }) },
      timeoutMs: 30,
      now: () => clock,
      onChange: (part, now) => void told.push([part, now]),
    });
    // Before any check: nothing claimed, not ready.
    expect(monitor.readiness()).toMatchObject({ ok: false, redis: { state: 'unknown' } });
    await monitor.checkNow();
    clock += 1234;
    const r = monitor.readiness();
    expect(r).toMatchObject({
      ok: true,
      draining: false,
      redis: { state: 'ok', ok: true, ageMs: 1234, persistence: { onDisk: false, aof: false, rdb: false } },
      brokers: {
        a: { state: 'ok', ok: true, ageMs: 1234 },
        b: { state: 'failing', ok: false, error: 'timeout' },
        c: { state: 'failing', ok: false, error: 'unauthorized' },
      },
    });
    expect(r.brokers.a?.checkedAt).toBe(new Date(1_000_000).toISOString());
    // Told once each: the failing parts and the persistence, not the parts that answer.
    expect(told.map(([part]) => part).sort()).toEqual(['broker b', 'broker c', 'redis persistence']);
    await monitor.checkNow();
    expect(told).toHaveLength(3);
  });

  it("reports a cluster's nodes one by one; the broker answers while one node does", async () => {
    const nodes = new Map([
      ['http://n1', refused('ECONNREFUSED')],
      ['http://n2', async () => ({})],
    ]);
    const node = (url: string) => ({ whoami: nodes.get(url) ?? refused('error') });
    const monitor = createHealthMonitor({
      brokers: new Map([
        ['prod', { whoami: async () => ({}), nodeUrls: [...nodes.keys()], onNode: node }],
        ['single', { whoami: async () => ({}), nodeUrls: ['http://only'], onNode: node }],
      ]),
      redis: { ping: async () => 'PONG' },
      timeoutMs: 30,
    });
    await monitor.checkNow();
    const r = monitor.readiness();
    expect(r.brokers.prod).toMatchObject({
      state: 'ok',
      nodes: { 'http://n1': { state: 'failing', error: 'unreachable' }, 'http://n2': { state: 'ok' } },
    });
    expect(r.brokers.single).not.toHaveProperty('nodes');
    expect(r.ok).toBe(true);
  });

  it('is not ready while Redis does not answer, nor once draining; a broker down leaves it ready', async () => {
    let redisUp = false;
    const monitor = createHealthMonitor({
      brokers: new Map([['down', { whoami: refused('unreachable') }]]),
      redis: {
        ping: () => (redisUp ? Promise.resolve('PONG') : Promise.reject(new Error('connect ECONNREFUSED'))),
      },
      timeoutMs: 30,
    });
    await monitor.checkNow();
    expect(monitor.readiness()).toMatchObject({ ok: false, redis: { ok: false, error: 'unreachable' } });
    redisUp = true;
    await monitor.checkNow();
    expect(monitor.readiness()).toMatchObject({
      ok: true,
      brokers: { down: { ok: false, error: 'unreachable' } },
    });
    // No CONFIG at all: persistence is not claimed.
    expect(monitor.readiness().redis.persistence).toBeUndefined();
    monitor.drain();
    expect(monitor.draining).toBe(true);
    expect(monitor.readiness()).toMatchObject({ ok: false, draining: true });
  });

  it.each([
    [
      { appendonly: 'yes', save: '' },
      { onDisk: true, aof: true, rdb: false },
    ],
    [
      { appendonly: 'no', save: '3600 1 300 100' },
      { onDisk: true, aof: false, rdb: true },
    ],
    [
      { appendonly: 'no', save: '' },
      { onDisk: false, aof: false, rdb: false },
    ],
    // A managed Redis that answers CONFIG GET with nothing.
    [{}, { onDisk: 'unknown', why: 'refused' }],
  ])('persistence of %j is %j', async (values, expected) => {
    expect(await redisPersistence(configOf(values), 100)).toEqual(expected);
  });

  it('persistence is unknown when CONFIG is refused, naming why', async () => {
    const unknownCommand = () => Promise.reject(new Error("ERR unknown command 'CONFIG'"));
    expect(await redisPersistence(unknownCommand, 100)).toEqual({ onDisk: 'unknown', why: 'refused' });
    expect(await redisPersistence(never, 20)).toEqual({ onDisk: 'unknown', why: 'timeout' });
  });
});
