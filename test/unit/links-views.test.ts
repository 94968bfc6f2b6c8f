import { describe, expect, it } from 'vitest';
import { type LinksResult, linksExitCode, parseLinks } from '../../src/commands/links/index.ts';
import { InputError } from '../../src/core/index.ts';
import { linksDocument } from '../../src/links/index.ts';
import { linksView } from '../../src/slack/views/links.ts';
import { linksText } from '../../src/terminal/links.ts';

const NOW = Date.UTC(2026, 11, 5, 1, 0, 0);
const SECRET = 'p4ssw0rd-in-view';

/** A vhost with one of each state, built by the links rules from what a broker would report. */
function result(over: Partial<LinksResult> = {}): LinksResult {
  const doc = linksDocument({
    objects: [
      { vhost: 'v', name: 'orders', kind: 'exchange', policy: 'fed' },
      { vhost: 'v', name: 'ghost', kind: 'exchange', policy: 'ghost' },
      { vhost: 'v', name: 'work', kind: 'queue', policy: 'fedq' },
    ],
    policies: [
      {
        vhost: 'v',
        name: 'fed',
        pattern: '^orders$',
        applyTo: 'exchanges',
        priority: 0,
        definition: { 'federation-upstream-set': 'all' },
      },
      {
        vhost: 'v',
        name: 'ghost',
        pattern: '^ghost$',
        applyTo: 'exchanges',
        priority: 0,
        definition: { 'federation-upstream': 'nope' },
      },
      {
        vhost: 'v',
        name: 'fedq',
        pattern: '^work$',
        applyTo: 'queues',
        priority: 0,
        definition: { 'federation-upstream': 'dc1' },
      },
    ],
    upstreams: [
      { vhost: 'v', name: 'dc1', value: { uri: `amqp://u:${SECRET}@dc1.example/v` } },
      {
        vhost: 'v',
        name: 'dc2',
        value: { uri: [`amqps://u:${SECRET}@a/v`, `amqps://u:${SECRET}@b/v`], 'ack-mode': 'no-ack' },
      },
    ],
    upstreamSets: [],
    shovels: [
      { vhost: 'v', name: 'drain', value: { 'src-uri': `amqp://u:${SECRET}@old/v`, 'dest-uri': 'amqp://' } },
    ],
    reported: {
      federation: [
        {
          vhost: 'v',
          kind: 'exchange',
          object: 'orders',
          upstream: 'dc1',
          node: 'rabbit@n1',
          status: 'running',
          error: null,
          timestamp: null,
        },
        {
          vhost: 'v',
          kind: 'exchange',
          object: 'orders',
          upstream: 'dc2',
          node: 'rabbit@n2',
          status: 'error',
          error: 'econnrefused',
          timestamp: null,
        },
        {
          vhost: 'v',
          kind: 'exchange',
          object: 'stale',
          upstream: 'dc1',
          node: 'rabbit@n1',
          status: 'running',
          error: null,
          timestamp: null,
        },
      ],
      shovels: [
        {
          vhost: 'v',
          name: 'drain',
          node: 'rabbit@n3',
          type: 'dynamic',
          state: 'starting',
          reason: null,
          timestamp: '2026-12-05 0:50:00',
        },
      ],
    },
    plugins: { federation: true, shovel: true },
    version: { major: 4, minor: 0, patch: 5 },
    now: NOW,
  });
  return {
    env: 'prod',
    vhosts: ['v'],
    answer: 'answered',
    brokerVersion: '4.0.5',
    notRead: [],
    ...doc,
    ...over,
  };
}

