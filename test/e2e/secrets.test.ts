/**
 * Secrets never reach a log line, a message, a file or an HTTP answer. The compiled bot
 * (`dist/main.js`, as the image runs it) at LOG_LEVEL=debug, with a broker user of its own whose
 * password is unique, a second environment whose broker refuses the password, and a Redis: a
 * signed `/rmq which`, a preview whose object list goes out as a file, a mention in a thread,
 * help, a refused input, a question to the broker that refuses, a wrongly signed request,
 * /healthz and /metrics, then SIGTERM. Every byte the process wrote to stdout and stderr, every
 * call it made to Slack (arguments and uploaded files; not the token by which the Web API client
 * authenticates, which Slack must get) and every HTTP answer it gave is searched for each configured secret, and for the broker
 * credentials in their Basic-auth form.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setUpLab } from '../../scripts/lab.ts';
import { spawnBot } from '../support/botProcess.ts';
import {
  adminClient,
  brokerCredentials,
  brokerUrl,
  uniqueName,
  waitFor,
  withUser,
} from '../support/broker.ts';
import { built } from '../support/built.ts';
import { type FakeSlack, startFakeSlack } from '../support/fakeSlack.ts';
import {
  APPROVALS_CHANNEL,
  APPROVER,
  commandForm,
  mentionEnvelope,
  signed,
  startHarness,
} from '../support/harness.ts';
import { buttonValue, clickPayload, type OpenedView, submission } from '../support/interactions.ts';
import { clearMainRedis, MAIN_REDIS_URL } from '../support/mainRedis.ts';

const vhost = uniqueName('secrets');
const admin = adminClient();
const cwd = mkdtempSync(join(tmpdir(), 'rmq-secrets-'));
let slack: FakeSlack;

beforeAll(async () => {
  slack = await startFakeSlack();
  await setUpLab(admin, vhost);
  // Enough objects under one policy that the preview's list goes out as a file.
  for (let i = 0; i < 40; i++) await admin.putQueue(vhost, `fleet.${i}`, { kind: 'classic' });
});

afterAll(async () => {
  await Promise.allSettled([slack?.close(), clearMainRedis()]);
  await admin.deleteVhost(vhost);
  await admin.close();
  rmSync(cwd, { recursive: true, force: true });
});

describe('secrets at LOG_LEVEL=debug, the compiled bot', () => {
  it('are in no log line, no message or file sent to Slack, and no HTTP answer', async () => {
    const { outdir } = await built();
    await withUser(
      {
        tags: ['management', 'policymaker'],
        vhost,
        permissions: { configure: '^$', write: '^$', read: '^$' },
      },
      async ({ user, password }) => {
        const signingSecret = `signing-${uniqueName('s')}`;
        const refusedPassword = `refused-${uniqueName('p')}`;
        writeFileSync(
          join(cwd, 'environments.yml'),
          [
            'environments:',
            `  - { name: lab, url: "${brokerUrl()}", userEnv: LAB_USER, passwordEnv: LAB_PASSWORD }`,
            `  - { name: refused, url: "${brokerUrl()}", userEnv: LAB_USER, passwordEnv: REFUSED_PASSWORD }`,
          ].join('\n'),
        );
        const bot = spawnBot(
          join(outdir, 'main.js'),
          {
            RMQ_ENVIRONMENTS: join(cwd, 'environments.yml'),
            LAB_USER: user,
            LAB_PASSWORD: password,
            REFUSED_PASSWORD: refusedPassword,
            REDIS_URL: MAIN_REDIS_URL,
            SLACK_BOT_TOKEN: slack.botToken,
            SLACK_SIGNING_SECRET: signingSecret,
            SLACK_API_URL: slack.apiUrl,
            PORT: '0',
            LOG_LEVEL: 'debug',
          },
          cwd,
        );
        const answers: string[] = [];
        try {
          const port = await bot.listening();
          const url = `http://127.0.0.1:${port}`;
          const post = async (body: string, contentType: string, secret = signingSecret) => {
            const r = signed(secret, body, contentType);
            const res = await fetch(`${url}/slack/events`, {
              method: 'POST',
              headers: r.headers,
              body: r.body,
            });
            answers.push(await res.text());
            return res;
          };
          const command = async (text: string) => {
            const responseUrl = slack.responseUrl();
            const res = await post(commandForm({ text, responseUrl }), 'application/x-www-form-urlencoded');
            expect(res.status).toBe(200);
            return slack.waitForCall((c) => c.path === new URL(responseUrl).pathname, {
              what: `an answer to ${text}`,
            });
          };

          await command(`which orders.audit --vhost ${vhost} --env lab`);
          await command(
            `preview create fleet-ttl --pattern '^fleet\\.' --definition '{"message-ttl": 60000}' --vhost ${vhost} --env lab`,
          );
          await slack.waitForCall((c) => c.method === 'files.completeUploadExternal', {
            what: 'the preview list as a file',
          });
          await command('help');
          await command('which');
          await command(`which orders.audit --vhost ${vhost} --env refused`);
          const threadTs = '1700000000.004200';
          await post(
            JSON.stringify(
              mentionEnvelope({
                text: `<@${slack.botUserId}> which orders.audit --vhost ${vhost} --env lab`,
                threadTs,
                botUserId: slack.botUserId,
              }),
            ),
            'application/json',
          );
          await slack.waitForCall((c) => c.args.thread_ts === threadTs, { what: 'the answer in the thread' });
          const forged = await post(
            commandForm({ text: 'which x', responseUrl: slack.responseUrl() }),
            'application/x-www-form-urlencoded',
            'wrong-secret',
          );
          expect(forged.status).toBe(401);
          for (const path of ['/healthz', '/metrics'])
            answers.push(await (await fetch(`${url}${path}`)).text());
        } finally {
          bot.child.kill('SIGTERM');
        }
        expect(await bot.exited).toBe(0);
        const out = bot.output();

        // The Web API client authenticates with the token (a header, or a `token` argument, as
        // auth.test gets it): that is Slack's to see. Everything else sent is searched.
        const sent = [
          ...slack.calls.map((c) => {
            const { token, ...rest } = c.args;
            if (token !== undefined) expect(c.kind, `a token sent to ${c.method}`).toBe('api');
            return JSON.stringify(rest);
          }),
          ...slack.uploads().map((u) => u.content ?? ''),
        ].join('\n');
        // What is searched is not empty: debug lines, the answers, the refused environment, the file.
        expect(out).toContain('"level":20');
        expect(sent).toContain('audit-retention');
        expect(sent).toMatch(/credentials|refused|not authori[sz]ed|login/i);
        expect(slack.uploads().some((u) => (u.content ?? '').includes('fleet.39'))).toBe(true);
        const secrets = {
          signingSecret,
          botToken: slack.botToken,
          password,
          refusedPassword,
          basicAuth: Buffer.from(`${user}:${password}`).toString('base64'),
          refusedBasicAuth: Buffer.from(`${user}:${refusedPassword}`).toString('base64'),
        };
        for (const [name, secret] of Object.entries(secrets)) {
          expect(out.includes(secret), `${name} in the process output`).toBe(false);
          expect(sent.includes(secret), `${name} in what was sent to Slack`).toBe(false);
          expect(answers.join('\n').includes(secret), `${name} in an HTTP answer`).toBe(false);
        }
      },
    );
  });

  it('are in no log line and no message of the approvals flow: filed, approved on a form, applied', async () => {
    await withUser({ tags: ['administrator'] }, async ({ user, password }) => {
      const h = await startHarness({
        changes: true,
        logLevel: 'debug',
        credentials: async (vhost) => {
          const { user: admin, password: adminPassword } = brokerCredentials();
          const res = await fetch(
            `${brokerUrl()}/api/permissions/${encodeURIComponent(vhost)}/${encodeURIComponent(user)}`,
            {
              method: 'PUT',
              headers: {
                authorization: `Basic ${Buffer.from(`${admin}:${adminPassword}`).toString('base64')}`,
                'content-type': 'application/json',
              },
              body: JSON.stringify({ configure: '.*', write: '.*', read: '.*' }),
            },
          );
          expect(res.status).toBeLessThan(300);
          return { user, password };
        },
      });
      try {
        const mark = h.slack.calls.length;
        const { responseUrl } = await h.command(
          `create secrets-probe --pattern ^secrets-probe$ --definition {"max-length": 5} --vhost ${h.vhost} --reason probe`,
          { userId: 'U0REQUESTER' },
        );
        await h.answerTo(responseUrl);
        const message = await waitFor(
          () =>
            h.slack.calls
              .slice(mark)
              .find(
                (c) =>
                  c.ok &&
                  c.method === 'chat.postMessage' &&
                  c.args.channel === APPROVALS_CHANNEL &&
                  JSON.stringify(c.args.blocks ?? []).includes('rmq_request_approve'),
              ),
          { deadlineMs: 30_000, intervalMs: 25, what: 'the request in the approvals channel' },
        );
        const id = buttonValue(message.args.blocks, 'rmq_request_approve');
        expect(id).toBeDefined();
        const click = clickPayload(
          APPROVER,
          { action_id: 'rmq_request_approve', value: String(id) },
          { channel: APPROVALS_CHANNEL, ts: String(message.response?.ts) },
          h.slack.responseUrl(),
        );
        expect((await h.interact(click)).status).toBe(200);
        const form = await waitFor(
          () => h.slack.calls.slice(mark).find((c) => c.method === 'views.open' && c.ok),
          { deadlineMs: 30_000, intervalMs: 25, what: 'the decision form' },
        );
        await h.interact(submission(APPROVER, form.args.view as OpenedView, { reason: 'checked' }));
        await waitFor(
          () =>
            h.slack.calls
              .slice(mark)
              .find(
                (c) => c.ok && c.args.channel === APPROVALS_CHANNEL && /Applied:/.test(String(c.args.text)),
              ),
          { deadlineMs: 60_000, intervalMs: 50, what: 'the change applied' },
        );

        const logs = h.logs.join('');
        const sent = h.slack.calls
          .map((c) => {
            const { token, ...rest } = c.args;
            if (token !== undefined) expect(c.kind).toBe('api');
            return JSON.stringify(rest);
          })
          .join('\n');
        expect(logs).toContain('"level":20');
        expect(sent).toContain('secrets-probe');
        const secrets = {
          signingSecret: h.signingSecret,
          botToken: h.slack.botToken,
          password,
          basicAuth: Buffer.from(`${user}:${password}`).toString('base64'),
        };
        for (const [name, secret] of Object.entries(secrets)) {
          expect(logs.includes(secret), `${name} in a log line`).toBe(false);
          expect(sent.includes(secret), `${name} in what was sent to Slack`).toBe(false);
        }
      } finally {
        await h.stop();
      }
    });
  });
});
