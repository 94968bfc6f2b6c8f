/**
 * `which --at` and `policies --at` against what the broker said at the time, through what users
 * run: the bot (`dist/main.js`) watching a vhost of `broker`; a random sequence of changes, filed
 * and approved through the bot (signed Slack requests, the fake Web API), made outside it through
 * the management API, and some while the bot is stopped (a gap); after each settles, the broker's
 * own answer recorded (`policy`, `operator_policy`, `effective_policy_definition` of every queue,
 * `policy` of every exchange, the policy lists). Settled: one message published to each queue
 * after the change and counted in its statistics, so the statistics read were emitted after it.
 * Then, for random instants, `bin/rmq.js which --at` and `policies --at` must agree with what was
 * recorded then, say "unknown" inside the gap (with what the broker said at its start and at its
 * end) and before the first snapshot, and
 * `history --verify` must hold.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { expect } from 'vitest';
import { AuditTrail } from '../../src/audit/trail.ts';
import type { GapRecord, SnapshotRecord } from '../../src/audit/types.ts';
import { type BotProcess, spawnBot } from './botProcess.ts';
import { brokerCredentials, uniqueName, waitFor } from './broker.ts';
import type { TestBroker } from './brokers.ts';
import { built } from './built.ts';
import { runBuiltRmq } from './cli.ts';
import { startFakeSlack } from './fakeSlack.ts';
import { APPROVALS_CHANNEL, APPROVER, type Harness } from './harness.ts';
import { startRedisServer } from './redisServer.ts';
import { requestFlow } from './requestFlow.ts';
import { type Rng, rng } from './rng.ts';
import { signedRequests } from './slackRequests.ts';

const QUEUES = [
  { name: 'orders.a', kind: 'classic' },
  { name: 'orders.q', kind: 'quorum' },
  { name: 'audit.c', kind: 'classic' },
] as const;
const EXCHANGES = ['orders.x', 'audit.x'] as const;
const USER_NAMES = ['p-orders', 'p-wide', 'p-audit'] as const;
const PATTERNS = ['^orders\\.', '^audit\\.', '\\.q$', '.*', '^orders\\.a$', 'x$'] as const;
const APPLY_TO = ['queues', 'exchanges', 'all'] as const;
/**
 * Keys that drop no message (the settle counts them) and delete no queue (an approval would have
 * to acknowledge that): limits far above what is published.
 */
const QUEUE_KEYS = ['max-length', 'message-ttl', 'max-length-bytes'] as const;
const BASE: Record<(typeof QUEUE_KEYS)[number], number> = {
  'max-length': 1000,
  'message-ttl': 3_600_000,
  'max-length-bytes': 10_000_000,
};

interface Fields {
  pattern: string;
  applyTo: string;
  priority: number;
  definition: Record<string, unknown>;
}

/** What the broker said, valid from `from` until `until` (ms). */
interface Observation {
  from: number;
  until: number;
  queues: Record<
    string,
    { policy: string | null; operator: string | null; effective: Record<string, unknown> }
  >;
  exchanges: Record<string, string | null>;
  policies: Record<string, Fields>;
  operatorPolicies: Record<string, Fields>;
}

export interface AtDifferentialRun {
  readonly seed: number;
  readonly steps: number;
}

