/**
 * One team's vhosts on a shared broker (issue 30): environment `lab` limited to the harness's vhost
 * (`vhosts:` in the environments file, as RMQ_VHOSTS). Questions and changes about that vhost are
 * answered; any other vhost of the same broker is refused with the sentence naming the list,
 * before the broker is asked, and nothing is filed, posted or written.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminClient, uniqueName } from '../support/broker.ts';
import { APPROVALS_CHANNEL, type Harness, renderedText, startHarness } from '../support/harness.ts';

let h: Harness;
const admin = adminClient();
/** A vhost of the same broker that is not the team's (another team's, on a shared broker). */
const theirs = uniqueName('slack-theirs');
const REQUESTER = 'U0REQUESTER';

beforeAll(async () => {
  await admin.putVhost(theirs);
  h = await startHarness({
    changes: true,
    labRules: (vhost) => `vhosts: [${JSON.stringify(vhost)}]`,
    logLevel: process.env.TEST_LOG_LEVEL ?? 'warn',
  });
}, 120_000);

afterAll(async () => {
  await h?.stop();
  await admin.deleteVhost(theirs);
  await admin.close();
});

const limited = () =>
  `Environment lab is limited to the vhost "${h.vhost}": vhost "${theirs}" is not one of them, so nothing was asked or changed there.`;

describe('an environment limited to its vhosts', () => {
  it('answers about its vhost, and refuses another one naming the list, without asking the broker', async () => {
    const ours = await h.command(`which orders.audit --vhost ${h.vhost}`);
    expect(renderedText((await h.answerTo(ours.responseUrl)).args)).toMatch(/audit-retention/);
    for (const words of [
      `which orders.audit --vhost ${theirs}`,
      `policies --vhost ${theirs}`,
      `preview delete audit-retention --vhost ${theirs}`,
    ]) {
      const asked = h.proxy.requests.length;
      const { responseUrl } = await h.command(words);
      const answer = await h.answerTo(responseUrl);
      expect(renderedText(answer.args), words).toContain(limited());
      expect(h.proxy.requests.slice(asked), words).toEqual([]);
    }
  });

  it('refuses a change request in another vhost: nothing filed, posted or written', async () => {
    const mark = h.slack.calls.length;
    const asked = h.proxy.requests.length;
    const { responseUrl } = await h.command(`delete billing-b --vhost ${theirs} --reason x`, {
      userId: REQUESTER,
    });
    const answer = await h.answerTo(responseUrl);
    expect(answer.args.response_type).toBe('ephemeral');
    expect(renderedText(answer.args)).toContain(limited());
    expect(
      h.slack.calls
        .slice(mark)
        .filter((c) => c.method === 'chat.postMessage' && c.args.channel === APPROVALS_CHANNEL),
    ).toEqual([]);
    expect(h.proxy.requests.slice(asked)).toEqual([]);
  });
});
