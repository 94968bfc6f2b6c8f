import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson, recordHash } from '../../src/audit/trail.ts';
import type { ChangeRecord } from '../../src/audit/types.ts';
import { history, parseHistory, verifySentence } from '../../src/commands/history/history.ts';
import { parseRequests, requestEntry } from '../../src/commands/requests/requests.ts';
import { InputError } from '../../src/core/errors.ts';
import { historyView } from '../../src/slack/views/history.ts';
import { requestsView } from '../../src/slack/views/requests.ts';
import { historyText } from '../../src/terminal/history.ts';
import { requestsText } from '../../src/terminal/requests.ts';
import { changeRequest } from '../support/changeRequest.ts';
import { checkMessage } from '../support/fakeSlack.ts';

/** `requests` and `history`: parsing, the terminal text, the Slack views, and the record hash. */

const HOSTILE = '<!channel> *bold* `tick` <https://evil|click> &amp;';

const request = changeRequest;

const record = (over: Partial<ChangeRecord> = {}): ChangeRecord => ({
  id: 'a-r-0123456789abcdef0123',
  at: '2026-11-30T12:05:00.000Z',
  env: 'prod',
  vhost: '/',
  policy: 'audit-retention',
  operator: false,
  action: 'delete',
  requestId: 'r-0123456789abcdef0123',
  requester: { user: 'U0ALICE', reason: 'retention moves to the archive' },
  approver: { user: 'U0BOB', reason: 'checked the archive' },
  before: { pattern: '^orders\\.', applyTo: 'queues', priority: 10, definition: { 'message-ttl': 60000 } },
  after: null,
  objects: [
    {
      name: 'orders.audit',
      kind: 'classic',
      before: 'audit-retention',
      after: 'audit-fallback',
      lost: { 'message-ttl': 60000 },
      gained: {},
      changed: { 'max-length': { before: 10, after: 20 } },
    },
  ],
  unpredictable: 0,
  matchedPreview: true,
  prev: '',
  hash: 'x',
  ...over,
});

describe('parsing', () => {
  it.each([
    [[], { verify: false }],
    [['ttl'], { name: 'ttl', verify: false }],
    [
      ['orders.audit', '--vhost', 'v1', '--env', 'prod', '--verify'],
      { name: 'orders.audit', vhost: 'v1', env: 'prod', verify: true },
    ],
    [['--against', 'bot.log'], { verify: true, against: 'bot.log' }],
  ])('history %j', (words, want) => {
    expect(parseHistory(words)).toEqual(want);
  });

  it('--against reads a file where the command runs: refused where no log reader is given (Slack)', async () => {
    const source = {
      scan: async () => ({ entries: [], unreadable: 0 }),
      verify: async () => ({ ok: true as const, records: 0, keyed: false }),
      reviewOf: async () => undefined,
    };
    await expect(history(parseHistory(['--verify', '--against', '/etc/passwd']), source)).rejects.toThrow(
      /use it in the terminal/,
    );
    expect(await history(parseHistory(['--verify']), source)).toEqual({
      entries: [],
      unreadable: 0,
      verify: { ok: true, records: 0, keyed: false },
    });
  });

  it.each([[['a', 'b']], [['--verify=yes']], [['--vhost', '']], [['--since', '1h']], [['--against', '']]])(
    'history %j is refused',
    (words) => {
      expect(() => parseHistory(words)).toThrow(InputError);
    },
  );

  it("a channel's defaults (use) fill what the words leave out, and a flag says otherwise", () => {
    const defaults = { env: 'prod', vhost: 'orders' };
    expect(parseHistory(['p1'], defaults)).toEqual({
      name: 'p1',
      env: 'prod',
      vhost: 'orders',
      verify: false,
    });
    expect(parseHistory(['--vhost', 'b', '--env', 'stage'], defaults)).toEqual({
      env: 'stage',
      vhost: 'b',
      verify: false,
    });
    expect(parseRequests([], defaults)).toEqual({ env: 'prod' });
    expect(parseRequests(['--env', 'stage'], defaults)).toEqual({ env: 'stage' });
  });

  it('requests takes --env only', () => {
    expect(parseRequests(['--env', 'prod'])).toEqual({ env: 'prod' });
    expect(() => parseRequests(['prod'])).toThrow(InputError);
  });
});

