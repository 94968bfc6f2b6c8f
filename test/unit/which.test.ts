/**
 * `which` with the broker's report injected: the states the real broker shows only for a few
 * seconds (statistics lagging a change) or only when it fails (unreachable, refused).
 * The steady states are proven against the real broker in test/integration/cli-which.test.ts.
 */
import { describe, expect, it } from 'vitest';
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
