/**
 * `which` with the broker's report injected: the states the real broker shows only for a few
 * seconds (statistics lagging a change) or only when it fails (unreachable, refused).
 * The steady states are proven against the real broker in test/integration/cli-which.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { type WhichBroker, which } from '../../commands/which.ts';
import type { Policy } from '../../src/policy/types.ts';
import { RabbitError } from '../../src/rabbit/index.ts';

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
    const r = await which(input, broker({ reported: 'gone' }));
    expect(r.inForce?.name).toBe('gone');
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

  it('a reported winner whose pattern the bot cannot read: the report stands', async () => {
    const r = await which(
      input,
      broker({
        reported: 'look',
        listPolicies: async () => [policy('look', 9, { 'max-length': 1 }, '^(?=orders)')],
      }),
    );
    expect(r.inForce?.name).toBe('look');
    expect(r.unreadable).toEqual([
      { name: 'look', pattern: '^(?=orders)', why: expect.stringMatching(/linear-time/) },
    ]);
    expect(r.disagreements.join(' ')).toMatch(/cannot read look's pattern.*report stands/);
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