describe('requests', () => {
  it('--json entries carry the keys of INTERFACE.md', () => {
    const e = requestEntry(request());
    expect(Object.keys(e)).toEqual(
      expect.arrayContaining([
        'id',
        'state',
        'env',
        'vhost',
        'change',
        'requester',
        'createdAt',
        'expiresAt',
      ]),
    );
    expect(e.change).toEqual({
      action: 'delete',
      policy: 'audit-retention',
      vhost: '/',
      operator: false,
      before: request().before,
      after: null,
    });
  });

  it('terminal text and Slack view, user strings escaped', () => {
    const result = {
      requests: [
        requestEntry(request({ requester: { user: 'U0ALICE', reason: HOSTILE } })),
        requestEntry(
          request({
            id: 'r-1123456789abcdef0123',
            state: 'approved',
            decision: { kind: 'approve', by: 'U0BOB', reason: 'ok', at: '2026-11-30T12:01:00.000Z' },
          }),
        ),
      ],
      frozen: [{ env: 'lab', until: '2026-11-30T18:00:00.000Z', by: 'U0CAROL', reason: HOSTILE }],
    };
    expect(requestsText(result)).toMatchSnapshot();
    const view = requestsView(result);
    expect(checkMessage({ ...view })).toBeNull();
    const text = JSON.stringify(view.blocks);
    expect(text).not.toContain('<!channel>');
    expect(text).not.toContain('<https://evil');
    expect(view).toMatchSnapshot();
    expect(requestsView({ requests: [], frozen: [] }).text).toBe('No open change requests.');
  });
});

describe('history', () => {
  it('terminal text and Slack view, user strings escaped, the chain state last', () => {
    const result = {
      entries: [record({ approver: { user: 'U0BOB', reason: HOSTILE } })],
      unreadable: 0,
      verify: { ok: false as const, records: 2, broken: 'a-r-x', why: 'chain-broken' as const, keyed: false },
    };
    expect(historyText(result)).toMatchSnapshot();
    const view = historyView(result);
    expect(checkMessage({ ...view })).toBeNull();
    expect(JSON.stringify(view.blocks)).not.toContain('<!channel>');
    expect(JSON.stringify(view.blocks)).toContain('BROKEN at');
    expect(view).toMatchSnapshot();
  });

  it.each([
    [{ ok: true as const, records: 1, keyed: false }, /intact \(1 record\)\. Checked against accidents only/],
    [
      { ok: true as const, records: 1, keyed: true },
      /intact \(1 record\)\. Each seal was checked with RMQ_AUDIT_KEY/,
    ],
    [
      { ok: false as const, records: 3, broken: 'a-1', why: 'hash-mismatch' as const, keyed: true },
      /BROKEN at a-1: .*edited, or re-sealed without the key/,
    ],
    [
      {
        ok: false as const,
        records: 3,
        broken: 'the record after a-1',
        why: 'head-mismatch' as const,
        keyed: false,
      },
      /last record was removed/,
    ],
    [
      { ok: false as const, records: 3, broken: 'a-2', why: 'unkeyed' as const, keyed: true },
      /BROKEN at a-2: it is not sealed with RMQ_AUDIT_KEY/,
    ],
    [
      { ok: false as const, records: 3, broken: 'a-2', why: 'needs-key' as const, unproven: 2, keyed: false },
      /^The audit chain is NOT PROVEN: 2 records of 3 \(the first: a-2\) are sealed with RMQ_AUDIT_KEY, which this reader does not have\. The links between the records hold, each of the others matches its own hash, but .* set RMQ_AUDIT_KEY and verify again\.$/,
    ],
    [
      {
        ok: false as const,
        records: 2,
        broken: 'a-3',
        why: 'log-mismatch' as const,
        keyed: true,
        against: {
          file: 'bot.log',
          logged: 3,
          unreadableLines: 1,
          missing: ['a-3'],
          altered: ['a-2'],
          extra: [],
        },
      },
      /holds together \(2 records\), but .*Against bot\.log \(3 records logged\): missing from Redis \(1\): a-3; altered in Redis \(1\): a-2\. 1 line of the log/,
    ],
  ])('verify sentence %j', (v, want) => {
    expect(verifySentence(v)).toMatch(want);
  });
});

describe('record hash', () => {
  const json = fc.jsonValue();
  it('does not depend on the order of keys', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), json), (d) => {
        const reversed = Object.fromEntries(Object.entries(d).reverse());
        expect(canonicalJson(reversed)).toBe(canonicalJson(d));
      }),
    );
  });

  it('changes when any field of the record changes', () => {
    const { hash: _h, ...body } = record();
    const base = recordHash(body);
    fc.assert(
      fc.property(fc.constantFrom(...(Object.keys(body) as (keyof typeof body)[])), json, (key, value) => {
        fc.pre(canonicalJson(value) !== canonicalJson(body[key]));
        expect(recordHash({ ...body, [key]: value })).not.toBe(base);
      }),
    );
  });
});
