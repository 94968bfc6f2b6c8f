/**
 * Predicted and observed in the audit record (src/audit/observed.ts, src/workflow/apply/observe.ts):
 * which touched queues are watched, where predicted and observed differ, the words for both in
 * the terminal and Slack, and the poll after the write when the statistics lag, never settle or
 * cannot be read (a scripted listing: fault injection; the real brokers are in
 * test/integration/workflow-loss.test.ts).
 */
import { describe, expect, it } from 'vitest';
import {
  differences,
  inShowingOrder,
  type Observation,
  type ObservedQueue,
  queuesToWatch,
  type WatchedQueue,
} from '../../src/audit/observed.ts';
import { observationWords, observedQueueWords } from '../../src/audit/observedWords.ts';
import { type ChangeRecord, ChangeRecordSchema } from '../../src/audit/types.ts';
import type { LiveQueue } from '../../src/policy/impact/impact.ts';
import type { PreviewObject } from '../../src/preview/impact.ts';
import { auditView } from '../../src/slack/views/request.ts';
import { historyText } from '../../src/terminal/history.ts';
import { quoted } from '../../src/text/asWritten.ts';
import { observeAfterWrite } from '../../src/workflow/apply/observe.ts';
import { renderedText } from '../support/harness.ts';
import { liveQueue } from '../support/live.ts';

const WRITTEN = '2026-12-01T12:00:00.000Z';
const at = (s: number) => new Date(Date.parse(WRITTEN) + s * 1000).toISOString();

const observation = (queues: ObservedQueue[], over: Partial<Observation> = {}): Observation => ({
  writtenAt: WRITTEN,
  sampledBefore: at(-1),
  at: at(8),
  queues,
  unchanged: 0,
  unwatched: 0,
  ...over,
});

describe('predicted and observed, per queue', () => {
  const rows: { what: string; q: ObservedQueue; words: string; differs: boolean }[] = [
    {
      what: 'a removal as predicted',
      q: { name: 'a', kind: 'classic', messagesBefore: 50, predictedRemoved: 40, messagesAfter: 10 },
      words: '"a": 50 messages before, 10 messages after (predicted 10 messages)',
      differs: false,
    },
    {
      what: 'more removed than predicted (the preview read lagging statistics)',
      q: { name: 'b', kind: 'quorum', messagesBefore: 7, predictedRemoved: 0, messagesAfter: 5 },
      words: '"b": 7 messages before, 5 messages after (predicted 7 messages) — DIFFERS from the prediction',
      differs: true,
    },
    {
      what: 'a deletion as predicted',
      q: { name: 'c', kind: 'classic', messagesBefore: 5, predictedDeletedInMs: 4000, messagesAfter: null },
      words: '"c": 5 messages before, deleted after (predicted deleted 4 s after the write)',
      differs: false,
    },
    {
      what: 'a deletion due after the observation ended: not a difference',
      q: { name: 'd', kind: 'classic', messagesBefore: 5, predictedDeletedInMs: 3_600_000, messagesAfter: 5 },
      words:
        '"d": 5 messages before, 5 messages after (predicted deleted at 13:00:00 UTC, after the observation ended)',
      differs: false,
    },
    {
      what: 'a deletion predicted and due, the queue still there',
      q: { name: 'e', kind: 'classic', messagesBefore: 5, predictedDeletedInMs: 4000, messagesAfter: 5 },
      words:
        '"e": 5 messages before, 5 messages after (predicted deleted 4 s after the write) — DIFFERS from the prediction',
      differs: true,
    },
    {
      what: 'a queue deleted that nothing predicted',
      q: { name: 'f', kind: 'classic', messagesBefore: 3, predictedRemoved: 0, messagesAfter: null },
      words: '"f": 3 messages before, deleted after (predicted 3 messages) — DIFFERS from the prediction',
      differs: true,
    },
    {
      what: 'statistics unknown before: nothing predicted, nothing claimed',
      q: { name: 'g', kind: 'classic', messagesBefore: null, messagesAfter: 4 },
      words: '"g": unknown before, 4 messages after (nothing predicted (statistics unknown))',
      differs: false,
    },
    {
      what: 'statistics unknown after: said, not a difference',
      q: { name: 'h', kind: 'classic', messagesBefore: 20, predictedRemoved: 10 },
      words: '"h": 20 messages before, unknown after (predicted 10 messages)',
      differs: false,
    },
  ];
  it.each(rows)('$what', ({ q, words, differs }) => {
    const o = observation([q]);
    expect(observedQueueWords(q, o, quoted)).toBe(words);
    expect(differences(o)).toEqual(differs ? [q] : []);
  });

  it('the header says how it was read, whether it settled, and whether the two agree', () => {
    const [ok, bad] = [rows[0]?.q, rows[1]?.q] as ObservedQueue[];
    expect(observationWords(observation([ok as ObservedQueue], { unchanged: 3 }))).toBe(
      'Observed, read after the write until 12:00:08 UTC (the statistics lag the broker by a few seconds): predicted and observed agree (3 other queues unchanged).',
    );
    expect(
      observationWords(observation([ok as ObservedQueue, bad as ObservedQueue], { cutShort: true })),
    ).toBe(
      'Observed, read after the write until 12:00:08 UTC (the statistics lag the broker by a few seconds), cut short at the deadline: some numbers may not have settled: predicted and observed DIFFER for 1 queue.',
    );
    expect(
      inShowingOrder(observation([ok as ObservedQueue, bad as ObservedQueue])).map((q) => q.name),
    ).toEqual(['b', 'a']);
  });
});

