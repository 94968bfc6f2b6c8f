/**
 * Changes made outside the bot, end to end: the running app (as createBot composes it) follows the
 * real broker's event exchange; a policy set, edited and cleared through the management API by
 * another broker user is posted to the approvals channel and recorded in the audit trail within
 * 5 s, with that user; /healthz says the events are followed.
 */

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditTrail } from '../../src/audit/trail.ts';
import { isChange } from '../../src/audit/types.ts';
import { ManagementClient } from '../../src/rabbit/client.ts';
import { adminClient, brokerUrl, waitFor, withUser } from '../support/broker.ts';
import { BROKERS } from '../support/brokers.ts';
import { APPROVALS_CHANNEL, type Harness, renderedText, startHarness } from '../support/harness.ts';
import { lengthHistoryHolds, management, messages } from '../support/messages.ts';

let h: Harness;

beforeAll(async () => {
  h = await startHarness({
    changes: true,
    watch: true,
    lab: false,
    logLevel: process.env.TEST_LOG_LEVEL ?? 'warn',
  });
}, 120_000);

afterAll(async () => {
  await h?.stop();
});

const posts = (mark: number) =>
  h.slack.calls
    .slice(mark)
    .filter(
      (c) =>
        c.ok &&
        c.method === 'chat.postMessage' &&
        c.args.channel === APPROVALS_CHANNEL &&
        /changed outside the bot|changes outside the bot/i.test(String(c.args.text)),
    );

describe('a policy changed through the management API', () => {
  it('is posted to the approvals channel and recorded within 5 s, with the acting user; /healthz says events', async () => {
    await waitFor(
      async () => {
        const health = (await (await fetch(`${h.url}/healthz`)).json()) as {
          watch?: { lab?: { mode?: string } };
        };
        return health.watch?.lab?.mode === 'events';
      },
      { deadlineMs: 15_000, what: '/healthz: events followed' },
    );
    await withUser({ tags: ['policymaker'], vhost: h.vhost }, async (someone) => {
      const c = new ManagementClient({ url: brokerUrl(), user: someone.user, password: someone.password });
      const policy = {
        vhost: h.vhost,
        name: 'night-cap',
        pattern: '^orders\\.',
        applyTo: 'queues',
        priority: 9,
        definition: { 'max-length': 100 },
      };
      try {
        const steps: [string, () => Promise<unknown>, RegExp][] = [
          ['set', () => c.putPolicy('user', policy), /created policy `night-cap`/],
          [
            'edited',
            () => c.putPolicy('user', { ...policy, definition: { 'max-length': 7 } }),
            /edited policy/,
          ],
          ['cleared', () => c.deletePolicy('user', h.vhost, 'night-cap'), /deleted policy/],
        ];
        for (const [what, act, said] of steps) {
          const mark = h.slack.calls.length;
          await act();
          const [post] = await waitFor(() => posts(mark).length > 0 && posts(mark), {
            deadlineMs: 5000,
            intervalMs: 50,
            what: `the ${what} posted`,
          });
          const text = renderedText(post?.args ?? {});
          expect(text).toMatch(said);
          expect(text).toContain(`*By* \`${someone.user}\`, seen through the broker's event exchange`);
        }
      } finally {
        await c.close();
      }
      const records = (await new AuditTrail(h.redis as never, h.keyPrefix).list({ vhost: h.vhost }))
        .filter(isChange)
        .filter((r) => r.policy === 'night-cap');
      expect(
        records.map((r) => [r.action, r.actor, r.detectedBy, r.before === null, r.after === null]),
      ).toEqual([
        ['outside', someone.user, 'events', false, true],
        ['outside', someone.user, 'events', false, false],
        ['outside', someone.user, 'events', true, false],
      ]);
      expect((await new AuditTrail(h.redis as never, h.keyPrefix).verify()).ok).toBe(true);
    });
  });
});

describe('a burst of changes through the management API (a definitions import)', () => {
  it('30 policies created at once are one post, every change in its attached file, and 30 audit records', async () => {
    await withUser({ tags: ['policymaker'], vhost: h.vhost }, async (someone) => {
      const c = new ManagementClient({ url: brokerUrl(), user: someone.user, password: someone.password });
      const names = Array.from({ length: 30 }, (_, i) => `import-${String(i).padStart(2, '0')}`);
      const mark = h.slack.calls.length;
      const uploadsBefore = h.slack.uploads().length;
      try {
        await Promise.all(
          names.map((name, i) =>
            c.putPolicy('user', {
              vhost: h.vhost,
              name,
              pattern: `^import-${i}\\.`,
              applyTo: 'queues',
              priority: 1,
              definition: { 'max-length': 10 + i },
            }),
          ),
        );
      } finally {
        await c.close();
      }
      const trail = new AuditTrail(h.redis as never, h.keyPrefix);
      const records = await waitFor(
        async () => {
          const r = (await trail.list({ vhost: h.vhost }))
            .filter(isChange)
            .filter((x) => names.includes(x.policy));
          return r.length === names.length && r;
        },
        { deadlineMs: 20_000, what: 'the 30 outside changes recorded' },
      );
      expect(new Set(records.map((r) => r.policy))).toEqual(new Set(names));
      expect(records.every((r) => r.action === 'outside' && r.before === null)).toBe(true);
      // Posted once the burst ended: one message, its file carrying every change.
      const upload = await waitFor(
        () =>
          h.slack
            .uploads()
            .slice(uploadsBefore)
            .find((u) => u.completed && u.content !== undefined),
        { deadlineMs: 20_000, what: 'the file of the burst' },
      );
      for (const name of names) expect(upload.content).toContain(name);
      const burstPosts = posts(mark);
      expect(burstPosts).toHaveLength(1);
      const text = renderedText(burstPosts[0]?.args ?? {});
      expect(text).toContain('30 policy changes outside the bot');
      expect(text).toContain(`\`${someone.user}\``);
      expect((await trail.verify()).ok).toBe(true);
    });
  });
});

describe('what an outside change did to the messages', () => {
  it('max-length 10 set outside on 30 messages: the post says 20 lost, from the numbers just before the change', async () => {
    const [machine] = BROKERS;
    if (!machine) throw new Error('no test broker');
    const admin = adminClient();
    const api = management(machine, h.vhost);
    const amqp = await messages(machine, h.vhost);
    try {
      await api.queue('loss.outside', 'classic');
      await amqp.publish('loss.outside', 30);
      await lengthHistoryHolds(admin, h.vhost, 'loss.outside', 30);
      const mark = h.slack.calls.length;
      await admin.putPolicy('user', {
        vhost: h.vhost,
        name: 'outside-cap',
        pattern: '^loss\\.outside$',
        applyTo: 'queues',
        priority: 0,
        definition: { 'max-length': 10 },
      });
      const [post] = await waitFor(() => posts(mark).length > 0 && posts(mark), {
        deadlineMs: 15_000,
        intervalMs: 50,
        what: 'the outside change posted',
      });
      const text = renderedText(post?.args ?? {});
      expect(text).toContain(':rotating_light: *What it did to the messages — loss: 20 messages lost*');
      expect(text).toContain(
        '• `loss.outside`: 20 messages removed at once and lost (max-length 10) — no dead-letter exchange',
      );
      expect(text).toContain("Messages as the broker's statistics sampled them just before");
      await admin.deletePolicy('user', h.vhost, 'outside-cap');
    } finally {
      await amqp.close();
      await admin.close();
    }
  }, 60_000);
});
