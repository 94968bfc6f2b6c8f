/**
 * The `which` answer in the terminal says what the Slack view says: when the broker did not
 * report, the matches by priority with the first one marked, and no claim of what applies;
 * unanchored patterns marked wherever a policy is listed; the object's own arguments shown.
 */
import { describe, expect, it } from 'vitest';
import { type WhichBroker, which } from '../../src/commands/which/which.ts';
import { UNANCHORED_MARK } from '../../src/commands/words.ts';
import { RabbitError } from '../../src/rabbit/errors.ts';
import { whichView } from '../../src/slack/views/which.ts';
import { whichText } from '../../src/terminal/which.ts';
import { policyIn } from '../support/policies.ts';

const pol = policyIn('/');

function broker(over: Partial<WhichBroker> = {}): WhichBroker {
  return {
    overview: async () => ({ version: { major: 3, minor: 10, patch: 8 } }),
    getQueue: async () => ({
      type: 'classic',
      arguments: { 'x-message-ttl': 1000 },
      policy: 'first',
      operatorPolicy: null,
      effectiveDefinition: { 'message-ttl': 60_000 },
    }),
    getExchange: async () => null,
    federation: async () => ({ upstreams: new Set<string>(), upstreamSets: new Set<string>(), links: null }),
    listPolicies: async () => [
      pol('first', '^orders\\.', 5, { 'message-ttl': 60_000 }, 'queues'),
      pol('inside', 'audit', 1, { 'max-length': 10 }, 'queues'),
    ],
    listOperatorPolicies: async () => [],
    ...over,
  };
}

const input = { name: 'orders.audit', vhost: '/' } as const;
const forbidden = async () => {
  throw new RabbitError({
    code: 'forbidden',
    method: 'GET',
    path: '/api/queues',
    message: 'no',
    reason: 'User not authorised to access object',
  });
};

describe('which in the terminal, when the broker did not report', () => {
  it('lists the matches by priority, the first marked, and claims nothing about what applies', async () => {
    const r = await which(input, broker({ getQueue: forbidden }));
    expect(r.answer).toBe('not-reported');
    const text = whichText(r);
    expect(text).toMatch(/Matches, by priority:\n\s+1\. first .* — first by priority/);
    expect(text).toMatch(/2\. inside \(priority 1\)/);
    for (const claim of [
      'Also matched, and does not apply',
      'Effective',
      'Nothing governs this object',
      'In force',
    ])
      expect(text).not.toContain(claim);
  });

  it('with no match says nothing would govern it, not that nothing does', async () => {
    const r = await which({ name: 'billing', vhost: '/' }, broker({ getQueue: forbidden }));
    const text = whichText(r);
    expect(text).toContain('Nothing would govern this object');
    expect(text).not.toContain('Nothing governs this object');
  });
});

