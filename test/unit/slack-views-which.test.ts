import { describe, expect, it } from 'vitest';
import { LAB_VHOST, setUpLab } from '../../scripts/lab.ts';
import { type WhichBroker, type WhichResult, which } from '../../src/commands/which/which.ts';
import type { Policy } from '../../src/policy/types.ts';
import type { LabClient } from '../../src/rabbit/lab.ts';
import { SLACK_LIMITS } from '../../src/slack/limits.ts';
import { totalText } from '../../src/slack/views/message.ts';
import { whichView } from '../../src/slack/views/which.ts';
import { checkMessage } from '../support/fakeSlack.ts';

/**
 * The `which` view over the lab's cases. The results come from the real `which` command run
 * against an in-memory broker that holds the lab (built by scripts/lab.ts itself) and reports,
 * per queue, what RabbitMQ 3.10.8 reported for it (checked against the real broker).
 */

const VERSION = { major: 3, minor: 10, patch: 8 };

/** What the broker reported for each lab object: [policy, operator policy]. */
const REPORTED: Record<string, { type: string; policy: string | null; operatorPolicy: string | null }> = {
  'orders.audit': { type: 'classic', policy: 'audit-retention', operatorPolicy: 'orders-ceiling' },
  'orders.processing': { type: 'quorum', policy: 'audit-fallback', operatorPolicy: 'orders-ceiling' },
  'orders.events': { type: 'stream', policy: null, operatorPolicy: null },
  'retry.orders.dlq': { type: 'classic', policy: 'orders-cap', operatorPolicy: null },
  'billing.invoices': { type: 'classic', policy: 'billing-b', operatorPolicy: null },
};

async function labBroker(): Promise<WhichBroker> {
  const user: Policy[] = [];
  const operator: Policy[] = [];
  const exchanges = new Map<string, string | null>();
  const recorder = {
    overview: async () => ({ version: VERSION }),
    deleteVhost: async () => {},
    putVhost: async () => {},
    putPolicy: async (layer: 'user' | 'operator', p: Policy) => {
      (layer === 'user' ? user : operator).push(p);
      return 'created' as const;
    },
    putQueue: async () => {},
    // The lab's messages (payments.inbox) are not what this view says.
    publish: async () => {},
    putExchange: async (_vhost: string, name: string) => {
      exchanges.set(name, name === 'orders.topic' ? 'orders-ae' : null);
    },
  };
  await setUpLab(recorder as unknown as LabClient, LAB_VHOST);
  return {
    overview: async () => ({ version: VERSION }),
    getQueue: async (_vhost, name) => REPORTED[name] ?? null,
    getExchange: async (_vhost, name) => (exchanges.has(name) ? { policy: exchanges.get(name) } : null),
    federation: async () => ({ upstreams: new Set<string>(), upstreamSets: new Set<string>(), links: null }),
    listPolicies: async () => user,
    listOperatorPolicies: async () => operator,
  };
}

const unreachable: WhichBroker = {
  overview: async () => {
    throw Object.assign(new Error('connect ECONNREFUSED'), { code: 'unreachable' });
  },
  getQueue: async () => null,
  getExchange: async () => null,
  federation: async () => ({ upstreams: new Set<string>(), upstreamSets: new Set<string>(), links: null }),
  listPolicies: async () => [],
  listOperatorPolicies: async () => [],
};

async function ask(name: string, broker?: WhichBroker): Promise<WhichResult> {
  return which({ name, vhost: LAB_VHOST }, broker ?? (await labBroker()));
}

function shown(r: WhichResult): string {
  const m = whichView(r);
  return [m.text, ...m.blocks.map((b) => JSON.stringify(b))].join('\n');
}

