import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { adminClient, waitFor } from '../support/broker.ts';
import type { FakeUpload, RecordedCall } from '../support/fakeSlack.ts';
import { type Harness, mentionEnvelope, renderedText, startHarness } from '../support/harness.ts';

/**
 * `/rmq preview …` and `@rmq preview …` against the real broker holding the policies lab, as
 * Slack calls them: the answer in the channel (or thread); a list longer than a message allows
 * as a summary plus the full list uploaded as a file beside it (files.uploadV2 against the fake
 * Slack); refusals to the asker alone; an upload Slack refuses told to the asker, never
 * silently. Nothing here writes to the broker: every broker call goes through the counting
 * proxy, and none of them is a write.
 */

let h: Harness;
const admin = adminClient();

/** 40 queues no policy governs: a policy over them changes more objects than a message lists. */
const FLEET = Array.from({ length: 40 }, (_, i) => `fleet.${String(i).padStart(2, '0')}`);
const PREVIEW_FLEET = `preview create fleet-ttl --pattern '^fleet\\.' --definition '{"message-ttl": 60000}'`;
const LAB_POLICIES = [
  'audit-fallback',
  'audit-retention',
  'billing-a',
  'billing-b',
  'orders-ae',
  'orders-cap',
].sort();

beforeAll(async () => {
  h = await startHarness({ withDownEnvironment: true });
  for (let i = 0; i < FLEET.length; i += 10) {
    await Promise.all(
      FLEET.slice(i, i + 10).map((name) => admin.putQueue(h.vhost, name, { kind: 'classic' })),
    );
  }
}, 180_000);
afterAll(async () => {
  await h?.stop();
  await admin.close();
});
afterEach(() => {
  expect(h.slack.rejections()).toEqual([]);
});

/** Requests the app has finished (answer, file and any notice handed to Slack). */
const done = () => h.logs.filter((l) => l.includes('"msg":"request done"')).length;
async function settled(before: number): Promise<void> {
  await waitFor(() => done() > before, { deadlineMs: 30_000, intervalMs: 25, what: 'the request to finish' });
}
/** Calls received after the first `mark` calls. */
const since = (mark: number): RecordedCall[] => h.slack.calls.slice(mark);
const fileCalls = (calls: RecordedCall[]) =>
  calls.filter((c) => c.kind === 'upload' || c.method.startsWith('files.'));
const nextCall = (mark: number, match: (c: RecordedCall) => boolean, what: string) =>
  h.slack.waitForCall((c) => h.slack.calls.indexOf(c) >= mark && match(c), { what });

function uploadOf(complete: RecordedCall): FakeUpload {
  const [file] = complete.args.files as { id: string }[];
  const upload = h.slack.uploads().find((u) => u.id === file?.id);
  if (!upload) throw new Error(`no upload ${file?.id}`);
  return upload;
}

function expectEveryFleetQueue(upload: FakeUpload): void {
  expect(upload.completed).toBe(true);
  expect(upload.filename).toBe('preview-create-fleet-ttl.csv');
  const rows = (upload.content ?? '').trim().split('\n');
  expect(rows[0]).toBe('name,kind,before,after,tie_candidates,lost,gained,changed,risks,unpredictable_why');
  expect(rows).toHaveLength(1 + FLEET.length);
  for (const name of FLEET) {
    expect(rows).toContain(`${name},classic,(none),fleet-ttl,,,message-ttl=60000,,,`);
  }
}

const brokerWrites = () => h.proxy.requests.filter((r) => r.method !== 'GET' && r.method !== 'HEAD');

