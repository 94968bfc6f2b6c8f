/**
 * The scheduled lint digest (RMQ_LINT_SCHEDULE, issue 29 item 3) on the built bot, with two
 * replicas on one Redis: every tick of the schedule is one BullMQ job, one post to the approvals
 * channel; a change on the broker between two ticks shows in the next digest, the new finding
 * first, then the one it fixed.
 */
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminClient, waitFor } from '../support/broker.ts';
import { APPROVALS_CHANNEL, type Harness, renderedText, startHarness } from '../support/harness.ts';

let h: Harness;
let twin: Awaited<ReturnType<Harness['twin']>>;
const admin = adminClient();

beforeAll(async () => {
  h = await startHarness({ lintSchedule: '*/3 * * * * *', logLevel: process.env.TEST_LOG_LEVEL ?? 'warn' });
  twin = await h.twin();
}, 120_000);

afterAll(async () => {
  await h?.stop();
  await admin.close();
});

/** The digests the fake Slack took, in order, as their text. */
const digests = () =>
  h.slack
    .posts()
    .filter((c) => c.method === 'chat.postMessage' && renderedText(c.args).includes('Lint digest'))
    .map((c) => ({ channel: c.args.channel, text: renderedText(c.args) }));

describe('the lint digest on a schedule, two replicas', () => {
  it('posts once per tick to the approvals channel; the next digest shows what is new first, then what was fixed', async () => {
    const [first] = await waitFor(() => digests().length > 0 && digests(), {
      deadlineMs: 60_000,
      intervalMs: 200,
      what: 'a first lint digest',
    });
    expect(first?.channel).toBe(APPROVALS_CHANNEL);
    expect(first?.text).toContain(h.vhost);
    expect(first?.text).toContain('first digest, every finding is new');
    expect(first?.text).toMatch(/tie · Policies "billing-a" and "billing-b" share priority 5/);

    // One change, both effects at once: billing-b above billing-a ends their tie and shadows billing-a.
    await admin.putPolicy('user', {
      vhost: h.vhost,
      name: 'billing-b',
      pattern: '^billing\\.',
      applyTo: 'queues',
      priority: 6,
      definition: { 'max-length': 1000 },
    });
    const after = await waitFor(
      () => {
        const changed = digests().find((d) => d.text.includes('1 fixed, ') && d.text.includes('shadowed'));
        return changed ?? false;
      },
      { deadlineMs: 60_000, intervalMs: 200, what: 'a digest after the change' },
    );
    const newAt = after.text.indexOf(':new:');
    const shadowed = after.text.indexOf('shadowed · Policy "billing-a" matches');
    const fixed = after.text.indexOf('*fixed* · tie · Policies "billing-a" and "billing-b"');
    expect(newAt).toBeGreaterThanOrEqual(0);
    expect(shadowed).toBeGreaterThan(newAt);
    expect(fixed).toBeGreaterThan(shadowed);
    expect(after.text).toMatch(/\d+ still there since the last digest: /);
    expect(after.channel).toBe(APPROVALS_CHANNEL);

    // Both replicas stopped: one post for each tick's job, each job done once, none failed.
    await Promise.all([twin.stop(), h.bot.stop(5000)]);
    const queue = new Queue('rmq-lint-digest', {
      connection: { url: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379' },
      prefix: `${h.keyPrefix}:bull`,
    });
    try {
      const counts = await queue.getJobCounts('completed', 'failed', 'active');
      expect(counts.failed).toBe(0);
      expect(counts.active).toBe(0);
      expect(counts.completed).toBeGreaterThanOrEqual(2);
      expect(digests()).toHaveLength(counts.completed ?? -1);
      // One job per tick: the scheduler's job ids carry their tick's time, each tick once.
      const ticks = (await queue.getJobs(['completed'])).map((j) => Number(/:(\d+)$/.exec(j.id ?? '')?.[1]));
      expect(ticks).toHaveLength(counts.completed ?? -1);
      expect(ticks.every((t) => Number.isInteger(t) && t % 3000 === 0)).toBe(true);
      expect(new Set(ticks).size).toBe(ticks.length);
      expect(new Set(digests().map((d) => d.channel))).toEqual(new Set([APPROVALS_CHANNEL]));
    } finally {
      await queue.close();
    }
  }, 180_000);
});
