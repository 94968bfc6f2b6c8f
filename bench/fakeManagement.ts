/**
 * A local stand-in for the management API, speaking its shapes, for bench/preview.ts: one vhost
 * of N queues and M policies, whose `policy` field is what the broker would report (worked out
 * by the engine once, at start). The queue listing is rendered once and sent as one body, as the
 * broker does (it builds the whole list before answering), sorted by name as the broker sorts it. The stats listing of the live columns
 * (what the preview reads of what is there now) is another body, rendered once too.
 *
 *   tsx bench/fakeManagement.ts [--queues 100000] [--policies 1000] [--links UPSTREAMS,EXCHANGES,SHOVELS]
 *   -> prints {"url": "...", "vhost": "...", "policies": [...names to delete...]} on one line, then serves
 *
 * Run as a child process, so its CPU and memory stay out of the measured process.
 *
 * It charges what the broker charges (`BROKER_COST`, measured on 4.3.6 at 30,000 queues): every
 * queue listing, narrowed or not, first builds the vhost's whole list of records; each queue given
 * statistics costs more again. The answer waits that long before its headers (a wait, not CPU:
 * the broker's work is not this machine's bench process's), so a listing with statistics costs
 * about five times one without, and a page of the name filter about a tenth of it, as on the
 * broker; `--free` serves at once (the double as it was).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import { effectiveDefinition } from '../src/policy/effective.ts';
import { buildPolicySet, resolve } from '../src/policy/resolve.ts';
import type { ObjectKind, Policy } from '../src/policy/types.ts';
import { type LinksShape, linksPolicies, linksRoutes } from './fakeLinks.ts';
import { pathRoutes } from './fakePath.ts';

export interface FakeVhost {
  readonly vhost: string;
  readonly policies: Policy[];
  readonly operatorPolicies: Policy[];
  readonly queues: {
    name: string;
    type: Exclude<ObjectKind, 'exchange'>;
    arguments: Record<string, unknown>;
    policy: string | null;
    /** The operator policy the broker would report for it. */
    operatorPolicy: string | null;
  }[];
  /** Policies worth deleting in a benchmark: one that governs few queues, one that governs many. */
  readonly narrow: string;
  readonly broad: string;
}

const AREAS = ['orders', 'billing', 'audit', 'events', 'retry'] as const;

/**
 * 100,000 queues over 500 services and 5 areas; 1,000 policies: one per service (priority 10),
 * one per service's orders (20, for 400 of them), audit retention (30, for 98), a broad events
 * cap (15) and a catch-all (0). Mostly anchored literal prefixes, as real vhosts have.
 */