describe('/rmq preview', () => {
  it('delete: answers in the channel, naming the object, what it loses and what governs after', async () => {
    const before = done();
    const mark = h.slack.calls.length;
    const { response, responseUrl } = await h.command(`preview delete audit-retention --vhost ${h.vhost}`);
    expect(response.status).toBe(200);
    const answer = await h.answerTo(responseUrl);
    expect(answer.args.response_type).toBe('in_channel');
    const shown = renderedText(answer.args).replaceAll(h.vhost, 'VHOST');
    expect(shown).toMatch(/\*Preview:\* delete policy `audit-retention` in vhost `VHOST`/);
    expect(shown).toMatch(/\*1\* would lose a dead-letter target \(`dead-letter-exchange`\): `orders.audit`/);
    expect(shown).toMatch(
      /• `orders.audit` _\(classic queue\)_ → `audit-fallback` — loses `dead-letter-exchange`/,
    );
    expect(String(answer.args.text)).toBe(
      'Preview of delete audit-retention: 1 object would lose a dead-letter target.',
    );
    await settled(before);
    // Short enough for one message: no file.
    expect(fileCalls(since(mark))).toEqual([]);
    expect(h.slack.responsesTo(responseUrl)).toHaveLength(1);
  });

  it('a list longer than a message allows: the summary in the channel, every object in a file', async () => {
    const mark = h.slack.calls.length;
    const { responseUrl } = await h.command(`${PREVIEW_FLEET} --vhost ${h.vhost}`);
    const answer = await h.answerTo(responseUrl);
    expect(answer.args.response_type).toBe('in_channel');
    const shown = renderedText(answer.args);
    expect(shown).toMatch(/\*What happens\* \(40 objects change\)/);
    expect(shown).toMatch(/the full list of objects is in the attached file/);
    // The message lists some names, not all: the file carries them.
    expect(FLEET.filter((n) => shown.includes(`\`${n}\``)).length).toBeLessThan(FLEET.length);

    const complete = await nextCall(
      mark,
      (c) => c.method === 'files.completeUploadExternal' && c.ok,
      'the file to be shared',
    );
    expect(complete.args.channel_id).toBe('C0INCIDENT');
    expect(complete.args.thread_ts).toBeUndefined();
    expect(h.slack.calls.indexOf(complete)).toBeGreaterThan(h.slack.calls.indexOf(answer));
    const upload = uploadOf(complete);
    expectEveryFleetQueue(upload);
    expect(upload.title).toBe('Preview of create fleet-ttl: every object');
    const [start] = since(mark).filter((c) => c.method === 'files.getUploadURLExternal');
    expect(start?.args).toMatchObject({
      filename: 'preview-create-fleet-ttl.csv',
      length: String(Buffer.byteLength(upload.content ?? '')),
    });
    expect(start?.headers.authorization).toBe(`Bearer ${h.slack.botToken}`);
  });

  it('refuses bad input to the asker with what to fix, and writes nothing', async () => {
    const writesBefore = brokerWrites().length;
    const cases: [string, RegExp][] = [
      [
        `preview create p --pattern '^orders\\.' --definition '{bad' --vhost ${h.vhost}`,
        /:warning: --definition is not valid JSON/,
      ],
      [
        `preview create p --pattern '^orders\\.' --definition '{"max-lenght": 5}' --vhost ${h.vhost}`,
        /\*Refused\* — nothing was previewed or filed:\n• max-lenght is not a policy key .*did you mean max-length\?/,
      ],
      [
        `preview create ${'p'.repeat(256)} --pattern '^orders\\.' --definition '{"max-length": 5}' --vhost ${h.vhost}`,
        /The policy name is 256 bytes; names are at most 255 bytes/,
      ],
    ];
    for (const [text, refusal] of cases) {
      const before = done();
      const mark = h.slack.calls.length;
      const { responseUrl } = await h.command(text);
      const answer = await h.answerTo(responseUrl);
      expect(answer.args.response_type, text).toBe('ephemeral');
      const shown = renderedText(answer.args);
      expect(shown).toMatch(refusal);
      expect(shown).not.toMatch(/Error:|at .*\.ts:\d+/);
      await settled(before);
      expect(fileCalls(since(mark))).toEqual([]);
    }
    expect(brokerWrites().slice(writesBefore)).toEqual([]);
    expect((await admin.listPolicies(h.vhost)).map((p) => p.name).sort()).toEqual(LAB_POLICIES);
  });

  it('says so when the broker cannot be asked, claiming nothing', async () => {
    const { responseUrl } = await h.command('preview delete audit-retention --env down');
    const answer = await h.answerTo(responseUrl);
    expect(answer.args.response_type).toBe('in_channel');
    const shown = renderedText(answer.args);
    expect(shown).toMatch(/Could not preview\* delete of `audit-retention`: the broker could not be reached/);
    expect(shown).toMatch(/Nothing is claimed/);
    expect(shown).not.toMatch(/What hurts|What happens/);
  });

  it('tells the asker when Slack does not take the file, with Slack’s reason', async () => {
    const before = done();
    const mark = h.slack.calls.length;
    h.slack.failNext('files.completeUploadExternal', 'not_in_channel');
    const { responseUrl } = await h.command(`${PREVIEW_FLEET} --vhost ${h.vhost}`);
    await waitFor(() => h.slack.responsesTo(responseUrl).length === 2, {
      deadlineMs: 30_000,
      intervalMs: 25,
      what: 'the answer and the notice of the missing file',
    });
    const [answer, notice] = h.slack.responsesTo(responseUrl);
    expect(answer?.args.response_type).toBe('in_channel');
    expect(renderedText(answer?.args ?? {})).toMatch(/full list of objects is in the attached file/);
    expect(notice?.args).toMatchObject({ response_type: 'ephemeral', replace_original: false });
    const shown = renderedText(notice?.args ?? {});
    expect(shown).toMatch(
      /The full list \(`preview-create-fleet-ttl.csv`\) could not be attached to the answer: Slack answered `not_in_channel`/,
    );
    expect(shown).toMatch(/invite it \(`\/invite @rmq`\)/);
    await settled(before);
    const refused = since(mark).filter((c) => c.method === 'files.completeUploadExternal');
    expect(refused).toHaveLength(1);
    expect(refused[0]).toMatchObject({ ok: false, error: 'not_in_channel' });
    expect(uploadOf(refused[0] as RecordedCall).completed).toBe(false);
  });
});

