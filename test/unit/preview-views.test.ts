import { describe, expect, it } from 'vitest';
import { FOLDED_QUOTES_NOTE } from '../../src/commands/definition.ts';
import { parsePreview, previewExitCode, previewJson } from '../../src/commands/preview/preview.ts';
import { DELETE_WARNING, deleteWarning } from '../../src/commands/words.ts';
import { policyDiff } from '../../src/policy/diff.ts';
import { type InventoryObject, type PolicyChange, simulate } from '../../src/policy/simulate/simulate.ts';
import type { Policy } from '../../src/policy/types.ts';
import { withImpact } from '../../src/preview/impact.ts';
import type { PreviewAnswer, PreviewResult } from '../../src/preview/preview.ts';
import { SUMMARY_NAMES, summarize } from '../../src/preview/summary.ts';
import type { LiveReading } from '../../src/rabbit/inventory.ts';
import { SLACK_LIMITS } from '../../src/slack/limits.ts';
import { csvField, previewView } from '../../src/slack/views/preview.ts';
import { previewText } from '../../src/terminal/preview.ts';
import { policyIn, V310 } from '../support/policies.ts';

const pol = policyIn('/');

function answer(
  user: Policy[],
  change: PolicyChange,
  objects: InventoryObject[],
  operator: Policy[] = [],
  reading: LiveReading | null = null,
): PreviewAnswer {
  const r = simulate({ version: V310, user, operator, change }, objects);
  const live = withImpact(r.objects, reading, new Set(['audit.dlx']), V310, SUMMARY_NAMES);
  const fields = (p: Policy | null) =>
    p && { pattern: p.pattern, applyTo: p.applyTo, priority: p.priority, definition: p.definition };
  return {
    status: 'answered',
    change: {
      action: change.action,
      policy: (change.after ?? change.before)?.name ?? '',
      vhost: '/',
      operator: change.layer === 'operator',
      before: fields(change.before),
      after: fields(change.after),
    },
    brokerVersion: '3.10.8',
    warnings: [],
    objects: live.objects,
    unpredictable: r.unpredictable,
    summary: { ...summarize(r, change, V310), impact: live.summary },
    diff: policyDiff(change),
    ms: 1,
  };
}

const retention = pol(
  'audit-retention',
  '^orders\\.audit$',
  10,
  { 'dead-letter-exchange': 'audit.dlx' },
  'queues',
);
const fallback = pol('audit-fallback', '^orders\\.', 1, { 'message-ttl': 3_600_000 }, 'queues');
const ceiling = pol('orders-ceiling', '^orders\\.', 0, { 'message-ttl': 600_000 }, 'queues');

/** The lab's live state: orders.audit holds 12 messages and has no consumer. */
const labReading: LiveReading = {
  sampledAt: '2026-12-01T09:00:00.000Z',
  queues: new Map([
    [
      'orders.audit',
      {
        messages: 12,
        ready: 12,
        unacked: 0,
        bytes: 120,
        consumers: 0,
        idleSince: '2026-12-01T08:00:00.000Z',
      },
    ],
  ]),
  federation: { upstreams: new Set(), upstreamSets: new Set(), links: null },
};

const lab = answer(
  [retention, fallback],
  { action: 'delete', layer: 'user', before: retention, after: null },
  [
    { name: 'orders.audit', kind: 'classic', arguments: {}, policy: 'audit-retention' },
    { name: 'orders.processing', kind: 'quorum', arguments: {}, policy: 'audit-fallback' },
  ],
  [],
  labReading,
);

const hostile = '<!channel> *bold* `tick` <https://evil|click> &amp;';
const big = answer(
  [pol('wide', '.', 5, { 'dead-letter-exchange': 'd' }), pol('low', '^q', 1, { 'max-length': 1 })],
  {
    action: 'delete',
    layer: 'user',
    before: pol('wide', '.', 5, { 'dead-letter-exchange': 'd' }),
    after: null,
  },
  [
    ...Array.from(
      { length: 400 },
      (_, i): InventoryObject => ({
        name: `q.${i}.${'x'.repeat(200)}`,
        kind: 'classic',
        arguments: {},
        policy: 'wide',
      }),
    ),
    { name: `q${hostile}`, kind: 'classic', arguments: {}, policy: 'wide' },
    { name: '=HYPERLINK("x")', kind: 'classic', arguments: {}, policy: 'wide' },
  ],
);

