import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminClient, uniqueName } from '../support/broker.ts';
import { sharedFileSince } from '../support/fakeSlack.ts';
import { renderedText } from '../support/harness.ts';
import { type ProcessHarness, startProcessHarness } from '../support/processHarness.ts';

/**
 * `/rmq lint` as Slack calls it (issue 29 item 3), the bot as `npm start` runs it, against the
 * real broker: the lab's surprises in the channel, the worst first, the environment named; a vhost
 * of 150 findings answered within Slack's limits (the fake Slack refuses anything over them), the
 * rest counted and every finding in the attached CSV.
 */

let h: ProcessHarness;
const admin = adminClient();
const many = uniqueName('lint-many');
const MANY = 150;

beforeAll(async () => {
  h = await startProcessHarness();
  await admin.putVhost(many);
  for (let i = 0; i < MANY; i += 25) {
    await Promise.all(
      Array.from({ length: Math.min(25, MANY - i) }, (_, j) => i + j).map(async (n) => {
        const id = String(n).padStart(3, '0');
        // Unanchored: each catches one queue whose name merely contains its pattern.
        await admin.putPolicy('user', {
          vhost: many,
          name: `p-${id}`,
          pattern: `x${id}`,
          applyTo: 'queues',
          priority: n,
          definition: { 'max-length': n + 1 },
        });
        await admin.putQueue(many, `a.x${id}`, { kind: 'classic' });
      }),
    );
  }
}, 180_000);
afterAll(async () => {
  await h?.stop();
  await admin.deleteVhost(many);
  await admin.close();
});

describe('/rmq lint', () => {
  it('the lab: its four surprises in the channel, the errors first, the environment named; no file', async () => {
    const mark = h.slack.calls.length;
    const { responseUrl } = await h.command(`lint --vhost ${h.vhost}`);
    const answer = await h.answerTo(responseUrl);
    expect(answer.args.response_type).toBe('in_channel');
    const shown = renderedText(answer.args);
    expect(shown).toContain(`*Lint of vhost* \`${h.vhost}\``);
    const tie = shown.indexOf('tie · Policies "billing-a" and "billing-b" share priority 5');
    const missing = shown.indexOf(
      'missing-target · Policy "audit-retention" sets dead-letter-exchange to "audit.dlx"',
    );
    const unanchored = shown.indexOf('unanchored · Policy "orders-cap"\'s pattern "orders" has no ^');
    const stream = shown.indexOf('cannot-govern · Policy "audit-fallback" matches 1 object');
    expect(
      [tie, missing, unanchored, stream].every((i) => i >= 0),
      shown,
    ).toBe(true);
    expect(Math.max(tie, missing)).toBeLessThan(Math.min(unanchored, stream));
    expect(shown).toContain('`retry.orders.dlq`');
    expect(shown).toMatch(/environment `lab`/);
    expect(since(mark).filter((c) => c.method.startsWith('files.'))).toEqual([]);
    expect(h.slack.rejections()).toEqual([]);
  });

  it('150 findings: as many as fit in the message, the rest counted, every one in the attached file', async () => {
    const mark = h.slack.calls.length;
    const { responseUrl } = await h.command(`lint --vhost ${many}`);
    const answer = await h.answerTo(responseUrl);
    const shown = renderedText(answer.args);
    expect(shown).toContain(`${MANY} warnings`);
    const counted = /(\d+) of 150 findings shown: every one is in the attached file/.exec(shown);
    expect(counted, shown.slice(-500)).not.toBeNull();
    expect(Number(counted?.[1])).toBeLessThan(MANY);
    const upload = await sharedFileSince(h.slack, mark);
    expect(upload.completed).toBe(true);
    expect(upload.filename).toBe(`lint-${many}.csv`);
    const rows = (upload.content ?? '').trim().split('\n');
    expect(rows[0]).toBe('severity,kind,policy,operator,object_count,objects,why');
    expect(rows).toHaveLength(1 + MANY);
    expect(rows.filter((r) => r.startsWith('warning,unanchored,p-'))).toHaveLength(MANY);
    expect(h.slack.rejections()).toEqual([]);
  });
});

const since = (mark: number) => h.slack.calls.slice(mark);