export function makeVhost(
  queueCount: number,
  policyCount: number,
  { lookaround = false, expires = false }: { lookaround?: boolean; expires?: boolean } = {},
): FakeVhost {
  const vhost = 'bench';
  const services = 500;
  const policies: Policy[] = [];
  const add = (
    name: string,
    pattern: string,
    priority: number,
    definition: Record<string, unknown>,
    applyTo = 'queues',
  ) => policies.push({ vhost, name, pattern, applyTo, priority, definition });
  for (let s = 0; s < services && policies.length < policyCount - 2; s++) {
    add(`svc${s}`, `^svc${s}\\.`, 10, { 'dead-letter-exchange': `dlx.${s}`, 'max-length': 10_000 });
  }
  for (let s = 0; s < 400 && policies.length < policyCount - 2; s++) {
    add(`svc${s}-orders`, `^svc${s}\\.orders\\.`, 20, {
      'message-ttl': 3_600_000,
      'dead-letter-exchange': `dlx.${s}`,
    });
  }
  for (let s = 0; policies.length < policyCount - 2; s++) {
    add(`svc${s}-audit`, `^svc${s}\\.audit\\.`, 30, { 'max-length-bytes': 1_000_000_000 }, 'all');
  }
  // With --expires the events cap deletes its queues after an hour unused too: lint then keeps
  // the live numbers of the 20,000 queues it governs (expires-idle).
  add('events-cap', '^svc\\d+\\.events\\.', 15, {
    'max-length': 500,
    overflow: 'reject-publish',
    ...(expires ? { expires: 3_600_000 } : {}),
  });
  add('catch-all', '.*', 0, { 'max-length-bytes': 10_000_000_000 }, 'all');
  // With --lookaround the catch-all is the idiom "everything but the broker's own objects", a
  // negative lookahead only the backtracking engine reads; no bench name starts with "amq.", so
  // every queue reports the same policy as under ".*".
  const served = lookaround
    ? policies.map((p) => (p.name === 'catch-all' ? { ...p, pattern: '^(?!amq\\.)' } : p))
    : policies;
  const operatorPolicies: Policy[] = [
    {
      vhost,
      name: 'ceiling',
      pattern: '.*',
      applyTo: 'queues',
      priority: 0,
      definition: { 'max-length': 1_000_000 },
    },
    {
      vhost,
      name: 'orders-ttl',
      pattern: '^svc\\d+\\.orders\\.',
      applyTo: 'queues',
      priority: 1,
      definition: { 'message-ttl': 86_400_000 },
    },
  ];
  const set = buildPolicySet(policies, operatorPolicies, { major: 3, minor: 10, patch: 8 });
  const queues: FakeVhost['queues'] = [];
  for (let i = 0; i < queueCount; i++) {
    const s = i % services;
    const area = AREAS[Math.floor(i / services) % AREAS.length] as string;
    const type = i % 20 === 0 ? 'stream' : i % 4 === 1 ? 'quorum' : 'classic';
    const args: Record<string, unknown> = type === 'classic' ? {} : { 'x-queue-type': type };
    if (i % 7 === 0 && type === 'classic') args['x-message-ttl'] = 60_000;
    const name = `svc${s}.${area}.${i}`;
    const { user, operator } = resolve(set, name, type);
    queues.push({
      name,
      type,
      arguments: args,
      policy: user.candidates[0]?.name ?? null,
      operatorPolicy: operator.candidates[0]?.name ?? null,
    });
  }
  // In the broker's order: the management API sorts a listing by vhost and name unless asked
  // otherwise (rabbit_mgmt_util's default sort; test/integration/listing-order.test.ts), so the
  // queues of one service come one after another, not interleaved with every other service's.
  queues.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { vhost, policies: served, operatorPolicies, queues, narrow: 'svc7', broad: 'events-cap' };
}

/**
 * What the broker charges per queue of the vhost, in microseconds, before it answers (4.3.6,
 * 30,000 queues, cold cache, 2026-12-05: a filtered page 0.4–0.5 s whatever it finds, the listing
 * without statistics 0.9–2 s of which its body is the rest, the listing with statistics 4.5–13 s).
 */
export const BROKER_COST = { buildUsPerQueue: 15, statsUsPerQueue: 120 } as const;

function policyJson(p: Policy) {
  return {
    vhost: p.vhost,
    name: p.name,
    pattern: p.pattern,
    'apply-to': p.applyTo,
    priority: p.priority,
    definition: p.definition,
  };
}