const cases: [string, PreviewResult][] = [
  ['a delete that loses a dead-letter target', lab],
  ['a large delete', big],
  [
    'a create with a new tie and an unanchored catch',
    answer(
      [fallback],
      {
        action: 'create',
        layer: 'user',
        before: null,
        after: pol('orders', 'orders', 1, { 'max-length': 5 }, 'queues'),
      },
      [
        { name: 'orders.x', kind: 'quorum', arguments: {}, policy: 'audit-fallback' },
        { name: 'retry.orders', kind: 'classic', arguments: { 'x-max-length': 3 }, policy: null },
      ],
    ),
  ],
  [
    'a user delete the operator policy softens',
    answer(
      [fallback],
      { action: 'delete', layer: 'user', before: fallback, after: null },
      [{ name: 'orders.x', kind: 'classic', arguments: {}, policy: 'audit-fallback' }],
      [ceiling],
    ),
  ],
  [
    'refused',
    {
      status: 'refused',
      change: { action: 'create', policy: hostile, vhost: '/', operator: false, before: null, after: null },
      warnings: [],
      refusals: [
        {
          code: 'unknown-key',
          key: 'max-lenght',
          field: 'definition',
          message: `max-lenght is not a policy key ${hostile}`,
        },
      ],
    },
  ],
  [
    'not asked',
    {
      status: 'not-asked',
      change: lab.change,
      warnings: [],
      why: 'unreachable',
      detail: 'connect ECONNREFUSED',
    },
  ],
];

describe('preview in Slack', () => {
  it.each(cases)('%s stays within Slack limits and escapes every string', (_name, r) => {
    const m = previewView(r);
    expect(m.blocks.length).toBeLessThanOrEqual(SLACK_LIMITS.blocksPerMessage);
    const texts = JSON.stringify(m.blocks);
    for (const b of m.blocks) {
      const t = (b as { text?: { text: string } }).text?.text;
      if (t) expect(t.length).toBeLessThanOrEqual(SLACK_LIMITS.sectionText);
    }
    expect(texts.length).toBeLessThan(40_000);
    expect(texts).not.toContain('<!channel>');
    expect(texts).not.toContain('<https://evil');
    expect(m.text.length).toBeLessThanOrEqual(1000);
  });

  it('puts what hurts first', () => {
    const m = previewView(lab);
    const texts = m.blocks.map((b) => (b as { text?: { text: string } }).text?.text ?? '');
    expect(texts[0]).toBe(`:warning: *${DELETE_WARNING}*`);
    // The loss in the messages there now, then the keys lost, before anything else.
    expect(texts[2]).toMatch(
      /What hurts, in the messages there now:\*\n• `orders.audit`: loses dead-letter exchange `audit.dlx` with 12 messages queued/,
    );
    expect(texts[4]).toMatch(/What hurts.*\n.*lose a dead-letter target/);
    expect(m.text).toBe('Preview of delete audit-retention: 1 object would lose a dead-letter target.');
    expect(m.file).toBeUndefined();
  });

  it('a policy name in "falls back to …" is shown as a name: *bold* and _x_ do not format', () => {
    const styled = pol('*bold*_x_', '^orders\\.', 1, { 'message-ttl': 1 }, 'queues');
    const r = answer(
      [retention, styled],
      { action: 'delete', layer: 'user', before: retention, after: null },
      [{ name: 'orders.audit', kind: 'classic', arguments: {}, policy: 'audit-retention' }],
    );
    const texts = previewView(r).blocks.map((b) => (b as { text?: { text: string } }).text?.text ?? '');
    const line = texts.find((t) => t.includes('falls back to') && t.includes('bold')) ?? '';
    expect(line).toContain('falls back to `*bold*_x_`');
    expect(line).not.toMatch(/falls back to \*bold/);
  });

  it('a list too long for one message becomes a summary plus the full list as a CSV file', () => {
    const m = previewView(big);
    expect(m.file).toBeDefined();
    const lines = m.file?.content.trim().split('\n') ?? [];
    expect(lines[0]).toBe(
      'name,kind,before,after,tie_candidates,lost,gained,changed,risks,unpredictable_why',
    );
    expect(lines).toHaveLength(1 + 402);
    expect(m.file?.filename).toBe('preview-delete-wide.csv');
    expect(m.file?.content).toContain(`"'=HYPERLINK(""x"")"`);
    expect(JSON.stringify(m.blocks)).toMatch(/full list of objects is in the attached file/);
  });

  it('snapshots of real scenarios', () => {
    for (const [name, r] of cases.filter(([n]) => n !== 'a large delete')) {
      expect(previewView(r)).toMatchSnapshot(name);
    }
  });
});