export async function runAtDifferential(broker: TestBroker, run: AtDifferentialRun): Promise<void> {
  const random = rng(run.seed);
  const { user, password } = brokerCredentials();
  const auth = `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
  const vhost = uniqueName('at');
  const v = encodeURIComponent(vhost);
  const e = encodeURIComponent;
  const api = async (method: string, path: string, body?: unknown): Promise<unknown> => {
    const res = await fetch(new URL(`/api/${path}`, broker.url), {
      method,
      headers: { authorization: auth, 'content-type': 'application/json' },
      signal: AbortSignal.timeout(30_000),
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
    return text ? JSON.parse(text) : null;
  };
  const [{ outdir, bin }, redisServer, slack] = await Promise.all([
    built(),
    startRedisServer(),
    startFakeSlack(),
  ]);
  const cwd = mkdtempSync(join(tmpdir(), 'rmq-at-'));
  const redis = new Redis(redisServer.url, { maxRetriesPerRequest: 1 });
  const trail = new AuditTrail(redis, 'rmq');
  let bot: BotProcess | undefined;
  const began = Date.now();
  const t = (what: string) => {
    if (process.env.AT_TRACE) console.log(`${broker.label} +${Date.now() - began} ms ${what}`);
  };
  try {
    await api('PUT', `vhosts/${v}`, {});
    for (const q of QUEUES)
      await api('PUT', `queues/${v}/${e(q.name)}`, {
        durable: true,
        arguments: q.kind === 'classic' ? {} : { 'x-queue-type': q.kind },
      });
    for (const x of EXCHANGES)
      await api('PUT', `exchanges/${v}/${e(x)}`, { type: 'topic', durable: true, arguments: {} });

    const environments = join(cwd, 'environments.yml');
    writeFileSync(
      environments,
      `environments:\n  - { name: lab, url: "${broker.url}", amqpUrl: "${broker.amqpUrl}", userEnv: LAB_USER, passwordEnv: LAB_PASSWORD, approvers: [${APPROVER}], approvalsChannel: ${APPROVALS_CHANNEL}, vhosts: ${JSON.stringify([vhost])} }\n`,
    );
    const signingSecret = `at-${run.seed}-secret`;
    const env: Record<string, string> = {
      HOME: cwd,
      RMQ_ENVIRONMENTS: environments,
      LAB_USER: user,
      LAB_PASSWORD: password,
      SLACK_BOT_TOKEN: slack.botToken,
      SLACK_SIGNING_SECRET: signingSecret,
      SLACK_API_URL: slack.apiUrl,
      REDIS_URL: redisServer.url,
      PORT: '0',
      LOG_LEVEL: process.env.AT_TRACE ? 'debug' : 'info',
    };
    const policies = new Map<string, Fields>();
    const operators = new Map<string, Fields>();
    const fields = (r: Rng, operator: boolean): Fields => {
      const key = r.pick(operator ? (['max-length', 'message-ttl'] as const) : QUEUE_KEYS);
      return {
        pattern: r.pick(PATTERNS),
        applyTo: operator ? 'queues' : r.pick(APPLY_TO),
        priority: r.int(4),
        definition: { [key]: BASE[key] + r.int(500) },
      };
    };
    const putOutside = async (operator: boolean, name: string, f: Fields | null) => {
      const path = `${operator ? 'operator-policies' : 'policies'}/${v}/${e(name)}`;
      if (f)
        await api('PUT', path, {
          pattern: f.pattern,
          'apply-to': f.applyTo,
          priority: f.priority,
          definition: f.definition,
        });
      else await api('DELETE', path);
      (operator ? operators : policies)[f ? 'set' : 'delete'](name, f as Fields);
    };
    const outsideChange = async () => {
      const operator = random.chance(0.3);
      const name = operator ? 'op-cap' : random.pick(USER_NAMES);
      const held = (operator ? operators : policies).has(name);
      await putOutside(operator, name, held && random.chance(0.35) ? null : fields(random, operator));
    };

    // Before the bot ever watches: a policy or two, in the first snapshot.
    await putOutside(false, 'p-orders', fields(random, false));
    await putOutside(true, 'op-cap', fields(random, true));
    const beforeWatch = Date.now();

    const bots: BotProcess[] = [];
    const start = async () => {
      bot = spawnBot(join(outdir, 'main.js'), env, cwd);
      bots.push(bot);
      const url = `http://127.0.0.1:${await bot.listening(60_000)}`;
      return signedRequests(url, signingSecret, slack);
    };
    let requests = await start();
    const snapshots = async () =>
      (await trail.list({ env: 'lab' })).filter((r): r is SnapshotRecord => r.action === 'snapshot');
    await waitFor(async () => (await snapshots()).length > 0, {
      deadlineMs: 60_000,
      what: 'the first snapshot',
    });

    const throughBot = async () => {
      const name = random.pick(USER_NAMES);
      const held = policies.get(name);
      const f = fields(random, false);
      const text =
        held && random.chance(0.35)
          ? `delete ${name} --vhost ${vhost} --reason differential`
          : `${held ? 'edit' : 'create'} ${name} --vhost ${vhost} --pattern ${f.pattern} --apply-to ${f.applyTo} --priority ${f.priority} --definition ${JSON.stringify(f.definition)} --reason differential`;
      const flow = requestFlow({ slack, interact: requests.interact } as unknown as Harness);
      const mark = slack.calls.length;
      const { response } = await requests.command(text);
      expect(response.status).toBe(200);
      const request = await flow.approvalMessage(mark);
      const decided = await flow.decide(APPROVER, 'approve', request, 'differential');
      expect(decided.status).toBe(200);
      expect(decided.body, 'the decision form accepted').not.toContain('"errors"');
      const deleting = text.startsWith('delete');
      await waitFor(
        async () => {
          const list = (await api('GET', `policies/${v}`)) as { name: string; definition: unknown }[];
          const found = list.find((p) => p.name === name);
          return deleting ? !found : JSON.stringify(found?.definition) === JSON.stringify(f.definition);
        },
        { deadlineMs: 60_000, what: `${text} applied` },
      );
      // Settled: the apply job has recorded it (after watching the queues, so a moment later).
      await waitFor(
        async () =>
          (await trail.list({ env: 'lab' })).some((r) => 'requestId' in r && r.requestId === request.id),
        { deadlineMs: 60_000, what: `the record of ${request.id}` },
      );
      if (deleting) policies.delete(name);
      else policies.set(name, f);
    };

    // Settled: a message published to each queue after the change shows in its statistics.
    let published = 0;
    const settle = async (): Promise<Omit<Observation, 'from' | 'until'>> => {
      published++;
      for (const q of QUEUES)
        await api('POST', `exchanges/${v}/amq.default/publish`, {
          properties: {},
          routing_key: q.name,
          payload: 'x',
          payload_encoding: 'string',
        });
      const queues = await waitFor(
        async () => {
          // The queues' records (current); 4.x puts the operator policy and the effective
          // definition there too, 3.10 only the policy: then the statistics, checked against it.
          const records = (await api('GET', `queues/${v}?disable_stats=true`)) as Record<string, unknown>[];
          const out: Observation['queues'] = {};
          for (const q of QUEUES) {
            const d = (await api('GET', `queues/${v}/${e(q.name)}`)) as Record<string, unknown>;
            if (d.messages !== published) return false;
            const record = records.find((r) => r.name === q.name) ?? {};
            const fromRecord = 'effective_policy_definition' in record;
            // 3.10 counts a quorum queue's messages apart from its statistics: nothing proves
            // those were emitted after the change, so its answer is not recorded there.
            if (!fromRecord && q.kind === 'quorum') continue;
            // 3.10 collects a classic queue's infos (its policies, its bytes) apart from its counts,
            // seconds apart: a count that shows the publish proves nothing of its policies; bytes
            // of the same collection as them do (each message published is one byte).
            if (!fromRecord && d.message_bytes !== published) return false;
            const said = fromRecord ? record : d;
            if (
              ((said.policy as string | undefined) || null) !==
              ((record.policy as string | undefined) || null)
            )
              return false;
            out[q.name] = {
              policy: (said.policy as string | undefined) || null,
              operator: (said.operator_policy as string | undefined) || null,
              effective: (said.effective_policy_definition as Record<string, unknown> | undefined) ?? {},
            };
          }
          return out;
        },
        {
          deadlineMs: 60_000,
          intervalMs: 200,
          what: 'every queue to count the message published after the change',
        },
      );
      const exchanges: Observation['exchanges'] = {};
      for (const x of EXCHANGES)
        exchanges[x] = ((await api('GET', `exchanges/${v}/${e(x)}`)) as { policy?: string }).policy ?? null;
      const list = async (path: string) =>
        Object.fromEntries(
          (
            (await api('GET', `${path}/${v}`)) as {
              name: string;
              pattern: string;
              'apply-to': string;
              priority: number;
              definition: Record<string, unknown>;
            }[]
          ).map((p) => [
            p.name,
            { pattern: p.pattern, applyTo: p['apply-to'], priority: p.priority, definition: p.definition },
          ]),
        );
      return {
        queues,
        exchanges,
        policies: await list('policies'),
        operatorPolicies: await list('operator-policies'),
      };
    };

    const observations: Observation[] = [];
    // What the broker said holds from the moment its change was done (the settle only proves it
    // was read after) until the next change begins.
    let changed = Date.now();
    let current = await settle();
    /** `before`: the index of what the broker said when the bot was stopped; the next one is after the gap. */
    let gap: { stopped: number; restarted: number; before: number } | undefined;
    const gapAt = 1 + random.int(Math.max(1, run.steps - 2));
    for (let step = 0; step < run.steps; step++) {
      observations.push({ ...current, from: changed + 300, until: Date.now() });
      if (step === gapAt && bot) {
        // Every replica down (the bot's only one dies), changes made meanwhile, then started again.
        // The watch is known to have held until its last beat (CONTINUITY_DEFAULTS.heartbeatMs, 2 s).
        const last = observations.at(-1);
        if (last) last.until -= 2_500;
        // A beat of the watch after the broker said it (the gap then starts where the broker held
        // it, and its start's answer is that one): the last beat is the gap's start.
        const said = last?.from ?? Date.now();
        await waitFor(async () => Number(await redis.get('rmq:watch:lab:known')) > said, {
          deadlineMs: 15_000,
          intervalMs: 100,
          what: "the watch's beat after the last settle",
        });
        bot.child.kill('SIGKILL');
        await bot.exited;
        const stopped = Date.now();
        t('stopped');
        await outsideChange();
        if (random.chance(0.5)) await outsideChange();
        // Long enough that no beat of the watch spans it (CONTINUITY_DEFAULTS.gapAfterMs, 10 s).
        await waitFor(() => Date.now() - stopped > 11_000, { deadlineMs: 30_000, intervalMs: 200 });
        const restarted = Date.now();
        requests = await start();
        await waitFor(async () => (await trail.list({ env: 'lab' })).some((r) => r.action === 'gap'), {
          deadlineMs: 60_000,
          what: 'the gap recorded',
        });
        gap = { stopped, restarted, before: observations.length - 1 };
      } else if (random.chance(0.5)) await throughBot();
      else await outsideChange();
      changed = Date.now();
      current = await settle();
      t(`step ${step} settled`);
    }
    observations.push({ ...current, from: changed + 300, until: Date.now() });

    // The questions, through the package's bin.
    const cli = (argv: string[]) =>
      runBuiltRmq(bin, [...argv, '--vhost', vhost, '--json'], { ...env, RMQ_TIMEOUT: '20s' }, cwd);
    const iso = (ms: number) => new Date(ms).toISOString();
    const objects = [...Object.keys(observations[0]?.queues ?? {}), ...EXCHANGES];
    const askedAt = async (ms: number, name: string) => {
      const r = await cli(['which', name, '--at', iso(ms)]);
      expect(r.code, r.err).toBe(0);
      return JSON.parse(r.out) as Record<string, unknown> & {
        known: boolean;
        unknownBecause?: string;
        gap: { from: string; to: string } | null;
        inForce: { name: string } | null;
        operatorPolicy: { name: string } | null;
        ambiguous: boolean;
        candidates?: string[];
        effective: Record<string, { value: unknown; from: string }>;
      };
    };

    if (process.env.AT_TRACE) {
      for (const b of bots)
        console.log(
          b
            .output()
            .split('\n')
            .filter((l) => /"level":(4|5)0|outside|audit record|event|own|watch/i.test(l))
            .map((l) => l.slice(0, 300))
            .join('\n'),
        );
      console.log(
        broker.label,
        observations.map((o) => `${iso(o.from)}..${iso(o.until)} ${Object.keys(o.policies).join(',')}`),
      );
      console.log(
        broker.label,
        (await trail.list({ env: 'lab' }))
          .reverse()
          .map(
            (r) =>
              `${r.at} ${r.action}${'policy' in r ? ` ${r.policy}` : ''}${'appliedAt' in r ? ` applied ${r.appliedAt}` : ''}${'between' in r && r.between ? ' (between)' : ''}`,
          ),
      );
    }
    // Every question at once, a few processes at a time: each is a process of its own.
    const questions: (() => Promise<void>)[] = [];
    for (const o of observations) {
      if (o.until - o.from < 400) continue;
      const ms = o.from + 200 + random.int(o.until - o.from - 400);
      const name = random.pick(objects);
      questions.push(async () => {
        const a = await askedAt(ms, name);
        const said = `${name} at ${iso(ms)} (seed ${run.seed}; the broker held ${JSON.stringify(o.policies)} and ${JSON.stringify(o.operatorPolicies)} and said ${JSON.stringify(o.queues[name] ?? o.exchanges[name])})`;
        expect(a.known, `${said}: ${JSON.stringify({ unknownBecause: a.unknownBecause, gap: a.gap })}`).toBe(
          true,
        );
        const q = o.queues[name];
        const reported = q ? q.policy : (o.exchanges[name] ?? null);
        if (a.ambiguous) expect(a.candidates, said).toContain(reported);
        else expect(a.inForce?.name ?? null, said).toBe(reported);
        if (q) {
          expect(a.operatorPolicy?.name ?? null, said).toBe(q.operator);
          if (!a.ambiguous) {
            const ours = Object.fromEntries(
              Object.entries(a.effective)
                .filter(([, x]) => x.from !== 'arguments')
                .map(([k, x]) => [k, x.value]),
            );
            expect(ours, said).toEqual(q.effective);
          }
        }
      });
      questions.push(async () => {
        const p = await cli(['policies', '--at', iso(ms)]);
        expect(p.code, p.err).toBe(0);
        const listed = JSON.parse(p.out) as {
          known: boolean;
          policies: ({ name: string } & Fields)[];
          operatorPolicies: ({ name: string } & Fields)[];
        };
        expect(listed.known).toBe(true);
        const byName = (list: ({ name: string } & Fields)[]) =>
          Object.fromEntries(
            list.map((x) => [
              x.name,
              { pattern: x.pattern, applyTo: x.applyTo, priority: x.priority, definition: x.definition },
            ]),
          );
        expect(byName(listed.policies), `policies at ${iso(ms)}`).toEqual(o.policies);
        expect(byName(listed.operatorPolicies), `operator policies at ${iso(ms)}`).toEqual(
          o.operatorPolicies,
        );
      });
    }
    const pool = async () => {
      for (let next = questions.shift(); next; next = questions.shift()) await next();
    };
    await Promise.all([pool(), pool(), pool()]);
    t('asked');

    // Before the first snapshot: not watching.
    const [first] = (await snapshots()).reverse();
    const early = Math.min(beforeWatch, Date.parse(first?.at ?? '')) - 1000;
    const before = await askedAt(early, random.pick(objects));
    expect(before).toMatchObject({ known: false, unknownBecause: 'not-watching', gap: null, inForce: null });

    // Inside the gap: unknown, from when to when.
    if (gap) {
      const [recorded] = (await trail.list({ env: 'lab' })).filter((r): r is GapRecord => r.action === 'gap');
      expect(recorded).toBeDefined();
      const g = recorded as GapRecord;
      expect(Date.parse(g.from)).toBeLessThanOrEqual(gap.stopped);
      expect(Date.parse(g.to)).toBeGreaterThanOrEqual(gap.restarted);
      const ms = gap.stopped + 500 + random.int(gap.restarted - gap.stopped - 1000);
      const name = random.pick(objects);
      const inside = await askedAt(ms, name);
      expect(inside).toMatchObject({
        known: false,
        unknownBecause: 'gap',
        gap: { from: g.from, to: g.to },
        inForce: null,
      });
      // With what governed at the gap's start and at its end: what the broker said then.
      const edges = (
        inside as unknown as {
          edges: Record<
            'from' | 'to',
            { known: boolean; inForce: string | null; operatorPolicy: string | null; candidates?: string[] }
          >;
        }
      ).edges;
      for (const [side, o] of [
        ['from', observations[gap.before]],
        ['to', observations[gap.before + 1]],
      ] as const) {
        const edge = edges[side];
        const q = o?.queues[name];
        const reported = q ? q.policy : (o?.exchanges[name] ?? null);
        const said = `${name} at the gap's ${side} (seed ${run.seed}; the broker said ${JSON.stringify(q ?? o?.exchanges[name])})`;
        expect(edge.known, said).toBe(true);
        if (edge.candidates) expect(edge.candidates, said).toContain(reported);
        else expect(edge.inForce, said).toBe(reported);
        if (q) expect(edge.operatorPolicy, said).toBe(q.operator);
      }
      const listed = await cli(['policies', '--at', iso(ms)]);
      expect(JSON.parse(listed.out)).toMatchObject({ known: false, policies: [] });
    }

    const verified = await runBuiltRmq(bin, ['history', '--verify'], env, cwd);
    expect(verified.code, verified.out + verified.err).toBe(0);
  } finally {
    if (bot && bot.child.exitCode === null) {
      bot.child.kill('SIGTERM');
      await bot.exited;
    }
    redis.disconnect();
    await Promise.allSettled([redisServer.stop(), slack.close(), api('DELETE', `vhosts/${v}`)]);
    rmSync(cwd, { recursive: true, force: true });
  }
}