export async function serve(
  v: FakeVhost,
  port = 0,
  {
    free = false,
    links,
    chainExchanges = 0,
    channels = 0,
  }: { free?: boolean; links?: LinksShape; chainExchanges?: number; channels?: number } = {},
): Promise<{ url: string; close: () => Promise<void> }> {
  // What `path NAME` reads one by one (bench/fakePath.ts).
  const onePath = pathRoutes(v, chainExchanges, channels);
  const enc = encodeURIComponent(v.vhost);
  // Rendered once, like the broker's answer; `policy` left out when there is none, as with disable_stats.
  const queues = Buffer.from(
    JSON.stringify(
      v.queues.map((q) => ({
        arguments: q.arguments,
        durable: true,
        exclusive: false,
        name: q.name,
        ...(q.policy ? { policy: q.policy } : {}),
        type: q.type,
      })),
    ),
  );
  const exchanges = Buffer.from(
    JSON.stringify(
      ['', 'amq.direct', 'amq.fanout', 'amq.topic', 'svc1.orders.in', 'svc2.billing.in'].map((name) => ({
        arguments: {},
        name,
        policy: 'catch-all',
        type: 'direct',
      })),
    ),
  );
  // The live columns (`columns=name,messages,…`), as the stats listing answers them: depths 0–49
  // of 200-byte bodies, every third queue with a consumer.
  const stats = Buffer.from(
    JSON.stringify(
      v.queues.map((q, i) => ({
        consumers: i % 3 === 0 ? 1 : 0,
        idle_since: '2026-12-01 09:00:00',
        message_bytes_ready: (i % 50) * 200,
        messages: i % 50,
        messages_ready: i % 50,
        messages_unacknowledged: 0,
        name: q.name,
      })),
    ),
  );
  const routes = new Map<string, Buffer>([
    ['/api/overview', Buffer.from(JSON.stringify({ rabbitmq_version: '3.10.8', cluster_name: 'bench' }))],
    [`/api/policies/${enc}`, Buffer.from(JSON.stringify(v.policies.map(policyJson)))],
    [`/api/operator-policies/${enc}`, Buffer.from(JSON.stringify(v.operatorPolicies.map(policyJson)))],
    [`/api/queues/${enc}`, queues],
    [`/api/exchanges/${enc}`, exchanges],
    // No upstreams; the federation plugin off (its links endpoint 404s).
    [`/api/parameters/federation-upstream/${enc}`, Buffer.from('[]')],
    [`/api/parameters/federation-upstream-set/${enc}`, Buffer.from('[]')],
    ...(links ? linksRoutes(v.vhost, links) : []),
  ]);
  if (links)
    routes.set(
      `/api/policies/${enc}`,
      Buffer.from(JSON.stringify([...v.policies, ...linksPolicies(v.vhost, links)].map(policyJson))),
    );
  // `columns=name` ("did you mean"): only the names, as the broker answers that query.
  const namesOnly = new Map<string, Buffer>([
    [`/api/queues/${enc}`, Buffer.from(JSON.stringify(v.queues.map((q) => ({ name: q.name }))))],
    [
      `/api/exchanges/${enc}`,
      Buffer.from(
        JSON.stringify(JSON.parse(exchanges.toString()).map((e: { name: string }) => ({ name: e.name }))),
      ),
    ],
  ]);
  // The records and the live columns in one (`columns=name,type,arguments,durable,exclusive,messages,…`).
  const records = new Map(v.queues.map((q) => [q.name, q]));
  const combined = Buffer.from(
    JSON.stringify(
      (JSON.parse(stats.toString()) as { name: string }[]).map((s) => ({
        ...s,
        arguments: records.get(s.name)?.arguments ?? {},
        type: records.get(s.name)?.type,
        durable: true,
        exclusive: false,
      })),
    ),
  );
  // With lint's durability columns too (`…,messages_persistent,members,online,effective_policy_definition,…`):
  // half of each queue's messages persistent, the definition its two policies merge to, a quorum
  // queue's one member online.
  const version = { major: 3, minor: 10, patch: 8 };
  const userByName = new Map(v.policies.map((p) => [p.name, p]));
  const operatorByName = new Map(v.operatorPolicies.map((p) => [p.name, p]));
  const merged = new Map<string, Record<string, unknown>>();
  const mergedOf = (user: string | null, operator: string | null) => {
    const key = `${user}\u0000${operator}`;
    let m = merged.get(key);
    if (!m) {
      const e = effectiveDefinition(
        user === null ? undefined : userByName.get(user)?.definition,
        operator === null ? undefined : operatorByName.get(operator)?.definition,
        version,
      );
      m = Object.fromEntries(Object.entries(e).map(([k, x]) => [k, x.value]));
      merged.set(key, m);
    }
    return m;
  };
  const durabilityRecords = Buffer.from(
    JSON.stringify(
      (JSON.parse(combined.toString()) as { name: string; messages: number }[]).map((s) => {
        const q = records.get(s.name);
        return {
          ...s,
          auto_delete: false,
          messages_persistent: Math.floor(s.messages / 2),
          effective_policy_definition: mergedOf(q?.policy ?? null, q?.operatorPolicy ?? null),
          ...(q?.type === 'quorum' ? { members: ['rabbit@bench'], online: ['rabbit@bench'] } : {}),
        };
      }),
    ),
  );
  // The exchanges with their durability and their own counters (nothing unrouted).
  const exchangesDurable = Buffer.from(
    JSON.stringify(
      (JSON.parse(exchanges.toString()) as Record<string, unknown>[]).map((e) => ({
        ...e,
        durable: true,
        message_stats: { publish_in: 10, publish_out: 10 },
      })),
    ),
  );
  // The name filter (`name` with `use_regex=true`, with `page`): the broker's caseless search,
  // switched back to case-sensitive by a leading `(?-i)` (src/rabbit/listings.ts `queuesFound`).
  const recordRows = JSON.parse(queues.toString()) as { name: string }[];
  const statsRows = JSON.parse(stats.toString()) as { name: string }[];
  const foundPage = (rows: readonly { name: string }[], params: URLSearchParams): string | null => {
    const size = Number(params.get('page_size') ?? '100');
    if (!(size >= 1 && size <= 500)) return null;
    const filter = params.get('name') ?? '';
    const exact = filter.startsWith('(?-i)');
    const regex = new RegExp(exact ? filter.slice('(?-i)'.length) : filter, exact ? '' : 'i');
    const hits = rows.filter((r) => regex.test(r.name));
    const page = Number(params.get('page') ?? '1');
    return JSON.stringify({
      filtered_count: hits.length,
      item_count: Math.min(size, Math.max(0, hits.length - (page - 1) * size)),
      items: hits.slice((page - 1) * size, page * size),
      page,
      page_count: Math.ceil(hits.length / size),
      page_size: size,
      total_count: rows.length,
    });
  };
  const live = new Map<string, Buffer>([[`/api/queues/${enc}`, stats]]);
  const liveRecords = new Map<string, Buffer>([[`/api/queues/${enc}`, combined]]);
  /** How long the broker would take before answering `path` (see BROKER_COST); 0 with `free`. */
  const costMs = (path: string, withStats: number): number => {
    if (free || path !== `/api/queues/${enc}`) return 0;
    return (v.queues.length * BROKER_COST.buildUsPerQueue + withStats * BROKER_COST.statsUsPerQueue) / 1000;
  };
  const server = createServer((req, res) => {
    const [path = '', query = ''] = (req.url ?? '').split('?');
    const params = new URLSearchParams(query);
    const stats = params.get('disable_stats') !== 'true';
    const wait = (ms: number, answer: () => void) => (ms > 0 ? setTimeout(answer, ms) : answer());
    const columns = params.get('columns') ?? '';
    if (path === `/api/queues/${enc}` && params.get('use_regex') === 'true' && params.has('page')) {
      const body = foundPage(columns.includes('messages') ? statsRows : recordRows, params);
      const items = body && stats ? (JSON.parse(body) as { items: unknown[] }).items.length : 0;
      wait(costMs(path, items), () => {
        res.writeHead(body ? 200 : 400, { 'content-type': 'application/json' });
        res.end(body ?? '{"error":"bad_request","reason":"page_size must be between 1 and 500"}');
      });
      return;
    }
    const only =
      columns === 'name'
        ? namesOnly.get(path)
        : columns.includes('messages_persistent') && path === `/api/queues/${enc}`
          ? durabilityRecords
          : columns.includes('durable') && path === `/api/exchanges/${enc}`
            ? exchangesDurable
            : columns.includes('messages')
              ? (columns.includes('arguments') ? liveRecords : live).get(path)
              : undefined;
    const body = only ?? routes.get(path) ?? onePath(path);
    if (!body) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end('{"error":"Object Not Found","reason":"Not Found"}');
      return;
    }
    wait(costMs(path, stats && columns !== 'name' ? v.queues.length : 0), () => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length });
      res.end(body);
    });
  });
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  const { port: bound } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${bound}`,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** This double as a child process (its CPU and memory out of the measured process), and what it printed. */
export async function startFakeManagement<Info>(
  args: readonly string[],
): Promise<{ child: ChildProcess; info: Info }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/fakeManagement.ts', ...args], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  const [line] = (await once(lines, 'line')) as [string];
  return { child, info: JSON.parse(line) as Info };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const arg = (name: string, dflt: number) => {
    const i = process.argv.indexOf(`--${name}`);
    return i >= 0 ? Number(process.argv[i + 1]) : dflt;
  };
  const v = makeVhost(arg('queues', 100_000), arg('policies', 1000), {
    lookaround: process.argv.includes('--lookaround'),
    expires: process.argv.includes('--expires'),
  });
  const shape = process.argv.includes('--links')
    ? (() => {
        const [upstreams = 100, exchanges = 10_000, shovels = 1000] = String(
          process.argv[process.argv.indexOf('--links') + 1],
        )
          .split(',')
          .map(Number);
        return { upstreams, exchanges, shovels };
      })()
    : undefined;
  const { url } = await serve(v, 0, {
    free: process.argv.includes('--free'),
    ...(shape ? { links: shape } : {}),
    chainExchanges: arg('exchanges', 0),
    channels: arg('channels', 0),
  });
  process.stdout.write(
    `${JSON.stringify({ url, vhost: v.vhost, narrow: v.narrow, broad: v.broad, queues: v.queues.length, policies: v.policies.length })}\n`,
  );
  const stop = () => process.exit(0);
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  process.stdin.on('end', stop);
  process.stdin.resume();
}