describe('preview in the terminal', () => {
  it('reads risk first, then what happens, then object by object', () => {
    expect(previewText(lab)).toMatchInlineSnapshot(`
      "Preview: delete policy "audit-retention" in vhost "/" (RabbitMQ 3.10.8)
        Deleting a policy restores no default: every object it governs falls back to the next policy that matches it, or, when none does, to its own arguments alone — and that can silently take away a TTL or a dead-letter target.
        now:      pattern "^orders\\.audit$", apply-to queues, priority 10, sets dead-letter-exchange="audit.dlx"

      What hurts:
        ! orders.audit: loses dead-letter exchange "audit.dlx" with 12 messages queued: what is rejected or expires from now on is dropped
        ! orders.audit: message-ttl 3600000 ms: the messages queued now keep their expiry; those published from now on expire after 1 h
          Messages as the broker's statistics said at 09:00:00 UTC (they lag the broker by a few seconds).
        ! 1 object would lose a dead-letter target [dead-letter-exchange]: orders.audit

      What happens (1 object changes):
        1 falls back to audit-fallback — loses dead-letter-exchange; gains message-ttl: orders.audit

      Object by object:
        orders.audit (classic queue): policy audit-retention -> audit-fallback
            loses   dead-letter-exchange="audit.dlx"
            gains   message-ttl=3600000
            now     12 messages ready, 0 unacked, 0 consumers
            ! loses dead-letter exchange "audit.dlx" with 12 messages queued: what is rejected or expires from now on is dropped
            ! message-ttl 3600000 ms: the messages queued now keep their expiry; those published from now on expire after 1 h

      2 queues and 0 exchanges read; every other object keeps what it has.
      "
    `);
  });

  it('says when the operator policy holds a value the user policy no longer gives', () => {
    const text = previewText(cases[3]?.[1] as PreviewResult);
    expect(text).toMatch(
      /changes message-ttl: 600000 -> 600000|keeps {3}message-ttl: the operator policy holds it/,
    );
  });

  it('a refusal lists every reason', () => {
    expect(previewText(cases[4]?.[1] as PreviewResult)).toMatch(
      /Refused: nothing was previewed or filed\.\n {2}x max-lenght is not a policy key/,
    );
  });
});