describe('the which view over the lab', () => {
  const cases: {
    case: string;
    name: string;
    broker?: WhichBroker;
    shows: RegExp[];
    hides?: RegExp[];
  }[] = [
    {
      case: 'in force, the others lower priority',
      name: 'orders.audit',
      shows: [
        /\*In force:\* `audit-retention` · priority 10/,
        /Also matched, and does not apply/,
        /`audit-fallback` · priority 1 — lower priority/,
      ],
      hides: [/did not report/],
    },
    {
      case: 'operator ceiling: the stricter value holds',
      name: 'orders.processing',
      shows: [
        /\*Operator policy:\* `orders-ceiling`/,
        /for limits both set, the stricter value holds/,
        /`message-ttl` = `600000` _\(both: the stricter value\)_/,
      ],
    },
    {
      case: 'stream governed by nothing',
      name: 'orders.events',
      shows: [
        /\*Nothing governs this object:\*/,
        /`audit-fallback` · priority 1 — sets a key a stream refuses/,
        /`message-ttl`/,
      ],
      hides: [/\*In force:\*/, /\*Operator policy/],
    },
    {
      case: 'unanchored pattern',
      name: 'retry.orders.dlq',
      shows: [/`orders-cap`/, /pattern `orders` _\(unanchored: it matches every name that contains it\)_/],
    },
    {
      case: 'tie at the same priority',
      name: 'billing.invoices',
      shows: [
        /:warning: \*Ambiguous:\* `billing-a`, `billing-b` share priority 5/,
        /the same priority as the one in force/,
      ],
    },
    {
      case: 'an exchange: the operator layer is the bot’s reading',
      name: 'orders.topic',
      shows: [/the exchange `orders.topic`/, /\*In force:\* `orders-ae`/],
    },
    {
      case: 'not reported: the matches, and no claim',
      name: 'orders.new',
      shows: [
        /The broker did not report which policy is in force on this object\* \(it does not exist\)/,
        /not a statement about which one applies/,
        /Matches, by priority:/,
        /1\. `audit-fallback`.*first by priority/,
      ],
      hides: [/\*In force:\*/, /What the object gets/],
    },
    {
      case: 'not reported, tied first match: ambiguous',
      name: 'billing.new',
      shows: [/Matches, by priority/, /:warning: \*Ambiguous:\* `billing-a`, `billing-b`/, /\(ambiguous\)/],
    },
    {
      case: 'not asked: nothing claimed',
      name: 'orders.audit',
      broker: unreachable,
      shows: [
        /Could not ask the broker/,
        /the broker could not be reached/,
        /Nothing is claimed about this object/,
      ],
      hides: [/In force/, /Matches/, /Nothing governs/],
    },
  ];

  it.each(cases)('$case ($name)', async (c) => {
    const r = await ask(c.name, c.broker);
    const text = shown(r);
    for (const re of c.shows) expect(text).toMatch(re);
    for (const re of c.hides ?? []) expect(text).not.toMatch(re);
    expect(checkMessage({ ...whichView(r) })).toBeNull();
  });

  it.each(cases)('renders the same blocks as before: $case', async (c) => {
    expect(whichView(await ask(c.name, c.broker))).toMatchSnapshot();
  });
});

describe('the which view within Slack limits', () => {
  const base = async () => ask('orders.audit');

  it('summarises 500 matching policies with "and N more"', async () => {
    const r = await base();
    r.alsoMatched = Array.from({ length: 500 }, (_, i) => ({
      name: `policy-${String(i).padStart(3, '0')}-${'x'.repeat(120)}`,
      priority: 0,
      reason: 'lower-priority' as const,
      unanchored: i % 2 === 0,
    }));
    const m = whichView(r);
    expect(checkMessage({ ...m })).toBeNull();
    expect(renderedOf(m)).toMatch(/…and \d+ more/);
    expect(renderedOf(m)).toContain('policy-000');
    expect(renderedOf(m)).not.toContain('policy-499');
  });

  it('keeps an answer made of the worst strings inside every limit', async () => {
    const r = await base();
    const evil = '<&>'.repeat(85); // 255 bytes, each character escaped to 4–5
    r.object.name = evil;
    r.object.vhost = evil;
    r.inForce = {
      ...r.inForce!,
      name: evil,
      pattern: evil.repeat(4),
      definition: Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`${evil}${i}`, evil])),
    };
    r.operatorPolicy = { ...r.operatorPolicy!, name: evil, pattern: evil, definition: { [evil]: evil } };
    r.alsoMatched = Array.from({ length: 200 }, () => ({
      name: evil,
      priority: 1,
      reason: 'refused-key' as const,
      keys: [evil, evil],
      unanchored: true,
    }));
    r.unreadable = Array.from({ length: 50 }, () => ({ name: evil, pattern: evil, why: evil }));
    r.disagreements = Array.from({ length: 20 }, () => evil.repeat(10));
    r.effective = Object.fromEntries(
      Array.from({ length: 40 }, (_, i) => [`${evil}${i}`, { value: evil, from: 'both' as const }]),
    );
    const m = whichView(r);
    expect(checkMessage({ ...m })).toBeNull();
    expect(m.blocks.length).toBeLessThanOrEqual(SLACK_LIMITS.blocksPerMessage);
    expect(totalText(m.blocks)).toBeLessThanOrEqual(SLACK_LIMITS.blocksTotalText);
    expect(renderedOf(m)).not.toMatch(/<|>/);
  });
});

describe('a key the object takes and does nothing with', () => {
  it('says beside its value that it has no effect on that type on that broker', async () => {
    const r = await ask('orders.audit');
    r.brokerVersion = '4.3.6';
    r.effective = {
      'consumer-timeout': { value: 1000, from: 'policy', noEffect: true },
      'message-ttl': { value: 1000, from: 'policy' },
    };
    const text = shown(r);
    expect(text).toMatch(
      /`consumer-timeout` = `1000` _\(policy; no effect on a classic queue on RabbitMQ 4\.3\.6\)_/,
    );
    expect(text).toMatch(/`message-ttl` = `1000` _\(policy\)_/);
  });
});

function renderedOf(m: { text: string; blocks: unknown[] }): string {
  return `${m.text}\n${JSON.stringify(m.blocks)}`;
}
