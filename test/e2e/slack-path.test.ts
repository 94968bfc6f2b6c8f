import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../support/broker.ts';
import { renderedText } from '../support/harness.ts';
import { type ProcessHarness, startProcessHarness } from '../support/processHarness.ts';

/**
 * `/rmq path` through the bot as it ships (dist/main.js) against the real broker holding the
 * policies lab: the lab's payments.inbox holds transient messages, so a restart does not hold,
 * first; the chain and the queue follow; `which` on it ends with the line that points at `path`.
 */

let h: ProcessHarness;

beforeAll(async () => {
  h = await startProcessHarness({ withDownEnvironment: true });
});
afterAll(async () => {
  await h?.stop();
});
afterEach(() => {
  expect(h.slack.rejections()).toEqual([]);
});

describe('/rmq path', () => {
  it('payments.inbox: the failures that do not hold first, with what they lose, then the chain', async () => {
    // Asked until the statistics are out: 3.10 collects the persistent count apart from the count.
    const answer = await waitFor(
      async () => {
        const { response, responseUrl } = await h.command(`path payments.inbox --vhost ${h.vhost}`);
        expect(response.status).toBe(200);
        const a = await h.answerTo(responseUrl);
        return /16 messages, 12 transient/.test(renderedText(a.args)) ? a : undefined;
      },
      { what: 'path to read the statistics of payments.inbox', deadlineMs: 45_000, intervalMs: 1_000 },
    );
    expect(answer.args.response_type).toBe('in_channel');
    const shown = renderedText(answer.args);
    expect(shown).toMatch(/\*Path of classic queue `payments.inbox`\*/);
    expect(shown).toMatch(
      /:x: \*restart\*: 12 transient messages of 16: a durable queue keeps only persistent ones — \*loses 12 now\*/,
    );
    expect(shown.indexOf(':x: *restart*')).toBeLessThan(shown.indexOf(':white_check_mark:'));
    expect(shown).toMatch(/16 messages, 12 transient/);
    expect(shown).toMatch(/the default exchange/);
    expect(String(answer.args.text)).toMatch(/does not hold: restart/);
  });

  it('which payments.inbox ends with the line pointing at path', async () => {
    const { responseUrl } = await h.command(`which payments.inbox --vhost ${h.vhost}`);
    const shown = renderedText((await h.answerTo(responseUrl)).args);
    expect(shown).toMatch(/:warning: 12 transient messages: `path` for the whole chain/);
  });

  it('an environment that cannot be asked: said, nothing claimed', async () => {
    const { responseUrl } = await h.command(`path payments.inbox --vhost ${h.vhost} --env down`);
    const shown = renderedText((await h.answerTo(responseUrl)).args);
    expect(shown).toMatch(/Could not read the path/);
    expect(shown).not.toMatch(/holds|loses/);
  });
});