describe('preview words, JSON and exit codes', () => {
  it('parses each action', () => {
    expect(parsePreview(['delete', 'ttl', '--vhost', 'v'])).toEqual({
      action: 'delete',
      name: 'ttl',
      layer: 'user',
      vhost: 'v',
      env: undefined,
      fields: {},
      notes: [],
    });
    expect(
      parsePreview([
        'create',
        'p',
        '--pattern',
        '^a',
        '--definition',
        '{"max-length":1}',
        '--priority',
        '-2.5',
        '--apply-to',
        'queues',
        '--operator',
      ]),
    ).toMatchObject({
      action: 'create',
      layer: 'operator',
      vhost: '/',
      fields: { pattern: '^a', priority: -2.5, applyTo: 'queues', definition: { 'max-length': 1 } },
    });
    expect(parsePreview(['edit', 'p', '--priority=3'])).toMatchObject({
      action: 'edit',
      fields: { priority: 3 },
    });
  });

  it('reads a definition typed with curly quotes, and says so', () => {
    const input = parsePreview(['edit', 'p', '--definition', '{“max-length”: 7}']);
    expect(input.fields.definition).toEqual({ 'max-length': 7 });
    expect(input.notes).toEqual([FOLDED_QUOTES_NOTE]);
    // A curly quote inside a valid JSON string is a character of the value: not folded, nothing said.
    const kept = parsePreview(['edit', 'p', '--definition', '{"x": "say “hi”"}']);
    expect(kept.fields.definition).toEqual({ x: 'say “hi”' });
    expect(kept.notes).toEqual([]);
  });

  it('shows the pattern and definition exactly as they will be written, in Slack and the terminal', () => {
    const created = pol('audit', '^orders\\.audit$', 7, { 'max-length': 7 }, 'queues');
    const r: PreviewResult = {
      ...answer([], { action: 'create', layer: 'user', before: null, after: created }, []),
      notes: [FOLDED_QUOTES_NOTE],
    };
    const slack = previewView(r)
      .blocks.map((b) => ('text' in b && b.text && typeof b.text === 'object' ? b.text.text : ''))
      .join('\n');
    // One backslash, as typed; the JSON as sent; how it was read.
    expect(slack).toContain('pattern     ^orders\\.audit$\n');
    expect(slack).toContain('definition  {"max-length":7}\n');
    expect(slack).toContain('read as straight quotes');
    const text = previewText(r);
    expect(text).toContain('    pattern     ^orders\\.audit$\n');
    expect(text).toContain('    definition  {"max-length":7}\n');
    expect(text).toContain('note: typographic quotes');
  });

  it.each([
    [['delete'], /needs the name/],
    [['rename', 'x'], /Unknown action/],
    [['create', 'x', '--definition', '{"a":1}'], /needs --pattern/],
    [['create', 'x', '--pattern', 'a'], /needs --definition/],
    [['create', 'x', '--pattern', 'a', '--definition', '{bad'], /not valid JSON/],
    [['create', 'x', '--pattern', 'a', '--definition', '[1]'], /must be a JSON object/],
    [['edit', 'x', '--priority', 'high'], /--priority must be a number/],
    [['delete', 'x', '--pattern', 'a'], /takes no --pattern/],
    [['delete', 'x', 'y'], /one policy name/],
    [['delete', 'x', '--colour', 'red'], /Unknown flag/],
  ])('%j is refused (exit 2)', (words, message) => {
    expect(() => parsePreview(words)).toThrow(message);
  });

  it('the JSON document carries the keys INTERFACE.md promises; exit codes follow it', () => {
    const json = previewJson(lab) as {
      change: unknown;
      objects: { before: unknown; after: unknown; lost: unknown; gained: unknown; changed: unknown }[];
      unpredictable: unknown[];
    };
    expect(Object.keys(json).slice(0, 3)).toEqual(['change', 'objects', 'unpredictable']);
    expect(json.change).toEqual({
      action: 'delete',
      policy: 'audit-retention',
      vhost: '/',
      operator: false,
      before: {
        pattern: '^orders\\.audit$',
        applyTo: 'queues',
        priority: 10,
        definition: { 'dead-letter-exchange': 'audit.dlx' },
      },
      after: null,
    });
    expect(json.objects[0]).toMatchObject({
      name: 'orders.audit',
      kind: 'classic',
      before: { policy: 'audit-retention' },
      after: { policy: 'audit-fallback' },
      lost: { 'dead-letter-exchange': 'audit.dlx' },
      gained: { 'message-ttl': 3_600_000 },
      changed: {},
    });
    expect(previewExitCode(lab)).toBe(0);
    expect(previewExitCode(cases[4]?.[1] as PreviewResult)).toBe(2);
    expect(previewExitCode(cases[5]?.[1] as PreviewResult)).toBe(3);
    expect(
      previewExitCode({ status: 'not-asked', change: lab.change, warnings: [], why: 'missing-vhost' }),
    ).toBe(2);
  });

  it('CSV fields are quoted and formula-safe', () => {
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField('+1')).toBe("'+1");
    expect(csvField('plain')).toBe('plain');
  });
});