describe('@rmq preview', () => {
  it('in a thread: answers in that thread and uploads the full list into that thread', async () => {
    const threadTs = '1700000000.000901';
    const mark = h.slack.calls.length;
    const res = await h.mention(
      mentionEnvelope({
        text: `<@${h.slack.botUserId}> ${PREVIEW_FLEET} --vhost ${h.vhost}`,
        threadTs,
        botUserId: h.slack.botUserId,
      }),
    );
    expect(res.status).toBe(200);
    const post = await nextCall(
      mark,
      (c) => c.method === 'chat.postMessage' && c.args.thread_ts === threadTs,
      'the answer in the thread',
    );
    expect(post.args.channel).toBe('C0INCIDENT');
    expect(renderedText(post.args)).toMatch(/the full list of objects is in the attached file/);
    const complete = await nextCall(
      mark,
      (c) => c.method === 'files.completeUploadExternal' && c.ok,
      'the file to be shared',
    );
    expect(complete.args).toMatchObject({ channel_id: 'C0INCIDENT', thread_ts: threadTs });
    expect(h.slack.calls.indexOf(complete)).toBeGreaterThan(h.slack.calls.indexOf(post));
    const upload = uploadOf(complete);
    expect(upload).toMatchObject({ channel_id: 'C0INCIDENT', thread_ts: threadTs });
    expectEveryFleetQueue(upload);
  });

  it('tells the asker in the thread when Slack does not take the file', async () => {
    const threadTs = '1700000000.000902';
    const mark = h.slack.calls.length;
    h.slack.failNext('files.completeUploadExternal', 'not_in_channel');
    await h.mention(
      mentionEnvelope({
        text: `<@${h.slack.botUserId}> ${PREVIEW_FLEET} --vhost ${h.vhost}`,
        threadTs,
        user: 'U0ASKER',
        botUserId: h.slack.botUserId,
      }),
    );
    const notice = await nextCall(
      mark,
      (c) => c.method === 'chat.postEphemeral' && c.args.thread_ts === threadTs,
      'the notice of the missing file',
    );
    expect(notice.args).toMatchObject({ channel: 'C0INCIDENT', user: 'U0ASKER' });
    expect(renderedText(notice.args)).toMatch(
      /could not be attached to the answer: Slack answered `not_in_channel`/,
    );
    const answers = since(mark).filter(
      (c) => c.method === 'chat.postMessage' && c.args.thread_ts === threadTs,
    );
    expect(answers).toHaveLength(1);
  });

  it('refuses bad input to the asker alone, in the thread', async () => {
    const threadTs = '1700000000.000903';
    const mark = h.slack.calls.length;
    await h.mention(
      mentionEnvelope({
        text: `<@${h.slack.botUserId}> preview create p --pattern x --definition '{bad' --vhost ${h.vhost}`,
        threadTs,
        botUserId: h.slack.botUserId,
      }),
    );
    const refusal = await nextCall(
      mark,
      (c) => c.method === 'chat.postEphemeral' && c.args.thread_ts === threadTs,
      'the refusal',
    );
    expect(renderedText(refusal.args)).toMatch(/--definition is not valid JSON/);
    expect(since(mark).filter((c) => c.method === 'chat.postMessage')).toEqual([]);
  });
});

describe('the broker', () => {
  it('was only read, never written, by every preview above', () => {
    expect(h.proxy.requests.length).toBeGreaterThan(0);
    expect(brokerWrites()).toEqual([]);
  });
});
