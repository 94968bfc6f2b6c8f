/**
 * `which` with the broker's report injected: the states the real broker shows only for a few
 * seconds (statistics lagging a change) or only when it fails (unreachable, refused).
 * The steady states are proven against the real broker in test/integration/cli-which.test.ts.
 */
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { type WhichBroker, which } from '../../src/commands/which/which.ts';
import type { Policy } from '../../src/policy/types.ts';
import { RabbitError } from '../../src/rabbit/errors.ts';
import { whichView } from '../../src/slack/views/which.ts';
import { whichText } from '../../src/terminal/which.ts';

const policy = (
  name: string,
  priority: number,
  definition: Record<string, unknown>,
  pattern = '^orders\\.',
): Policy => ({
  vhost: '/',
  name,
  pattern,
  applyTo: 'queues',
  priority,
  definition,
});

function broker(
  over: Partial<WhichBroker> & { reported?: string | null; operator?: string | null },
): WhichBroker {
  return {
    overview: async () => ({ version: { major: 3, minor: 10, patch: 8 } }),
    getQueue: async () => ({
      type: 'classic',
      policy: over.reported,
      operatorPolicy: over.operator ?? null,
      effectiveDefinition: {},
    }),
    getExchange: async () => null,
    federation: async () => ({ upstreams: new Set<string>(), upstreamSets: new Set<string>(), links: null }),
    listPolicies: async () => [
      policy('old', 1, { 'message-ttl': 1 }),
      policy('new', 5, { 'message-ttl': 2 }),
    ],
    listOperatorPolicies: async () => [],
    ...over,
  };
}

const input = { name: 'orders.audit', vhost: '/' } as const;