describe('the queues watched', () => {
  const object = (
    name: string,
    kind: PreviewObject['kind'],
    messages: number | null,
    impact: PreviewObject['impact'],
  ) =>
    ({
      name,
      kind,
      now: messages === null ? null : { ...liveQueue(messages), sampledAt: WRITTEN },
      impact,
    }) as PreviewObject;

  it('those with a predicted loss first, then those holding messages or unknown; never exchanges or empty queues', () => {
    const { watched, unwatched } = queuesToWatch([
      object('x', 'exchange', null, []),
      object('empty', 'classic', 0, []),
      object('full', 'classic', 8, []),
      object('unknown', 'quorum', null, [
        { effect: 'may-drop', because: 'max-length', limit: 1, fate: 'lost' },
      ]),
      object('trimmed', 'classic', 50, [
        { effect: 'drop', messages: 40, fate: 'lost', because: 'max-length', limit: 10 },
      ]),
    ]);
    expect(unwatched).toBe(0);
    expect(watched).toEqual([
      { name: 'unknown', kind: 'quorum', messagesBefore: null },
      { name: 'trimmed', kind: 'classic', messagesBefore: 50, predictedRemoved: 40 },
      { name: 'full', kind: 'classic', messagesBefore: 8, predictedRemoved: 0 },
    ]);
  });
});

/** A listing that answers each poll with the next scripted reading (the last one repeats), or fails. */
function scripted(readings: (Record<string, LiveQueue | null> | Error)[]) {
  let i = 0;
  return {
    polls: () => i,
    broker: {
      async *streamQueueStats() {
        const r = readings[Math.min(i, readings.length - 1)];
        i++;
        if (r instanceof Error) throw r;
        for (const [name, q] of Object.entries(r ?? {})) yield { name, live: q };
      },
    },
  };
}

