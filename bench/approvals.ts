/**
 * bench/approvals: two replicas on one Redis, `--requests` change requests decided at once, each
 * Approve clicked and its form submitted on BOTH replicas (a double click across the load
 * balancer): each request must be applied exactly once (one PUT of its policy reaching the
 * broker) and audited exactly once.
 *
 *   npm run bench:approvals [-- --requests 50]
 *
 * The two replicas are two instances of the app (each its own HTTP server, workflow, apply queue
 * client and apply worker, as createBot composes them) in one process, through the e2e harness:
 * the real broker (behind a counting proxy, a lab vhost of its own), the real Redis (a key
 * prefix of its own, removed after), the fake Slack. Printed: requests applied, PUTs per policy,
 * audit records per policy, duplicate decisions refused, and p50/p95/max from the decision
 * submitted to the request applied.
 */

import { AuditTrail } from '../src/audit/trail.ts';
import { isChange } from '../src/audit/types.ts';
import { RequestStore } from '../src/workflow/store.ts';
import { waitFor } from '../test/support/broker.ts';
import type { RecordedCall } from '../test/support/fakeSlack.ts';
import { APPROVALS_CHANNEL, APPROVER, renderedText, startHarness } from '../test/support/harness.ts';
import { buttonValue, clickPayload, type OpenedView, submission } from '../test/support/interactions.ts';
import { benchOptions, quantile } from './options.ts';

const { count } = benchOptions('requests', 50);
const REQUESTER = 'U0REQUESTER';

async function main(): Promise<number> {
  const h = await startHarness({ changes: true, logLevel: 'warn' });
  try {
    const twin = await h.twin();
    const replicas = [h.url, twin.url];
    const store = new RequestStore(h.redis as never, h.keyPrefix);
    const trail = new AuditTrail(h.redis as never, h.keyPrefix);
    const names = Array.from({ length: count }, (_, i) => `bench-approve-${i}`);

    // File the requests (ten at a time), then find each one's message in the approvals channel.
    for (let i = 0; i < names.length; i += 10) {
      await Promise.all(
        names.slice(i, i + 10).map(async (name) => {
          const { responseUrl } = await h.command(
            `create ${name} --pattern ^${name}$ --definition {"max-length": 5} --vhost ${h.vhost} --reason load`,
            { userId: REQUESTER },
          );
          await h.answerTo(responseUrl);
        }),
      );
    }
    const messageOf = (name: string) =>
      h.slack.calls.find(
        (c) =>
          c.ok &&
          c.method === 'chat.postMessage' &&
          c.args.channel === APPROVALS_CHANNEL &&
          renderedText(c.args).includes(name) &&
          JSON.stringify(c.args.blocks ?? []).includes('rmq_request_approve'),
      );
    const messages = await waitFor(
      () => {
        const found = names.map((n) => messageOf(n));
        return found.every((m) => m !== undefined) ? (found as RecordedCall[]) : undefined;
      },
      { deadlineMs: 120_000, intervalMs: 100, what: 'every request in the approvals channel' },
    );
    const requests = messages.map((m, i) => {
      const value = buttonValue(m.args.blocks, 'rmq_request_approve');
      return { name: names[i] as string, id: String(value), ts: String(m.response?.ts) };
    });

    // Decide them all at once: Approve clicked and the form submitted on both replicas.
    const decidedAt = new Map<string, number>();
    const answers: number[] = [];
    await Promise.all(
      requests.flatMap((r) =>
        replicas.map(async (base) => {
          const payload = clickPayload(
            APPROVER,
            { action_id: 'rmq_request_approve', value: r.id },
            { channel: APPROVALS_CHANNEL, ts: r.ts },
            h.slack.responseUrl(),
          );
          await h.interact(payload, base);
          const opened = await waitFor(
            () =>
              h.slack.calls.find(
                (c) => c.method === 'views.open' && c.ok && c.args.trigger_id === payload.trigger_id,
              ),
            { deadlineMs: 60_000, intervalMs: 50, what: `the decision form for ${r.name}` },
          ).catch(() => undefined);
          if (!opened) return; // the replica said the request was already decided
          if (!decidedAt.has(r.id)) decidedAt.set(r.id, Date.now());
          const res = await h.interact(
            submission(APPROVER, opened.args.view as OpenedView, { reason: 'load bench' }),
            base,
          );
          answers.push(res.status);
        }),
      ),
    );

    const applied = await waitFor(
      async () => {
        const states = await Promise.all(requests.map((r) => store.get(r.id)));
        return states.every((s) => s && ['applied', 'failed'].includes(s.state)) ? states : undefined;
      },
      { deadlineMs: 180_000, intervalMs: 200, what: 'every request applied' },
    ).catch(async () => Promise.all(requests.map((r) => store.get(r.id))));
    const appliedAt = new Map<string, number>();
    for (const r of requests) {
      const post = h.slack.calls.find(
        (c) =>
          c.ok &&
          c.method === 'chat.postMessage' &&
          c.args.channel === APPROVALS_CHANNEL &&
          /Applied:/.test(String(c.args.text)) &&
          String(c.args.text).includes(r.name),
      );
      if (post) appliedAt.set(r.id, post.at);
    }
    const records = (await trail.list({ vhost: h.vhost })).filter(isChange);
    const puts = (name: string) =>
      h.proxy.requests.filter(
        (q) => q.method === 'PUT' && q.url.includes(`/api/policies/`) && q.url.endsWith(`/${name}`),
      ).length;
    const appliedOnce = requests.filter((r) => puts(r.name) === 1).length;
    const auditedOnce = requests.filter(
      (r) => records.filter((x) => x.policy === r.name).length === 1,
    ).length;
    const states = new Map<string, number>();
    for (const s of applied) states.set(s?.state ?? 'missing', (states.get(s?.state ?? 'missing') ?? 0) + 1);
    const latencies = requests.flatMap((r) => {
      const a = appliedAt.get(r.id);
      const d = decidedAt.get(r.id);
      return a !== undefined && d !== undefined ? [a - d] : [];
    });
    const fig = (xs: number[]) =>
      xs.length === 0
        ? 'none'
        : `p50 ${quantile(xs, 0.5).toFixed(0)} ms, p95 ${quantile(xs, 0.95).toFixed(0)} ms, max ${Math.max(...xs).toFixed(0)} ms`;
    process.stdout.write(
      [
        `bench/approvals: ${count} change requests, Approve clicked and submitted on both of two replicas (one Redis, real broker, fake Slack)`,
        `  final states: ${[...states].map(([s, n]) => `${n} ${s}`).join(', ')}`,
        `  applied exactly once (one PUT reached the broker): ${appliedOnce}/${count}; audited exactly once: ${auditedOnce}/${count}; audit records in all: ${records.length}`,
        `  decision forms submitted: ${answers.length} (HTTP ${[...new Set(answers)].join('/')}), for ${count * 2} clicks`,
        `  decision -> applied (the audit diff posted): ${fig(latencies)}`,
        `  refused by the fake Slack: ${h.slack.rejections().length}`,
      ].join('\n') + '\n',
    );
    return appliedOnce === count && auditedOnce === count && records.length === count ? 0 : 1;
  } finally {
    await h.stop();
  }
}

process.exitCode = await main();
