import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminClient, uniqueName } from '../support/broker.ts';
import { sharedFileSince } from '../support/fakeSlack.ts';
import { renderedText } from '../support/harness.ts';
import { type ProcessHarness, startProcessHarness } from '../support/processHarness.ts';

/**
 * `/rmq policies` as Slack calls it, against the real broker: the lab's list in the channel, and
 * a vhost of 300 policies answered within Slack's limits (the fake Slack refuses anything over
 * them) with the whole list uploaded beside the message through the delivery helper.
 */

let h: ProcessHarness;
const admin = adminClient();
const big = uniqueName('many');
const MANY = 300;

beforeAll(async () => {
  h = await startProcessHarness();
  await admin.putVhost(big);
  for (let i = 0; i < MANY; i += 25) {
    await Promise.all(
      Array.from({ length: Math.min(25, MANY - i) }, (_, j) => i + j).map((n) =>
        admin.putPolicy('user', {
          vhost: big,
          name: `p-${String(n).padStart(3, '0')}`,
          pattern: n % 4 ? `^q\\.${n}\\.` : `q${n}`,
          applyTo: 'queues',
          priority: n % 60,
          definition: { 'max-length': n + 1, 'message-ttl': (n + 1) * 1000 },
        }),
      ),
    );
  }
}, 180_000);
afterAll(async () => {
  await h?.stop();
  await admin.deleteVhost(big);
  await admin.close();
});

describe('/rmq policies', () => {
  it('the lab: by priority, the unanchored one marked, the tie marked, the operator policy apart; no file', async () => {
    const mark = h.slack.calls.length;
    const { responseUrl } = await h.command(`policies --vhost ${h.vhost}`);
    const answer = await h.answerTo(responseUrl);
    expect(answer.args.response_type).toBe('in_channel');
    const shown = renderedText(answer.args);
    expect(shown.indexOf('`audit-retention`')).toBeLessThan(shown.indexOf('`orders-cap`'));
    expect(shown).toMatch(/`orders-cap` · pattern `orders` _\(unanchored/);
    expect(shown).toMatch(/`billing-a` · :warning: _tie_/);
    expect(shown).toMatch(/\*Operator policies\* \(1\)[\s\S]*`orders-ceiling`/);
    expect(h.slack.calls.slice(mark).filter((c) => c.method.startsWith('files.'))).toEqual([]);
  });

  it('300 policies: the first page in the message within Slack limits, all of them in the attached file', async () => {
    const mark = h.slack.calls.length;
    const { responseUrl } = await h.command(`policies --vhost ${big}`);
    const answer = await h.answerTo(responseUrl);
    const shown = renderedText(answer.args);
    expect(shown).toMatch(/by priority, highest first \(300\)/);
    expect(shown).toMatch(/\d+ of 300 shown: the whole list is in the attached file/);
    expect(shown).toContain('`p-059`');
    const upload = await sharedFileSince(h.slack, mark);
    expect(upload.completed).toBe(true);
    expect(upload.filename).toBe(`policies-${big}.csv`);
    const rows = (upload.content ?? '').trim().split('\n');
    expect(rows).toHaveLength(1 + MANY);
    expect(rows[1]).toMatch(/^policy,59,p-059,/);
    expect(h.slack.rejections()).toEqual([]);
  });
});
