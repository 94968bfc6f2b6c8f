import { describe, expect, it } from 'vitest';
import { EchoFilter, parseEvent } from '../../src/watch/events.ts';

// Headers as 3.10.8 and 4.0.5 publish them (recorded from both brokers).
const userSet = {
  'apply-to': 'queues',
  priority: 3,
  definition: { 'max-length': 5 },
  pattern: '^x',
  user_who_performed_action: 'alice',
  vhost: 'v',
  name: 'p1',
  timestamp_in_ms: 1796061626141,
};
const operatorParameterSet = {
  user_who_performed_action: 'guest',
  value: { 'apply-to': 'queues', priority: 3, definition: { 'max-length': 5 }, pattern: '^x' },
  name: 'o1',
  component: 'operator_policy',
  vhost: 'v',
  timestamp_in_ms: 1796061626150,
};
const operatorEcho = {
  ...userSet,
  name: 'o1',
  user_who_performed_action: 'guest',
  timestamp_in_ms: 1796061626151,
};

describe('parseEvent', () => {
  it.each([
    ['policy.set', userSet, { layer: 'user', name: 'p1', actor: 'alice', set: true }],
    [
      'policy.cleared',
      { vhost: 'v', name: 'p1', user_who_performed_action: 'bob', timestamp_in_ms: 1 },
      { layer: 'user', name: 'p1', actor: 'bob', set: false },
    ],
    ['parameter.set', operatorParameterSet, { layer: 'operator', name: 'o1', actor: 'guest', set: true }],
    [
      'operator.policy.cleared',
      { vhost: 'v', name: 'o1', user_who_performed_action: 'guest', timestamp_in_ms: 2 },
      { layer: 'operator', name: 'o1', actor: 'guest', set: false },
    ],
    [
      'operator_policy.cleared',
      { vhost: 'v', name: 'o1', timestamp_in_ms: 2 },
      { layer: 'operator', name: 'o1', actor: 'unknown', set: false },
    ],
  ])('%s', (rk, headers, want) => {
    const p = parseEvent(rk, headers, 0);
    expect(p.kind).toBe('policy');
    if (p.kind !== 'policy') return;
    expect({
      layer: p.event.layer,
      name: p.event.name,
      actor: p.event.actor,
      set: p.event.after !== null,
    }).toEqual(want);
  });

  it('reads the policy of a set, apply-to and priority included', () => {
    const p = parseEvent('policy.set', userSet, 0);
    expect(p.kind === 'policy' && p.event.after).toEqual({
      vhost: 'v',
      name: 'p1',
      pattern: '^x',
      applyTo: 'queues',
      priority: 3,
      definition: { 'max-length': 5 },
    });
    expect(p.kind === 'policy' && p.event.atMs).toBe(1796061626141);
  });

  it('reads Buffers and bigints as the AMQP codec may hand them', () => {
    const p = parseEvent(
      'policy.set',
      { ...userSet, name: Buffer.from('p2'), timestamp_in_ms: 5n, priority: 7n },
      0,
    );
    expect(p.kind === 'policy' && [p.event.name, p.event.atMs, p.event.after?.priority]).toEqual([
      'p2',
      5,
      7,
    ]);
  });

  it.each([
    ['parameter.set', { ...operatorParameterSet, component: 'federation-upstream' }],
    ['policy.set', { name: 'x' }],
    ['policy.set', { ...userSet, definition: 'not a table' }],
    ['queue.created', { vhost: 'v', name: 'q' }],
  ])('%s %j is ignored, with the reason', (rk, headers) => {
    const p = parseEvent(rk, headers, 0);
    expect(p.kind).toBe('ignored');
  });
});

describe('EchoFilter', () => {
  const event = (rk: string, h: Record<string, unknown>) => {
    const p = parseEvent(rk, h, 0);
    if (p.kind !== 'policy') throw new Error('not a policy event');
    return p.event;
  };

  it("drops the user-looking policy.set that follows an operator policy's parameter.set, a millisecond apart", () => {
    const f = new EchoFilter();
    expect(f.isEcho('parameter.set', event('parameter.set', operatorParameterSet))).toBe(false);
    expect(f.isEcho('policy.set', event('policy.set', operatorEcho))).toBe(true);
    // once only: a real user policy of the same name and content later is not an echo
    expect(f.isEcho('policy.set', event('policy.set', operatorEcho))).toBe(false);
  });

  it('keeps a user policy set with other content or far in time', () => {
    const f = new EchoFilter();
    f.isEcho('parameter.set', event('parameter.set', operatorParameterSet));
    expect(f.isEcho('policy.set', event('policy.set', { ...operatorEcho, priority: 4 }))).toBe(false);
    expect(
      f.isEcho('policy.set', event('policy.set', { ...operatorEcho, timestamp_in_ms: 1796061636151 })),
    ).toBe(false);
    expect(f.isEcho('policy.set', event('policy.set', userSet))).toBe(false);
  });
});