describe('the audit diff', () => {
  it('shows exactly what an edit replaced', () => {
    const d = policyDiff({
      action: 'edit',
      layer: 'user',
      before: fallback,
      after: { ...fallback, priority: 4, definition: { 'message-ttl': 1, 'max-length': 2 } },
    });
    expect(d).toEqual({
      action: 'edit',
      layer: 'user',
      vhost: '/',
      name: 'audit-fallback',
      fields: { priority: { before: 1, after: 4 } },
      definition: {
        'max-length': { before: null, after: 2 },
        'message-ttl': { before: 3_600_000, after: 1 },
      },
      unchanged: false,
    });
    expect(policyDiff({ action: 'edit', layer: 'user', before: fallback, after: fallback }).unchanged).toBe(
      true,
    );
    const gone = policyDiff({ action: 'delete', layer: 'operator', before: ceiling, after: null });
    expect(gone.fields.pattern).toEqual({ before: '^orders\\.', after: null });
  });
});

describe('what every change preview says first', () => {
  const textOf = (r: PreviewAnswer) =>
    previewView(r)
      .blocks.map((b) => JSON.stringify(b))
      .join('\n');

  it('a delete: the delete warning, at the top in both front doors', () => {
    expect(previewText(lab).split('\n')[1]).toBe(`  ${DELETE_WARNING}`);
    expect((previewView(lab).blocks[0] as { text: { text: string } }).text.text).toContain(DELETE_WARNING);
  });

  it('a create or edit reaches every object its pattern matches, including ones created later', () => {
    const anchored = answer(
      [fallback],
      {
        action: 'edit',
        layer: 'user',
        before: fallback,
        after: { ...fallback, priority: 2 },
      },
      [],
    );
    expect(previewText(anchored)).toContain(
      'It reaches every queue whose name matches "^orders\\.": the ones there now, and every one created later.',
    );
    expect(previewText(anchored)).not.toContain('unanchored');
    expect(textOf(anchored)).toContain('every one created later');

    const unanchored = answer(
      [],
      {
        action: 'create',
        layer: 'user',
        before: null,
        after: pol('orders', 'orders', 1, { 'max-length': 5 }),
      },
      [],
    );
    const text = previewText(unanchored);
    expect(text).toMatch(
      /It reaches every queue or exchange whose name contains a match of "orders" anywhere \(the pattern is unanchored: it does not start with \^\): the ones there now, and every one created later\./,
    );
    expect(textOf(unanchored)).toContain('the pattern is unanchored');
  });

  it('an operator delete: the user policy stays in force, only the operator layer goes', () => {
    const r = answer(
      [fallback],
      { action: 'delete', layer: 'operator', before: ceiling, after: null },
      [
        { name: 'orders.x', kind: 'classic', arguments: {}, policy: 'audit-fallback' },
        { name: 'orders.y', kind: 'classic', arguments: {}, policy: null },
      ],
      [ceiling],
    );
    const groups = r.summary.groups.map((g) => g.outcome).sort();
    expect(groups).toEqual([
      'governed by nothing: no operator policy and no policy',
      'no operator policy; policy audit-fallback stays in force',
    ]);
    const text = previewText(r);
    expect(text.split('\n')[1]).toBe(`  ${deleteWarning(true)}`);
    expect(text).toMatch(
      /orders\.x \(classic queue\): operator policy orders-ceiling -> nothing \(no operator policy; policy audit-fallback stays in force\)/,
    );
    expect(textOf(r)).toContain('policy audit-fallback stays in force');
    expect(textOf(r)).not.toMatch(/orders\.x.*governed by nothing/);
  });
});

describe('what could not be read, with nothing read to fear', () => {
  it('is said in the terminal and in Slack: unknown is not none', () => {
    const fed = pol('fed', '^fed\\.x$', 0, { 'federation-upstream': 'up' }, 'exchanges');
    const why = 'forbidden: listing federation links takes the monitoring or administrator tag';
    const r = answer(
      [fed],
      { action: 'delete', layer: 'user', before: fed, after: null },
      [{ name: 'fed.x', kind: 'exchange', arguments: {}, policy: 'fed' }],
      [],
      {
        sampledAt: '2026-12-01T09:00:00.000Z',
        queues: new Map(),
        federation: { upstreams: new Set(['up']), upstreamSets: new Set(), links: null, linksNotRead: why },
      },
    );
    expect(r.summary.impact?.count).toBe(0);
    const note = `The federation links could not be read (${why}): which links would stop is not known.`;
    expect(previewText(r)).toContain(note);
    expect(JSON.stringify(previewView(r).blocks)).toContain(
      'listing federation links takes the monitoring or administrator tag',
    );
  });
});
