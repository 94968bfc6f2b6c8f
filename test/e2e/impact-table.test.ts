/**
 * Issue 18's table, row by row, on the real broker, on every surface a person decides on: the
 * terminal as users run it (the built `bin/rmq.js`, text and `--json`) and Slack (a signed
 * `/rmq preview …` to the running app, its answer read from the fake Web API). Each row sets up
 * what the issue tried, waits until the broker's statistics show the messages (they lag), then
 * asks all three and expects the table's second column: what the broker did at once.
 * That the broker does so is proven by behaviour in test/integration/impact.test.ts.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { brokerCredentials, brokerUrl, waitFor } from '../support/broker.ts';
import { BROKERS } from '../support/brokers.ts';
import { type Built, built } from '../support/built.ts';
import { type CliRun, runBuiltRmq } from '../support/cli.ts';
import { type Harness, renderedText, startHarness } from '../support/harness.ts';
import { deadLetteredOver, fullWithMissingDeadLetter, lostToMissingDeadLetter } from '../support/hazards.ts';
import { type Messages, management, messages } from '../support/messages.ts';

const MACHINE = BROKERS[0];
if (!MACHINE) throw new Error('no machine broker');

let h: Harness;
let pkg: Built;
let amqp: Messages;
let api: ReturnType<typeof management>;
const cwd = mkdtempSync(join(tmpdir(), 'rmq-impact-table-'));

beforeAll(async () => {
  [h, pkg] = await Promise.all([startHarness(), built()]);
  api = management(MACHINE, h.vhost);
  amqp = await messages(MACHINE, h.vhost);
}, 180_000);
afterAll(async () => {
  await amqp?.close();
  await h?.stop();
});

interface Row {
  readonly what: string;
  /** Declares and fills; the queues and how many messages each holds before the change. */
  readonly setUp: () => Promise<Record<string, number>>;
  /** The preview's words after `preview`, as typed in the terminal (argv) and in Slack (one line). */
  readonly argv: readonly string[];
  readonly slack: string;
  /** The top-level `impact` totals and each queue's effects, as `--json` has them. */
  readonly totals: Record<string, number>;
  readonly impact: Record<string, unknown[]>;
  /** What the text says, in the terminal and in Slack alike (a name quoted "x" there, `x` here). */
  readonly says: readonly RegExp[];
}

/**
 * A name as either surface shows it: the terminal quotes a value ("dlx") and leads a line with an
 * object's name bare; Slack shows both as code (`dlx`).
 */
const n = (s: string) => `["\`]?${s.replaceAll('.', '\\.')}["\`]?`;

