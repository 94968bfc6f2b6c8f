import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditTrail } from '../../src/audit/trail.ts';
import type { ChangeEntry } from '../../src/audit/types.ts';
import { askInThread, type Harness, startHarness } from '../support/harness.ts';

/**
 * `@rmq history` asked in an incident thread (issue 39, item 3): without --since, the records of the
 * thread's own span (from its first message, `thread_ts`, to now), said in one line; with --since,
 * the window asked for; in a channel, the whole trail as before. Records at chosen times, through
 * the bot's own AuditTrail under the harness's key prefix (removed when it stops).
 */

let h: Harness;
const NOW = Date.now();
const HOUR = 3_600_000;
/** The thread started an hour ago. */
const THREAD_START = NOW - HOUR;
const threadTs = `${Math.floor(THREAD_START / 1000)}.000100`;

const entry = (id: string, at: number): ChangeEntry => ({
  id,
  at: new Date(at).toISOString(),
  env: 'lab',
  vhost: 'orders',
  policy: `policy-${id}`,
  operator: false,
  action: 'edit',
  requester: { user: 'U0ONCALL', reason: `change ${id}` },
  approver: { user: 'U0APPROVER', reason: 'ok' },
  before: { pattern: '^a', applyTo: 'all', priority: 0, definition: { 'message-ttl': 1 } },
  after: { pattern: '^a', applyTo: 'all', priority: 0, definition: { 'message-ttl': 2 } },
  objects: [],
  unpredictable: 0,
});

beforeAll(async () => {
  h = await startHarness();
  const trail = new AuditTrail(h.redis, h.keyPrefix);
  await trail.append(entry('before-thread', NOW - 3 * HOUR));
  await trail.append(entry('in-thread', NOW - 30 * 60_000));
});
afterAll(async () => {
  await h?.stop();
});

const ask = (text: string, where: { threadTs?: string; channel: string }) =>
  askInThread(h, text, where, 'policy-');

describe('history in an incident thread (issue 39, item 3)', () => {
  it("defaults to the thread's own span, and says so in one line", async () => {
    const text = await ask('history', { channel: 'C0INCIDENT', threadTs });
    expect(text).toContain(
      `since this thread started (${new Date(Math.floor(THREAD_START / 1000) * 1000).toISOString()})`,
    );
    expect(text).toContain('Give --since to ask for another window.');
    expect(text).toContain('policy-in-thread');
    expect(text).not.toContain('policy-before-thread');
  });

  it('with --since, the window asked for', async () => {
    const text = await ask('history --since -1d', {
      channel: 'C0INCIDENT',
      threadTs: `${threadTs.slice(0, -1)}2`,
    });
    expect(text).toContain('policy-before-thread');
    expect(text).toContain('policy-in-thread');
    expect(text).not.toContain('since this thread started');
  });

  it('in a channel, the whole trail as before', async () => {
    const text = await ask('history', { channel: 'C0OPS' });
    expect(text).toContain('policy-before-thread');
    expect(text).not.toContain('since this thread started');
  });
});
