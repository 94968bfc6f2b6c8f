import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { brokerUrl, waitFor } from '../support/broker.ts';
import { type Harness, renderedText, startHarness } from '../support/harness.ts';

/**
 * A broker that takes connections and never answers, asked 100 questions at once: each is
 * answered within its budget (RMQ_TIMEOUT, here 2 s) that the broker did not answer in time;
 * none waits for a pool slot, a header timeout or a retry beyond it.
 */

let h: Harness;

beforeAll(async () => {
  h = await startHarness({ lab: false, questionBudget: '2s', logLevel: 'info' });
});
afterAll(async () => {
  h.proxy.setFallback({ kind: 'proxy', target: brokerUrl() });
  await h?.stop();
});

describe('100 questions to a black-holed broker', () => {
  it('are all answered: the broker did not answer in time', async () => {
    h.proxy.setFallback({ kind: 'hang' });
    const sent = await Promise.all(
      Array.from({ length: 100 }, (_, i) => h.command(`which q${i} --vhost ${h.vhost}`)),
    );
    expect(sent.map((s) => s.response.status)).toEqual(Array(100).fill(200));
    // Every answer within the waitFor deadline (20 s), ten times the budget; none lost.
    const answers = await Promise.all(sent.map((s) => h.answerTo(s.responseUrl)));
    for (const a of answers) expect(renderedText(a.args)).toMatch(/did not answer in time/);
    // Counted once Slack took the answer, so just after the fake saw it: polled, not read at once.
    const notAsked = async () =>
      (await h.metrics.requests.get()).values
        .filter((v) => v.labels.outcome === 'not-asked')
        .reduce((n, v) => n + v.value, 0);
    await waitFor(async () => (await notAsked()) >= 100, { deadlineMs: 10_000, what: '100 counted' });
    expect(await notAsked()).toBe(100);
    expect(h.slack.rejections()).toEqual([]);
  });
});