describe('which, when the report and the engine disagree', () => {
  it('a policy set seconds ago that the statistics do not show yet is named, not hidden', async () => {
    const r = await which(input, broker({ reported: 'old' }));
    expect(r.answer).toBe('reported');
    expect(r.inForce?.name).toBe('old');
    expect(r.disagreements.join(' ')).toMatch(/new \(priority 5\) should win over old.*lag/);
  });

  it('a reported policy that no longer exists (deleted a moment ago)', async () => {
    const r = await which(input, broker({ reported: 'gone', operator: 'gone-too' }));
    // Known by name only: an explicit unknown, not blanks a --json reader would take for values.
    expect(r.inForce).toEqual({ name: 'gone', unknown: true });
    expect(r.operatorPolicy).toEqual({ name: 'gone-too', unknown: true });
    expect(whichText(r)).toMatch(
      /In force: gone \(not among the vhost's policies now.*only its name is known\)/,
    );
    expect(JSON.stringify(whichView(r))).toContain('gone');
    expect(r.disagreements.join(' ')).toMatch(/gone, which is not among the vhost's policies/);
  });

  it('the broker reports none while the engine sees a match', async () => {
    const r = await which(input, broker({ reported: null }));
    expect(r.inForce).toBeNull();
    expect(r.nothingGoverns).toBe(true);
    expect(r.disagreements.join(' ')).toMatch(
      /should govern this object although the broker reports no policy/,
    );
  });

  it('a reported winner whose pattern the bot cannot read: the report stands, listed as not read, no disagreement', async () => {
    const r = await which(
      input,
      broker({
        reported: 'look',
        listPolicies: async () => [policy('look', 9, { 'max-length': 1 }, '^(?>orders)')],
      }),
    );
    expect(r.inForce?.name).toBe('look');
    expect(r.unreadable).toEqual([{ name: 'look', pattern: '^(?>orders)', why: expect.any(String) }]);
    expect(r.disagreements).toEqual([]);
  });

  it('a queue of a type this bot does not know: named as the broker names it, its key rules said unknown', async () => {
    const b = broker({ reported: 'old' });
    const r = await which(input, {
      ...b,
      getQueue: async () => ({
        type: 'x-new-type',
        policy: 'old',
        operatorPolicy: null,
        effectiveDefinition: {},
      }),
    });
    expect(r.object).toMatchObject({ kind: 'x-new-type', keyRulesKnown: false });
    expect(r.alsoMatched).toEqual([
      { name: 'new', priority: 5, reason: 'key-rules-unknown', unanchored: false },
    ]);
    expect(r.disagreements).toEqual([]);
    expect(whichText(r)).toMatch(/queue of type x-new-type/);
    expect(whichText(r)).toMatch(/does not know which keys a queue of type x-new-type refuses/);
    expect(whichText(r)).not.toMatch(/classic/);
  });
});

describe('which, when the broker cannot be asked', () => {
  it.each([
    ['unreachable', 'unreachable'],
    ['timeout', 'timeout'],
    ['unauthorized', 'unauthorized'],
    ['broker-error', 'broker-error'],
  ] as const)('%s: not-asked, nothing claimed', async (code, why) => {
    const fail = async () => {
      throw new RabbitError({ code, method: 'GET', path: '/api/overview', message: code });
    };
    const r = await which(input, broker({ overview: fail }));
    expect(r).toMatchObject({
      answer: 'not-asked',
      why,
      inForce: null,
      operatorPolicy: null,
      alsoMatched: [],
      unreadable: [],
    });
    expect(r.effective).toEqual({});
    expect(r.nothingGoverns).toBe(false);
  });

  it('an identity that may not read the queue: not reported, the matches listed', async () => {
    const r = await which(
      input,
      broker({
        getQueue: async () => {
          throw new RabbitError({
            code: 'forbidden',
            method: 'GET',
            path: '/api/queues',
            message: 'no',
            reason: 'User not authorised to access object',
          });
        },
      }),
    );
    expect(r).toMatchObject({ answer: 'not-reported', why: 'forbidden' });
    expect(r.inForce?.name).toBe('new');
  });
});

describe('which with governingOnly (what `path` asks)', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2026-12-05T12:00:00Z'));
  });
  afterEach(() => vi.useRealTimers());

  const keys = fc.constantFrom(
    'message-ttl',
    'max-length',
    'dead-letter-exchange',
    'alternate-exchange',
    'expires',
  );
  const value = (k: string) =>
    k === 'dead-letter-exchange' || k === 'alternate-exchange'
      ? fc.constantFrom('dlx', 'gone')
      : fc.integer({ min: 1, max: 100_000 });
  const definition = fc
    .uniqueArray(keys, { maxLength: 3 })
    .chain((ks) => fc.tuple(...ks.map((k) => value(k).map((v) => [k, v] as const))))
    .map((kv) => Object.fromEntries(kv));
  const arbPolicy = (name: string, operator: boolean) =>
    fc
      .record({
        pattern: fc.constantFrom('^orders\\.', 'orders', '.*', '^other', '\\.audit$'),
        applyTo: operator ? fc.constant('queues') : fc.constantFrom('queues', 'exchanges', 'all'),
        priority: fc.nat(3),
        definition,
      })
      .map((p): Policy => ({ vhost: '/', name, ...p }));
  const world = fc.record({
    user: fc.tuple(arbPolicy('a', false), arbPolicy('b', false), arbPolicy('c', false)),
    operator: fc.tuple(arbPolicy('op1', true), arbPolicy('op2', true)),
    kind: fc.constantFrom('classic', 'quorum', 'stream', 'exchange', 'missing'),
    reported: fc.constantFrom<string | null | undefined>('a', 'b', 'c', 'gone', null, undefined),
    operatorReported: fc.constantFrom<string | null | undefined>('op1', 'op2', null, undefined),
    effective: fc.option(definition, { nil: undefined }),
    args: fc.option(definition, { nil: undefined }),
    live: fc.boolean(),
    dlxExists: fc.boolean(),
    operatorReadable: fc.boolean(),
  });

  it('says what governs, the values used and the hazards exactly as the whole explanation does', async () => {
    await fc.assert(
      fc.asyncProperty(world, async (w) => {
        const b: WhichBroker = {
          ...broker({}),
          getQueue: async () =>
            w.kind === 'exchange' || w.kind === 'missing'
              ? null
              : {
                  type: w.kind,
                  arguments: w.args ?? {},
                  policy: w.reported,
                  operatorPolicy: w.operatorReported,
                  effectiveDefinition: w.effective,
                  live: w.live
                    ? { messages: 5, ready: 4, unacked: 1, bytes: 100, consumers: 0, idleSince: null }
                    : null,
                },
          getExchange: async (_v, n) =>
            n === 'orders.audit' && w.kind === 'exchange'
              ? { policy: w.reported ?? null, arguments: w.args ?? {} }
              : n === 'dlx' && w.dlxExists
                ? { policy: null, arguments: {} }
                : null,
          listPolicies: async () => [...w.user],
          listOperatorPolicies: async () => {
            if (w.operatorReadable) return [...w.operator];
            throw new RabbitError({
              code: 'forbidden',
              method: 'GET',
              path: '/api/operator-policies',
              message: 'no',
            });
          },
          streamNames: async function* (what) {
            yield { name: what === 'queues' ? 'orders.audits' : 'orders.audit.in' };
          },
        };
        const whole = await which(input, b);
        const governing = await which(input, b, { governingOnly: true });
        const read = (r: typeof whole) => ({
          answer: r.answer,
          why: r.why,
          object: r.object,
          brokerVersion: r.brokerVersion,
          inForce: r.inForce?.name ?? null,
          operatorPolicy: r.operatorPolicy,
          effective: r.effective,
          hazards: r.hazards,
          hazardsNotRead: r.hazardsNotRead,
          now: r.now,
          didYouMean: r.didYouMean,
        });
        expect(read(governing)).toEqual(read(whole));
        if (governing.answer === 'reported') {
          expect(governing.alsoMatched).toEqual([]);
          expect(governing.pathLine).toBeUndefined();
        }
      }),
      { numRuns: 400 },
    );
  });
});