describe('the poll after the write', () => {
  const trimmed: WatchedQueue = { name: 'q', kind: 'classic', messagesBefore: 50, predictedRemoved: 40 };
  const plan = { watched: [trimmed], unwatched: 0, sampledBefore: WRITTEN };
  const fast = { deadlineMs: 2_000, minMs: 0, intervalMs: 10 };

  it('lagging statistics: polled until they show the removal', async () => {
    const s = scripted([{ q: liveQueue(50) }, { q: liveQueue(50) }, { q: liveQueue(10) }]);
    const o = await observeAfterWrite(s.broker, 'v', plan, new Date(), fast);
    expect(s.polls()).toBe(3);
    expect(o.cutShort).toBeUndefined();
    expect(o.queues).toEqual([{ ...trimmed, messagesAfter: 10 }]);
    expect(differences(o)).toEqual([]);
  });

  it('never settling: cut short at the deadline, and the difference said', async () => {
    const s = scripted([{ q: liveQueue(50) }]);
    const o = await observeAfterWrite(s.broker, 'v', plan, new Date(), { ...fast, deadlineMs: 200 });
    expect(o.cutShort).toBe(true);
    expect(differences(o).map((q) => q.name)).toEqual(['q']);
    expect(observationWords(o)).toContain('cut short at the deadline');
  });

  it('statistics that cannot be read: the numbers after are unknown, and why is said', async () => {
    const s = scripted([new Error('connect ECONNREFUSED')]);
    const o = await observeAfterWrite(s.broker, 'v', plan, new Date(), { ...fast, deadlineMs: 100 });
    expect(o.unreadable).toContain('ECONNREFUSED');
    expect(o.queues).toEqual([trimmed]);
    expect(observationWords(o)).toContain('the statistics could not be read');
  });

  it('a queue whose numbers did not move, nothing predicted: counted, not listed', async () => {
    const still: WatchedQueue = { name: 'still', kind: 'classic', messagesBefore: 3, predictedRemoved: 0 };
    const s = scripted([{ q: liveQueue(10), still: liveQueue(3) }]);
    const o = await observeAfterWrite(
      s.broker,
      'v',
      { ...plan, watched: [trimmed, still] },
      new Date(),
      fast,
    );
    expect(o.queues.map((q) => q.name)).toEqual(['q']);
    expect(o.unchanged).toBe(1);
  });
});

describe('in the record, history and the Applied post', () => {
  const record: ChangeRecord = ChangeRecordSchema.parse({
    id: 'a-r-1',
    at: at(9),
    env: 'prod',
    vhost: '/',
    policy: 'cap',
    operator: false,
    action: 'create',
    requester: { user: 'U0ASKER', reason: 'disk' },
    approver: { user: 'U0APPROVER', reason: 'ok' },
    appliedAt: at(9),
    before: null,
    after: { pattern: '^q', applyTo: 'queues', priority: 0, definition: { 'max-length': 10 } },
    objects: [],
    unpredictable: 0,
    matchedPreview: true,
    impact: { messagesDeadLettered: 0, messagesLost: 40, queuesDeleted: 0, queuesRefusingPublishes: 0 },
    observed: observation([
      { name: 'q', kind: 'classic', messagesBefore: 50, predictedRemoved: 40, messagesAfter: 10 },
      { name: 'lagged', kind: 'quorum', messagesBefore: 7, predictedRemoved: 0, messagesAfter: 5 },
    ]),
    prev: '',
    hash: 'x',
  });

  it('the schema keeps the fields (the seal covers them)', () => {
    expect(record.observed?.queues).toHaveLength(2);
    expect(record.impact?.messagesLost).toBe(40);
  });

  it('history says both, the difference first', () => {
    const text = historyText({ entries: [record], unreadable: 0 });
    expect(text).toContain('  Predicted, as the approvers accepted it: 40 messages lost.');
    expect(text).toContain('predicted and observed DIFFER for 1 queue.');
    expect(text.indexOf('"lagged"')).toBeLessThan(text.indexOf('"q"'));
  });

  it('the Applied post says both', () => {
    const shown = renderedText(auditView(record) as never);
    expect(shown).toContain('*Predicted, as the approvers accepted it: 40 messages lost.*');
    expect(shown).toContain(
      '• `lagged`: 7 messages before, 5 messages after (predicted 7 messages) — DIFFERS from the prediction',
    );
    expect(shown).toContain('• `q`: 50 messages before, 10 messages after (predicted 10 messages)');
  });
});