describe('unanchored patterns among the also matched', () => {
  it('are marked in --json, in the terminal and in Slack', async () => {
    const r = await which(input, broker());
    expect(r.alsoMatched).toEqual([
      { name: 'inside', priority: 1, reason: 'lower-priority', unanchored: true },
    ]);
    expect(whichText(r)).toContain(`inside (priority 1) (${UNANCHORED_MARK})`);
    expect(JSON.stringify(whichView(r).blocks)).toMatch(/`inside` · priority 1 _\(unanchored/);
  });

  it('are not marked when anchored', async () => {
    const r = await which(
      input,
      broker({
        listPolicies: async () => [
          pol('first', '^orders\\.', 5, {}, 'queues'),
          pol('second', '^orders', 1, {}, 'queues'),
        ],
      }),
    );
    expect(r.alsoMatched[0]).toMatchObject({ name: 'second', unanchored: false });
    expect(whichText(r)).not.toContain(UNANCHORED_MARK);
  });
});

describe("the object's own arguments", () => {
  it('are shown, and the value each key really has says where it comes from', async () => {
    const r = await which(input, broker());
    expect(r.object.arguments).toEqual({ 'x-message-ttl': 1000 });
    // classic queue: the smaller of x-message-ttl and the policy's message-ttl holds
    expect(r.effective['message-ttl']).toEqual({ value: 1000, from: 'arguments' });
    expect(whichText(r)).toMatch(/Effective: message-ttl=1000 \(its own argument\)/);
    expect(whichText(r)).toMatch(/Its own arguments: x-message-ttl=1000/);
    expect(JSON.stringify(whichView(r).blocks)).toContain('Its own arguments');
  });
});

describe("the object's own arguments when the broker did not report its policy", () => {
  it('are shown in both front doors, without a claim of what applies', async () => {
    const r = await which(
      input,
      broker({ getQueue: async () => ({ type: 'quorum', arguments: { 'x-dead-letter-exchange': 'dlx' } }) }),
    );
    expect(r).toMatchObject({ answer: 'not-reported', why: 'stats-pending' });
    expect(whichText(r)).toMatch(/Its own arguments: x-dead-letter-exchange="dlx"/);
    expect(whichText(r)).not.toContain('Effective');
    expect(JSON.stringify(whichView(r).blocks)).toContain('Its own arguments');
  });
});

describe('an identity that may read the object but not the operator policies', () => {
  it('is answered with what the broker reports, and told what could not be read', async () => {
    const r = await which(
      input,
      broker({
        getQueue: async () => ({
          type: 'classic',
          policy: 'first',
          operatorPolicy: 'ceiling',
          effectiveDefinition: { 'message-ttl': 60_000, 'max-length': 5 },
        }),
        listOperatorPolicies: async () => {
          throw new RabbitError({
            code: 'forbidden',
            method: 'GET',
            path: '/api/operator-policies/%2F',
            message: 'no',
            reason: 'Not administrator user',
          });
        },
      }),
    );
    expect(r.answer).toBe('reported');
    expect(r.inForce?.name).toBe('first');
    expect(r.operatorPolicy?.name).toBe('ceiling');
    expect(r.operatorPoliciesNotRead).toBe('Not administrator user');
    expect(r.effective['max-length']).toEqual({ value: 5, from: 'operator-policy' });
    expect(r.effective['message-ttl']).toEqual({ value: 60_000, from: 'policy' });
    expect(r.disagreements).toEqual([]);
    expect(whichText(r)).toMatch(/Not read: The operator policies could not be read.*Not administrator user/);
    expect(JSON.stringify(whichView(r).blocks)).toContain('The operator policies could not be read');
  });
});

describe("which's live hazards, in the terminal and in Slack alike", () => {
  const full = broker({
    getQueue: async () => ({
      type: 'classic',
      arguments: {},
      policy: 'first',
      operatorPolicy: null,
      effectiveDefinition: { 'max-length': 5, 'dead-letter-exchange': 'gone', expires: 60_000 },
      live: { messages: 5, ready: 5, unacked: 0, bytes: 50, consumers: 0, idleSince: null },
    }),
    // `gone` is not there: every exchange GET answers none.
    getExchange: async () => null,
  });

  it('says the numbers, their age, and each hazard with the names as written', async () => {
    const r = await which(input, full);
    expect(r.now).toMatchObject({ messages: 5, consumers: 0, sampledAt: expect.any(String) });
    expect(r.hazards.map((h) => h.effect)).toEqual(['expires-idle', 'full', 'missing-target']);
    const text = whichText(r);
    expect(text).toMatch(
      /Now: 5 messages ready, 0 unacked, 0 consumers — as the broker's statistics said at \d\d:\d\d:\d\d UTC/,
    );
    expect(text).toMatch(/! no consumer: deleted with its 5 messages once unused for 1 min/);
    expect(text).toMatch(
      /! at its limit \(max-length 5, overflow drop-head\): each message published pushes out the oldest, lost — dead-letter exchange "gone" does not exist/,
    );
    const slack = JSON.stringify(whichView(r).blocks);
    expect(slack).toContain('*Now:* 5 messages ready');
    expect(slack).toContain(':warning: *Hazards:*');
    expect(slack).toContain('dead-letter exchange `gone` does not exist');
  });

  it('a queue without statistics: unknown, never zero', async () => {
    const r = await which(input, broker());
    expect(r.now).toBeNull();
    expect(whichText(r)).toMatch(/Now: unknown — the broker reports no statistics for it \(yet\)/);
    expect(JSON.stringify(whichView(r).blocks)).toContain('*Now:* unknown');
  });

  it('a read the hazards need that fails is said, and nothing is claimed missing', async () => {
    const r = await which(
      input,
      broker({
        getQueue: async () => ({
          type: 'classic',
          policy: 'first',
          operatorPolicy: null,
          effectiveDefinition: { 'dead-letter-exchange': 'dlx' },
        }),
        getExchange: async () => {
          throw new Error('timed out');
        },
      }),
    );
    expect(r.hazards).toEqual([]);
    expect(r.hazardsNotRead).toEqual(['the exchanges it names could not be read (timed out)']);
    expect(whichText(r)).toContain('Not read: the exchanges it names could not be read (timed out).');
  });
});