describe('links views', () => {
  it('the terminal: counts first, what needs a person with why and the next step, no password', () => {
    const text = linksText(result());
    expect(text).toMatch(
      /^Links of vhost "v" of environment "prod" \(broker 4\.0\.5\): 5 expected: 1 running, 2 missing, 1 stopped, 1 stuck; 1 unexpected\./,
    );
    expect(text).toContain('MISSING    exchange "ghost" <- upstream "nope"  (policy "ghost")');
    expect(text).toContain('STOPPED    exchange "orders" <- upstream "dc2"  on "rabbit@n2"  (policy "fed")');
    expect(text).toContain('STUCK      shovel "drain"  on "rabbit@n3"');
    expect(text).toContain('UNEXPECTED exchange "stale" <- upstream "dc1"');
    expect(text).toContain('Next: Check the upstream, then policy "fedq"');
    expect(text).toContain(`uri amqp://u:***@dc1.example/v`);
    expect(text).toMatch(/GHSA-6gmw-wxch-cvvc \(fixed in/);
    expect(text).not.toContain(SECRET);
    expect(text).not.toMatch(/RUNNING/);
  });

  it("says the broker's words as the broker's, and the bot's own (why missing, why not read) as its own", () => {
    const reported = result();
    const unread = result({
      links: [
        {
          ...(reported.links.find((l) => l.object === 'work') ?? reported.links[0]!),
          state: 'unknown',
          reason: 'the federation links could not be read',
          status: null,
        },
      ],
    });
    for (const text of [linksText(reported), JSON.stringify(linksView(reported))])
      expect(text).toMatch(/the broker: `?econnrefused/);
    for (const text of [linksText(unread), JSON.stringify(linksView(unread))]) {
      expect(text).toContain('the federation links could not be read');
      expect(text).not.toContain('the broker: ');
    }
    expect(linksText(reported)).toContain('           the upstream "nope" does not exist');
  });

  it('Slack: a button re-creates the policy of a link stopped or missing for no reason named, none for an upstream that does not exist', () => {
    const view = linksView(result());
    const buttons = (view.blocks as { type: string; elements?: { action_id: string; value: string }[] }[])
      .filter((b) => b.type === 'actions')
      .flatMap((b) => b.elements ?? []);
    // `orders` <- dc2 stopped (policy fed); `work` <- dc1 missing, no reason (policy fedq); `ghost`'s upstream does not exist.
    expect(buttons.map((b) => JSON.parse(b.value)).sort((a, b) => (a.policy < b.policy ? -1 : 1))).toEqual([
      { env: 'prod', vhost: 'v', policy: 'fed' },
      { env: 'prod', vhost: 'v', policy: 'fedq' },
    ]);
    expect(linksText(result())).toContain('recreate "fedq" --vhost "v"');
  });

  it('Slack: the same, escaped and within its limits, no password', () => {
    const view = linksView(result());
    const all = JSON.stringify(view);
    expect(all).not.toContain(SECRET);
    expect(view.text).toBe(
      'Links of vhost v: 5 expected: 1 running, 2 missing, 1 stopped, 1 stuck; 1 unexpected.',
    );
    expect(all).toContain(':red_circle: *missing* · exchange `ghost` ← upstream `nope`');
    expect(all).toContain(':shield: Broker 4.0.5 is affected by GHSA-6gmw-wxch-cvvc');
    expect(view.blocks.length).toBeLessThanOrEqual(50);
  });

  it('Slack: more links than a message holds go in a CSV file', () => {
    const many = result();
    const rows = Array.from(
      { length: 400 },
      (_, i) => ({ ...many.links[0], object: `x${i}` }) as (typeof many.links)[number],
    );
    const view = linksView({ ...many, links: rows });
    expect(view.file?.filename).toBe('links-v.csv');
    expect(view.file?.content.split('\n')).toHaveLength(402);
  });

  it('not asked: said, nothing claimed', () => {
    const r = result({ answer: 'not-asked', why: 'unreachable', links: [], risks: [], advisories: [] });
    expect(linksText(r)).toMatch(/^Could not read the links of vhost "v" of environment "prod"/);
    expect(linksView(r).text).toMatch(/^Could not read the links/);
  });
});

describe('links parsing and exit codes', () => {
  it('parses the flags and refuses what it does not know', () => {
    expect(parseLinks(['--vhost', 'v', '--fail-on', 'stopped'])).toMatchObject({
      vhost: 'v',
      failOn: 'stopped',
    });
    expect(parseLinks([], { vhost: 'w' })).toMatchObject({ vhost: 'w' });
    expect(parseLinks(['--against', 'f.json'])).toMatchObject({ against: 'f.json', vhost: '/' });
    expect(() => parseLinks(['--fail-on', 'error'])).toThrow(InputError);
    expect(() => parseLinks(['orders'])).toThrow(/links takes no name/);
  });

  const counts = (c: Partial<LinksResult['counts']>) => ({
    ...result().counts,
    missing: 0,
    stopped: 0,
    stuck: 0,
    unknown: 0,
    ...c,
  });
  it.each([
    [{}, [], undefined, 0],
    [{ missing: 1 }, [], undefined, 1],
    [{ stuck: 1 }, [], undefined, 1],
    [{ unknown: 1 }, [], undefined, 3],
    [{ missing: 1 }, [], 'missing', 4],
    [{ stopped: 1 }, [], 'missing', 0],
    [{ stopped: 1 }, [], 'stopped', 4],
    [{ missing: 1 }, [], 'risk', 4],
    [{}, ['a risk'], 'risk', 4],
    [{}, ['a risk'], 'stopped', 0],
  ] as const)('counts %o, risks %o, --fail-on %s: exit %i', (c, risks, failOn, code) => {
    const r = { ...result(), counts: counts(c), risks: risks.map(() => result().risks[0]) } as LinksResult;
    expect(linksExitCode(r, failOn)).toBe(code);
  });
});