const ROWS: Row[] = [
  {
    what: 'max-length 10 + an existing dead-letter exchange on a classic and a quorum queue of 50: 80 dead-lettered at once',
    setUp: async () => {
      await api.exchange('dlx');
      await api.queue('dlq', 'classic');
      await api.bind('dlx', 'dlq');
      await api.queue('t1.classic', 'classic');
      await api.queue('t1.quorum', 'quorum');
      await Promise.all([amqp.publish('t1.classic', 50), amqp.publish('t1.quorum', 50)]);
      return { 't1.classic': 50, 't1.quorum': 50 };
    },
    argv: [
      'create',
      't1-cap',
      '--pattern',
      '^t1\\.',
      '--apply-to',
      'queues',
      '--definition',
      '{"max-length":10,"dead-letter-exchange":"dlx"}',
    ],
    slack:
      'create t1-cap --pattern ^t1\\. --apply-to queues --definition {"max-length": 10, "dead-letter-exchange": "dlx"}',
    totals: { messagesDeadLettered: 80, messagesLost: 0, queuesDeleted: 0 },
    impact: Object.fromEntries(
      ['t1.classic', 't1.quorum'].map((q) => [q, [deadLetteredOver(10, 40, 'dlx')]]),
    ),
    says: [
      /[Ll]oss: 80 messages dead-lettered/,
      new RegExp(
        `${n('t1.classic')}: 40 messages removed at once and dead-lettered to ${n('dlx')} \\(max-length 10\\)`,
      ),
      new RegExp(`${n('t1.quorum')}: 40 messages removed at once and dead-lettered to ${n('dlx')}`),
    ],
  },
  {
    what: 'max-length 5 + a dead-letter exchange that does not exist, on 30: 25 gone, said as lost',
    setUp: async () => {
      await api.queue('t2.q', 'classic');
      await amqp.publish('t2.q', 30);
      return { 't2.q': 30 };
    },
    argv: [
      'create',
      't2-cap',
      '--pattern',
      '^t2\\.',
      '--apply-to',
      'queues',
      '--definition',
      '{"max-length":5,"dead-letter-exchange":"no-such-dlx"}',
    ],
    slack:
      'create t2-cap --pattern ^t2\\. --apply-to queues --definition {"max-length": 5, "dead-letter-exchange": "no-such-dlx"}',
    totals: { messagesDeadLettered: 0, messagesLost: 25, queuesDeleted: 0 },
    impact: {
      't2.q': lostToMissingDeadLetter(25, 5, 'no-such-dlx'),
    },
    says: [
      /[Ll]oss: 25 messages lost/,
      new RegExp(
        `${n('t2.q')}: 25 messages removed at once and lost \\(max-length 5\\) — dead-letter exchange ${n('no-such-dlx')} does not exist`,
      ),
      new RegExp(`dead-letter-exchange names ${n('no-such-dlx')}, which does not exist`),
    ],
  },
  {
    what: 'expires 4000 on a queue of 5 with no consumer: deleted with its messages about 4 s after',
    setUp: async () => {
      await api.queue('t3.q', 'classic');
      await amqp.publish('t3.q', 5);
      return { 't3.q': 5 };
    },
    argv: [
      'create',
      't3-exp',
      '--pattern',
      '^t3\\.',
      '--apply-to',
      'queues',
      '--definition',
      '{"expires":4000}',
    ],
    slack: 'create t3-exp --pattern ^t3\\. --apply-to queues --definition {"expires": 4000}',
    totals: { messagesLost: 5, queuesDeleted: 1 },
    impact: { 't3.q': [{ effect: 'delete', messages: 5, inMs: 4000, because: 'expires' }] },
    says: [
      /[Ll]oss: 5 messages lost, 1 queue deleted/,
      new RegExp(
        `${n('t3.q')}: deleted with its 5 messages about 4 s after the change \\(expires 4000 ms, no consumer\\)`,
      ),
    ],
  },
  {
    what: 'message-ttl 2000 on 20 queued (classic and quorum): nothing at once, said so',
    setUp: async () => {
      await api.queue('t4.classic', 'classic');
      await api.queue('t4.quorum', 'quorum');
      await Promise.all([amqp.publish('t4.classic', 20), amqp.publish('t4.quorum', 20)]);
      return { 't4.classic': 20, 't4.quorum': 20 };
    },
    argv: [
      'create',
      't4-ttl',
      '--pattern',
      '^t4\\.',
      '--apply-to',
      'queues',
      '--definition',
      '{"message-ttl":2000}',
    ],
    slack: 'create t4-ttl --pattern ^t4\\. --apply-to queues --definition {"message-ttl": 2000}',
    totals: { messagesDeadLettered: 0, messagesLost: 0, queuesDeleted: 0 },
    impact: Object.fromEntries(
      ['t4.classic', 't4.quorum'].map((q) => [
        q,
        [{ effect: 'ttl-from-now', ttlMs: 2000, because: 'message-ttl' }],
      ]),
    ),
    says: [
      new RegExp(
        `${n('t4.classic')}: message-ttl 2000 ms: the messages queued now keep their expiry; those published from now on expire after 2 s`,
      ),
      new RegExp(`${n('t4.quorum')}: message-ttl 2000 ms: the messages queued now keep their expiry`),
    ],
  },
  {
    what: 'deleting a policy whose fallback caps lower: the excess removed at once, not just "changed 100 → 10"',
    setUp: async () => {
      await api.policy('t5-high', '^t5\\.q$', { 'max-length': 100 }, { priority: 10 });
      await api.policy('t5-fallback', '^t5\\.', { 'max-length': 10 }, { priority: 0 });
      await api.queue('t5.q', 'classic');
      await amqp.publish('t5.q', 60);
      return { 't5.q': 60 };
    },
    argv: ['delete', 't5-high'],
    slack: 'delete t5-high',
    totals: { messagesLost: 50 },
    impact: { 't5.q': [{ effect: 'drop', messages: 50, fate: 'lost', because: 'max-length', limit: 10 }] },
    says: [
      /[Ll]oss: 50 messages lost/,
      new RegExp(
        `${n('t5.q')}: 50 messages removed at once and lost \\(max-length 10\\) — no dead-letter exchange`,
      ),
    ],
  },
];

