/**
 * `policies`: parsing, the order (priority, highest first; ties together and marked), and the two
 * front doors' rendering; 300 policies inside Slack's limits with the whole list as a file.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  byPriority,
  type PoliciesBroker,
  parsePolicies,
  policies,
} from '../../src/commands/policies/policies.ts';
import { OPERATOR_POLICIES_NOT_LISTED, UNANCHORED_MARK } from '../../src/commands/words.ts';
import { InputError } from '../../src/core/errors.ts';
import type { Policy } from '../../src/policy/types.ts';
import { RabbitError } from '../../src/rabbit/errors.ts';
import { policiesView } from '../../src/slack/views/policies.ts';
import { policiesText } from '../../src/terminal/policies.ts';
import { checkMessage } from '../support/fakeSlack.ts';
import { policyIn } from '../support/policies.ts';

const pol = policyIn('v');

function broker(user: Policy[], operator: Policy[] | Error = []): PoliciesBroker {
  return {
    overview: async () => ({ version: { major: 3, minor: 10, patch: 8 } }),
    listPolicies: async () => user,
    listOperatorPolicies: async () => {
      if (operator instanceof Error) throw operator;
      return operator;
    },
  };
}

const rendered = (m: { blocks: unknown[] }) => JSON.stringify(m.blocks);

describe('parsePolicies', () => {
  it('takes --vhost and --env', () => {
    expect(parsePolicies(['--vhost', 'a', '--env', 'prod'])).toEqual({ vhost: 'a', env: 'prod' });
    expect(parsePolicies([])).toEqual({ vhost: '/' });
  });
  it.each([[['orders']], [['--kind', 'x']], [['--vhost', '']]])(
    '%j is refused with what to type',
    (words) => {
      expect(() => parsePolicies(words)).toThrow(InputError);
    },
  );
});

describe('byPriority', () => {
  it('orders highest first, equal priorities together by name, each tie marked', () => {
    const list = byPriority([
      pol('b', '^b', 5, {}),
      pol('low', 'x', -1, {}),
      pol('a', '^a', 5, {}),
      pol('top', '^t', 10.5, {}),
    ]);
    expect(list.map((p) => [p.name, p.tie, p.unanchored])).toEqual([
      ['top', false, false],
      ['a', true, false],
      ['b', true, false],
      ['low', false, true],
    ]);
  });

  it('is a sorted permutation whatever the input, ties marked exactly where a priority repeats', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.record({ name: fc.string(), priority: fc.integer({ min: -3, max: 3 }) }), {
          selector: (p) => p.name,
          maxLength: 30,
        }),
        (raw) => {
          const out = byPriority(raw.map((p) => pol(p.name, '^x', p.priority, {})));
          expect(out.map((p) => p.name).sort()).toEqual(raw.map((p) => p.name).sort());
          for (let i = 1; i < out.length; i++)
            expect(out[i - 1]!.priority).toBeGreaterThanOrEqual(out[i]!.priority);
          for (const p of out) expect(p.tie).toBe(raw.filter((q) => q.priority === p.priority).length > 1);
        },
      ),
    );
  });
});

describe('byPriority: a tie only where the apply-tos meet (issue 28, item 12)', () => {
  it("the lab's audit-fallback (queues) and orders-ae (exchanges) at priority 1 are no tie", () => {
    const list = byPriority([
      pol('audit-fallback', '^orders\\.', 1, { 'message-ttl': 3600000 }, 'queues'),
      pol('orders-ae', '^orders\\.', 1, { 'alternate-exchange': 'orders.unrouted' }, 'exchanges'),
    ]);
    expect(list.map((p) => [p.name, p.tie])).toEqual([
      ['audit-fallback', false],
      ['orders-ae', false],
    ]);
  });
  it('classic_queues and quorum_queues never meet; all meets both', () => {
    const two = [pol('c', '^x', 3, {}, 'classic_queues'), pol('q', '^x', 3, {}, 'quorum_queues')];
    expect(byPriority(two).map((p) => p.tie)).toEqual([false, false]);
    const three = byPriority([...two, pol('a', '^x', 3, {}, 'all')]);
    expect(three.map((p) => [p.name, p.tie])).toEqual([
      ['a', true],
      ['c', true],
      ['q', true],
    ]);
  });
});

describe('policies, in both front doors', () => {
  const lab = [
    pol('audit-retention', '^orders\\.audit$', 10, { 'dead-letter-exchange': 'audit.dlx' }, 'queues'),
    pol('orders-cap', 'orders', 0, { 'max-length': 100000 }, 'queues'),
    pol('billing-a', '^billing\\.', 5, { 'max-length': 1 }, 'queues'),
    pol('billing-b', '^billing\\.', 5, { 'max-length': 2 }, 'queues'),
  ];
  const ceiling = pol('orders-ceiling', '^orders\\.', 0, { 'message-ttl': 600000 }, 'queues');

  it('lists by priority, marks the unanchored pattern and the tie, and the operator policies apart', async () => {
    const r = await policies({ vhost: 'v' }, broker(lab, [ceiling]));
    expect(r.policies.map((p) => p.name)).toEqual([
      'audit-retention',
      'billing-a',
      'billing-b',
      'orders-cap',
    ]);
    expect(r.operatorPolicies.map((p) => p.name)).toEqual(['orders-ceiling']);
    const text = policiesText(r);
    expect(text).toMatch(
      new RegExp(`orders-cap — pattern "orders", apply-to queues \\(${UNANCHORED_MARK}\\)`),
    );
    expect(text).toMatch(/billing-a .*\(tie: shares its priority\)/);
    expect(text).toMatch(/Operator policies .*\n\s+0\s+orders-ceiling/);
    const m = policiesView(r);
    expect(checkMessage({ ...m })).toBeNull();
    expect(m.file).toBeUndefined();
    expect(rendered(m)).toContain('*Operator policies* (1)');
    expect(rendered(m)).toMatch(/`orders-cap` · pattern `orders` _\(unanchored/);
    expect(rendered(m)).toMatch(/`billing-a` · :warning: _tie_/);
  });

  it('shows no operator part when the vhost has no operator policy', async () => {
    const r = await policies({ vhost: 'v' }, broker(lab));
    expect(policiesText(r)).not.toContain('Operator policies');
    expect(rendered(policiesView(r))).not.toContain('Operator policies');
  });

  it('lists what it can read when the operator policies cannot be, and says so', async () => {
    const refused = new RabbitError({
      code: 'forbidden',
      method: 'GET',
      path: '/api/operator-policies/v',
      message: 'no',
      reason: 'Not administrator user',
    });
    const r = await policies({ vhost: 'v' }, broker(lab, refused));
    expect(r.answer).toBe('listed');
    expect(r.policies).toHaveLength(4);
    expect(r.operatorPoliciesNotRead).toBe('Not administrator user');
    expect(policiesText(r)).toContain(OPERATOR_POLICIES_NOT_LISTED);
    expect(rendered(policiesView(r))).toContain('could not be read');
  });

  it('300 policies: the first page in the message within every Slack limit, the whole list in a file', async () => {
    const many = Array.from({ length: 300 }, (_, i) =>
      pol(
        `policy-${String(i).padStart(3, '0')}-<&>*_\`${'x'.repeat(60)}`,
        i % 3 ? `^q\\.${i}\\.` : `q${i}`,
        i % 50,
        { 'max-length': i, 'message-ttl': i * 1000, 'dead-letter-exchange': `dlx-${'y'.repeat(80)}` },
      ),
    );
    const r = await policies({ vhost: 'v' }, broker(many, [ceiling]));
    const m = policiesView(r);
    expect(checkMessage({ ...m })).toBeNull();
    const shown = rendered(m);
    expect(shown).toContain('policy-049');
    expect(shown).toMatch(/(\d+) of 301 shown: the whole list is in the attached file/);
    const rows = m.file?.content.trim().split('\n') ?? [];
    expect(rows[0]).toBe('layer,priority,name,pattern,apply_to,unanchored,tie,definition');
    expect(rows).toHaveLength(1 + 301);
    expect(rows[1]).toMatch(/^policy,49,policy-049/);
    expect(rows.at(-1)).toMatch(/^operator-policy,0,orders-ceiling/);
    expect(m.file?.filename).toBe('policies-v.csv');
  });
});
