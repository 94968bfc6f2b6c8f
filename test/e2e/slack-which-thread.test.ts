import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditTrail } from '../../src/audit/trail.ts';
import type { AuditEntry } from '../../src/audit/types.ts';
import { askInThread, type Harness, startHarness } from '../support/harness.ts';

/**
 * `@rmq which NAME` asked in an incident thread over an hour old: when what governs the object now
 * differs from what governed it when the thread started (replayed from the trail), one line says
 * so, with the change's time, and offers --at; a younger thread, or a channel, gets no such line.
 * The trail is written at chosen times through the bot's own AuditTrail under the harness's key
 * prefix: a snapshot three hours ago without audit-retention, which was created 90 minutes ago.
 * And `which --at` and `policies --at` asked in Slack over that trail: the instant in Slack's date
 * formatting, the answer then, the change around it with what it set, unknown before the snapshot.
 */

let h: Harness;
const NOW = Date.now();
const HOUR = 3_600_000;
const ts = (ms: number) => `${Math.floor(ms / 1000)}.000100`;
const iso = (ms: number) => new Date(ms).toISOString();

beforeAll(async () => {
  h = await startHarness();
  const trail = new AuditTrail(h.redis, h.keyPrefix);
  const fallback = {
    pattern: '^orders\\.',
    applyTo: 'queues',
    priority: 1,
    definition: { 'message-ttl': 3_600_000 },
  };
  const snapshot: AuditEntry = {
    id: 's-lab-thread',
    at: iso(NOW - 3 * HOUR),
    env: 'lab',
    action: 'snapshot',
    why: 'first',
    vhosts: null,
    version: '3.10.8',
    policies: [{ vhost: h.vhost, name: 'audit-fallback', ...fallback }],
    operatorPolicies: [],
  };
  await trail.append(snapshot);
  await trail.append({
    id: 'o-retention',
    at: iso(NOW - 1.5 * HOUR),
    appliedAt: iso(NOW - 1.5 * HOUR),
    env: 'lab',
    vhost: h.vhost,
    policy: 'audit-retention',
    operator: false,
    action: 'outside',
    actor: 'someone',
    detectedBy: 'events',
    before: null,
    after: {
      pattern: '^orders\\.audit$',
      applyTo: 'queues',
      priority: 10,
      definition: { 'dead-letter-exchange': 'audit.dlx' },
    },
    objects: [],
    unpredictable: 0,
  });
});
afterAll(async () => {
  await h?.stop();
});

const ask = (text: string, where: { threadTs?: string; channel: string }) =>
  askInThread(h, text, where, 'orders.audit');

describe('which in an incident thread', () => {
  it('says what governed at the thread start when it differs, since when, and offers --at', async () => {
    const start = NOW - 2 * HOUR;
    const text = await ask(`which orders.audit --vhost ${h.vhost}`, {
      channel: 'C0INCIDENT',
      threadTs: ts(start),
    });
    expect(text).toContain(`At the start of this thread, <!date^${Math.floor(start / 1000)}^`);
    expect(text).toMatch(/: `audit-fallback`[^;]*; since <!date\^\d+\^[^>]*>: `audit-retention`/);
    expect(text).toContain(`|${iso(NOW - 1.5 * HOUR)}>`);
    expect(text).toContain('--at TIME');
  });

  it('says so when the policy in force is the same and its effective values differ', async () => {
    // orders.processing: audit-fallback then and now; the trail's state then has no operator
    // policy, the broker's now has orders-ceiling, which lowers the TTL and caps the length.
    const text = await askInThread(
      h,
      `which orders.processing --vhost ${h.vhost}`,
      { channel: 'C0INCIDENT', threadTs: ts(NOW - 2 * HOUR) },
      'At the start of this thread',
    );
    expect(text).toMatch(
      /At the start of this thread, <!date\^\d+\^[^>]*>: `audit-fallback` \([^)]*message-ttl=`3600000`[^)]*\); now: `audit-fallback` \([^)]*message-ttl=`600000`[^)]*\)/,
    );
  });

  it('says nothing of it in a thread younger than an hour, nor in a channel', async () => {
    const young = await ask(`which orders.audit --vhost ${h.vhost}`, {
      channel: 'C0INCIDENT',
      threadTs: ts(NOW - 30 * 60_000),
    });
    expect(young).not.toContain('At the start of this thread');
    const channel = await ask(`which orders.audit --vhost ${h.vhost}`, { channel: 'C0OPS' });
    expect(channel).not.toContain('At the start of this thread');
  });
});

describe('which --at and policies --at in Slack (issue 39, item 2)', () => {
  const unix = (ms: number) => Math.floor(ms / 1000);

  it('the answer then, its instant in Slack date formatting, and the change around it with what it set', async () => {
    const at = NOW - 2 * HOUR;
    const text = await ask(`which orders.audit --vhost ${h.vhost} --at ${iso(at)}`, { channel: 'C0OPS' });
    expect(text).toContain(`At <!date^${unix(at)}^`);
    expect(text).toContain('recomputed from the trail; the broker cannot be asked about the past');
    expect(text).toContain('`audit-fallback`');
    expect(text).toContain(
      'created policy `audit-retention`, outside the bot by `someone`: set pattern `^orders\\.audit$`',
    );
  });

  it('before the first snapshot: the bot was not watching, unknown', async () => {
    const text = await askInThread(
      h,
      `which orders.audit --vhost ${h.vhost} --at ${iso(NOW - 4 * HOUR)}`,
      { channel: 'C0OPS' },
      'unknown',
    );
    expect(text).toContain('The bot was not watching: unknown.');
    expect(text).toContain(`It has watched this environment since <!date^${unix(NOW - 3 * HOUR)}^`);
  });

  it('policies then', async () => {
    const text = await askInThread(
      h,
      `policies --vhost ${h.vhost} --at ${iso(NOW - HOUR)}`,
      { channel: 'C0OPS' },
      'recomputed',
    );
    expect(text).toContain('recomputed from the trail');
    expect(text).toContain('audit-retention');
    expect(text).toContain('audit-fallback');
  });
});