interface PreviewJson {
  objects: { name: string; now: { messages: number; ready: number } | null; impact: unknown[] }[];
  impact: Record<string, number>;
}

/** `rmq …argv --vhost <the harness's>` as users run it: the built bin/rmq.js. */
function rmq(argv: readonly string[]): Promise<CliRun> {
  const { user, password } = brokerCredentials();
  return runBuiltRmq(
    pkg.bin,
    [...argv, '--vhost', h.vhost],
    { RMQ_URL: brokerUrl(), RMQ_USER: user, RMQ_PASSWORD: password },
    cwd,
  );
}

const terminal = (argv: readonly string[]) => rmq(['preview', ...argv]);

describe("issue 18's table: the terminal, --json and Slack say what the broker does at once", () => {
  it.each(ROWS)(
    '$what',
    async (row) => {
      const held = await row.setUp();
      // The statistics lag (quorum queues most): ask until they show every message published.
      const json = await waitFor(
        async () => {
          const run = await terminal([...row.argv, '--json']);
          expect(run.code, run.err).toBe(0);
          const doc = JSON.parse(run.out) as PreviewJson;
          for (const [q, count] of Object.entries(held)) {
            const o = doc.objects.find((x) => x.name === q);
            if (o?.now?.messages !== count || o.now.ready !== count) return undefined;
          }
          return doc;
        },
        { deadlineMs: 45_000, intervalMs: 1000, what: 'the statistics to show the messages published' },
      );
      expect(json.impact).toMatchObject(row.totals);
      for (const [q, impact] of Object.entries(row.impact)) {
        expect(json.objects.find((o) => o.name === q)?.impact, q).toEqual(impact);
      }

      const text = await terminal(row.argv);
      expect(text.code, text.err).toBe(0);
      const { responseUrl } = await h.command(`preview ${row.slack} --vhost ${h.vhost}`);
      const slack = renderedText((await h.answerTo(responseUrl)).args);
      for (const [surface, said] of [
        ['terminal', text.out],
        ['slack', slack],
      ] as const) {
        for (const re of row.says) expect(said, surface).toMatch(re);
        // The loss comes first in "What hurts", before any key-level diff.
        const hurts = said.search(/What hurts/);
        expect(hurts, surface).toBeGreaterThanOrEqual(0);
        const first = row.says[0];
        if (first) expect(said.search(first), surface).toBeGreaterThan(hurts);
      }
    },
    120_000,
  );
});

describe("which, once such a change is made: the object's live hazards on every surface", () => {
  it('a queue at max-length whose dead-letter exchange does not exist: the oldest pushed out and lost, the target missing', async () => {
    await api.policy('t6-cap', '^t6\\.', { 'max-length': 5, 'dead-letter-exchange': 'no-such-dlx' });
    await api.queue('t6.q', 'classic');
    await amqp.publish('t6.q', 30);
    const which = (...flags: string[]) => rmq(['which', 't6.q', ...flags]);
    const json = await waitFor(
      async () => {
        const run = await which('--json');
        expect(run.code, run.err).toBe(0);
        const doc = JSON.parse(run.out) as { now: { messages: number } | null; hazards: unknown[] };
        return doc.now?.messages === 5 && doc.hazards.length === 2 ? doc : undefined;
      },
      { deadlineMs: 45_000, intervalMs: 1000, what: 'which to show the queue at its limit' },
    );
    expect(json.hazards).toEqual(fullWithMissingDeadLetter(5, 'no-such-dlx'));
    const text = await which();
    const { responseUrl } = await h.command(`which t6.q --vhost ${h.vhost}`);
    const slack = renderedText((await h.answerTo(responseUrl)).args);
    for (const [surface, said] of [
      ['terminal', text.out],
      ['slack', slack],
    ] as const) {
      expect(said, surface).toMatch(
        /Now:\*? 5 messages ready, 0 unacked, 0 consumers — as the broker's statistics said at \d\d:\d\d:\d\d UTC/,
      );
      expect(said, surface).toMatch(
        new RegExp(
          `each message published pushes out the oldest, lost — dead-letter exchange ${n('no-such-dlx')} does not exist`,
        ),
      );
      expect(said, surface).toMatch(
        new RegExp(`dead-letter-exchange names ${n('no-such-dlx')}, which does not exist`),
      );
    }
  }, 120_000);
});
