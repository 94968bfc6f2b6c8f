/**
 * bench/load: one bot process under a burst of Slack commands, against the real broker.
 *
 *   npm run bench:load [-- --commands 200] [--broker http://127.0.0.1:15672]
 *
 * The compiled bot (`dist/main.js`, built first from the current sources) runs as its own
 * process in HTTP mode, on the real broker (a lab vhost of its own, removed after) and Redis,
 * with Slack's Web API and response URLs answered by the local fake (test/support/fakeSlack.ts).
 * `--commands` signed `/rmq which orders.audit` requests are sent at once, each with its own
 * response URL. Printed: how many were acknowledged (HTTP 200) within Slack's 3 s, how many
 * answers reached their response URL and named the policy in force, and p50/p95/max of both
 * times, from the moment the burst was sent. Exit code 1 when one was late, missing or wrong.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { build } from '../scripts/build.ts';
import { setUpLab } from '../scripts/lab.ts';
import { LabClient } from '../src/rabbit/lab.ts';
import { type BotProcess, spawnBot } from '../test/support/botProcess.ts';
import { waitFor } from '../test/support/broker.ts';
import { startFakeSlack } from '../test/support/fakeSlack.ts';
import { commandForm, renderedText, signed } from '../test/support/harness.ts';
import { benchOptions, quantile } from './options.ts';

const { count, brokerUrl, user, password } = benchOptions('commands', 200);
const ACK_DEADLINE_MS = 3000;
const ANSWER_DEADLINE_MS = 60_000;

const figures = (xs: readonly number[]) =>
  `p50 ${quantile(xs, 0.5).toFixed(0)} ms, p95 ${quantile(xs, 0.95).toFixed(0)} ms, max ${Math.max(...xs).toFixed(0)} ms`;

async function main(): Promise<number> {
  const { outdir } = await build();
  const admin = new LabClient({ url: brokerUrl, user, password });
  const vhost = `rmq-bench-load-${process.pid}`;
  const slack = await startFakeSlack();
  const signingSecret = randomBytes(16).toString('hex');
  let bot: BotProcess | undefined;
  try {
    await setUpLab(admin, vhost);
    // The broker's statistics lag: start once it reports the lab queue's policy.
    await waitFor(async () => (await admin.getQueue(vhost, 'orders.audit'))?.policy === 'audit-retention', {
      deadlineMs: 60_000,
      intervalMs: 500,
      what: 'the broker to report orders.audit',
    });
    bot = spawnBot(join(outdir, 'main.js'), {
      RMQ_URL: brokerUrl,
      RMQ_USER: user,
      RMQ_PASSWORD: password,
      REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
      SLACK_BOT_TOKEN: slack.botToken,
      SLACK_SIGNING_SECRET: signingSecret,
      SLACK_API_URL: slack.apiUrl,
      PORT: '0',
      LOG_LEVEL: 'info',
    });
    const url = `http://127.0.0.1:${await bot.listening()}/slack/events`;
    // One request first, so the burst measures the bot and not its first connection to the broker.
    const warm = slack.responseUrl();
    const w = signed(
      signingSecret,
      commandForm({ text: `which orders.audit --vhost ${vhost}`, responseUrl: warm }),
      'application/x-www-form-urlencoded',
    );
    await fetch(url, { method: 'POST', headers: w.headers, body: w.body });
    await waitFor(() => slack.responsesTo(warm).length > 0, {
      deadlineMs: 30_000,
      intervalMs: 20,
      what: 'the warm-up answer',
    });

    const requests = Array.from({ length: count }, () => {
      const responseUrl = slack.responseUrl();
      const body = commandForm({ text: `which orders.audit --vhost ${vhost}`, responseUrl });
      return { responseUrl, ...signed(signingSecret, body, 'application/x-www-form-urlencoded') };
    });
    const sentAt = Date.now();
    const acks = await Promise.all(
      requests.map(async (r) => {
        try {
          const res = await fetch(url, {
            method: 'POST',
            headers: r.headers,
            body: r.body,
            signal: AbortSignal.timeout(30_000),
          });
          await res.arrayBuffer();
          return { status: res.status, ms: Date.now() - sentAt };
        } catch (err) {
          return { status: 0, ms: Date.now() - sentAt, error: String(err) };
        }
      }),
    );
    await waitFor(() => requests.every((r) => slack.responsesTo(r.responseUrl).length > 0), {
      deadlineMs: ANSWER_DEADLINE_MS,
      intervalMs: 50,
      what: 'every answer',
    }).catch(() => undefined);
    const answers = requests.map((r) => slack.responsesTo(r.responseUrl)[0]);
    const delivered = answers.filter((a) => a !== undefined);
    const right = delivered.filter((a) => /audit-retention/.test(renderedText(a.args)));

    const ackOk = acks.filter((a) => a.status === 200 && a.ms <= ACK_DEADLINE_MS);
    process.stdout.write(
      [
        `bench/load: ${count} signed "/rmq which orders.audit" sent at once to one bot process (compiled), real broker ${brokerUrl}, Redis, fake Slack`,
        `  acknowledged (HTTP 200) within 3 s: ${ackOk.length}/${count}   ack ${figures(acks.map((a) => a.ms))}`,
        `  answers delivered: ${delivered.length}/${count}, naming the policy in force: ${right.length}/${count}   answer ${figures(delivered.map((a) => a.at - sentAt))}`,
        `  refused by the fake Slack: ${slack.rejections().length}`,
      ].join('\n') + '\n',
    );
    const failures = acks.filter((a) => a.status !== 200);
    if (failures.length > 0) process.stdout.write(`  first failure: ${JSON.stringify(failures[0])}\n`);
    return ackOk.length === count && right.length === count && slack.rejections().length === 0 ? 0 : 1;
  } finally {
    if (bot) {
      bot.child.kill('SIGTERM');
      await bot.exited;
    }
    await slack.close();
    await admin.deleteVhost(vhost);
    await admin.close();
  }
}

process.exitCode = await main();
