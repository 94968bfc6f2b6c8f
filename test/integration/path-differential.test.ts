/**
 * `path`'s verdicts against what the broker does, in random worlds, on every broker that is up,
 * without a restart: exchanges (fanout, direct, topic; some with an alternate exchange that exists
 * or is missing), bindings (some keys that match nothing), classic and quorum queues (a delivery
 * limit drawn, a dead-letter exchange present, missing or none), messages, and consumers
 * (automatic acknowledgement or manual, a prefetch drawn, a few messages acknowledged) in a child
 * process. `path` is asked about every queue and exchange, then each failure is made to happen,
 * in this order (a poison message first, so it has never been delivered before):
 *
 * - a poison message: a queue's first message taken and returned (its channel closed on it) again
 *   and again: redelivered, dead-lettered or dropped, after how many returns, against `poison`;
 * - an unroutable publish (mandatory off, confirms on) at every exchange a key can miss: kept by
 *   an alternate exchange somewhere or dropped, against `unroutable` (of the exchange, and of the
 *   queues behind it);
 * - a consumer crash: the consumers started, `path` asked again once it shows them, the child
 *   killed (SIGKILL); what they held and had not acknowledged comes back, is dead-lettered, or is
 *   lost, against `consumer-crash`.
 *
 * Where `path` says unknown, it says why and claims no number.
 * Dead-letter exchanges route only to sink queues of their own (no consumers), so what a queue
 * dead-letters is counted where it lands. Counts are AMQP passive declares (no statistics lag);
 * an answer that should come is polled for with a deadline. The seed is PATH_DIFF_SEED or drawn,
 * and named in every assertion.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import type { PathResult } from '../../src/commands/path/index.ts';
import { closeSoon, connect } from '../support/amqpLab.ts';
import { waitFor } from '../support/broker.ts';
import { brokersUp, inVhostOn } from '../support/brokers.ts';
import { amqpUrl } from '../support/messages.ts';
import { pathJson } from '../support/path.ts';
import { type Rng, rng } from '../support/rng.ts';

const { up } = await brokersUp();
const SEED = Number(process.env.PATH_DIFF_SEED ?? Date.now() % 1_000_000);

type ExchangeType = 'fanout' | 'direct' | 'topic';
interface XDef {
  name: string;
  type: ExchangeType;
  alternate: string | null;
}
interface QDef {
  name: string;
  kind: 'classic' | 'quorum';
  /** x-delivery-limit, quorum only; null: not set. */
  limit: number | null;
  deadLetter: string | null;
  /** x-dead-letter-routing-key; null: each message keeps its own. */
  deadLetterKey: string | null;
}
interface BDef {
  exchange: string;
  queue: string;
  key: string;
}
interface CDef {
  queue: string;
  noAck: boolean;
  prefetch: number;
  /** Manual acknowledgement: how many of its first deliveries it acknowledges. */
  acks: number;
}
interface World {
  exchanges: XDef[];
  /** Dead-letter exchanges, each with at most one binding, to a sink queue of its own. */
  deadLetters: XDef[];
  queues: QDef[];
  sinks: string[];
  bindings: BDef[];
  consumers: CDef[];
  /** [exchange, routing key] of each message published. */
  publishes: [string, string][];
}

const PUBLISH_KEYS = ['a', 'b', 'a.x', 'b.y'];
const BINDING_KEYS: Record<ExchangeType, string[]> = {
  fanout: [''],
  direct: ['a', 'b', 'a.x', 'none'],
  topic: ['a.*', '#', 'b.#', 'a', 'none.#'],
};

/** A topic pattern against a key: `*` one word, `#` none or more (the test's own reading, apart from path's). */
function topicMatches(pattern: string, key: string): boolean {
  const go = (p: string[], k: string[]): boolean => {
    if (p.length === 0) return k.length === 0;
    const [head, ...rest] = p;
    if (head === '#') return go(rest, k) || (k.length > 0 && go(p, k.slice(1)));
    if (k.length === 0) return false;
    return (head === '*' || head === k[0]) && go(rest, k.slice(1));
  };
  return go(pattern.split('.'), key.split('.'));
}

function matches(type: ExchangeType, bindingKey: string, key: string): boolean {
  return type === 'fanout' || (type === 'direct' ? bindingKey === key : topicMatches(bindingKey, key));
}

function drawWorld(r: Rng): World {
  const types: ExchangeType[] = ['fanout', 'direct', 'topic'];
  const deadLetters: XDef[] = Array.from({ length: 1 + r.int(2) }, (_, i) => ({
    name: `dl${i}`,
    type: r.pick(types),
    alternate: null,
  }));
  const names = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => `${prefix}${i}`);
  const xNames = names(3 + r.int(3), 'x');
  // An alternate exchange: another exchange of the world, a dead-letter one (its sink takes what it
  // routes), or one that does not exist.
  const exchanges: XDef[] = xNames.map((name) => ({
    name,
    type: r.pick(types),
    alternate: r.chance(0.5)
      ? r.pick([...xNames.filter((n) => n !== name), ...deadLetters.map((d) => d.name), 'missing.ae'])
      : null,
  }));
  const queues: QDef[] = names(3 + r.int(3), 'q').map((name) => {
    const kind = r.chance(0.5) ? ('quorum' as const) : ('classic' as const);
    return {
      name,
      kind,
      limit: kind === 'quorum' ? r.pick([null, 0, 1, 2, 3, -1]) : null,
      deadLetter: r.chance(0.7) ? r.pick([...deadLetters.map((d) => d.name), 'missing.dlx']) : null,
      deadLetterKey: r.chance(0.3) ? r.pick(PUBLISH_KEYS) : null,
    };
  });
  const bindings: BDef[] = [];
  for (const x of exchanges)
    for (let i = r.int(4); i > 0; i--)
      bindings.push({ exchange: x.name, queue: r.pick(queues).name, key: r.pick(BINDING_KEYS[x.type]) });
  const sinks = deadLetters.map((d) => `sink.${d.name}`);
  for (const d of deadLetters)
    if (r.chance(0.8))
      bindings.push({ exchange: d.name, queue: `sink.${d.name}`, key: r.pick(BINDING_KEYS[d.type]) });
  const consumers: CDef[] = [];
  for (const q of queues)
    for (let i = r.int(3); i > 0; i--) {
      const noAck = r.chance(0.35);
      consumers.push({
        queue: q.name,
        noAck,
        prefetch: noAck ? 0 : r.pick([0, 1, 2, 5]),
        acks: noAck ? 0 : r.int(3),
      });
    }
  // Straight to each queue by the default exchange, then through the exchanges with the keys drawn.
  const publishes: [string, string][] = [];
  for (const q of queues) for (let i = r.int(6); i > 0; i--) publishes.push(['', q.name]);
  for (let i = 4 + r.int(8); i > 0; i--) publishes.push([r.pick(xNames), r.pick(PUBLISH_KEYS)]);
  return { exchanges, deadLetters, queues, sinks, bindings, consumers, publishes };
}

/** What one consumer of the child was given, and what it acknowledged (the broker having seen it). */
interface Taken {
  got: number;
  acked: number;
}

/**
 * Every consumer of the world in one child process until it is killed with SIGKILL: a crash, as
 * the broker sees one. The consumers of one queue share a channel (each with its own prefetch,
 * basic.qos before its basic.consume), so the broker takes them all off the queue at once and
 * returns what they held once, to no consumer of theirs. A manual consumer acknowledges its first
 * `acks` deliveries and reports each once a round trip on its channel says the broker has it
 * (basic.ack has no answer of its own); the rest it holds.
 */
function consumerChild(url: string, consumers: readonly CDef[]): { taken: Taken[]; child: ChildProcess } {
  const script = `
    import { Connection } from 'rabbitmq-client';
    const consumers = ${JSON.stringify(consumers)};
    const conn = new Connection(${JSON.stringify(url)});
    conn.on('error', () => {});
    const channels = new Map();
    for (const [i, c] of consumers.entries()) {
      if (!channels.has(c.queue)) channels.set(c.queue, await conn.acquire());
      const ch = channels.get(c.queue);
      await ch.basicQos({ prefetchCount: c.prefetch });
      let acked = 0;
      await ch.basicConsume({ queue: c.queue, noAck: c.noAck }, async (m) => {
        process.stdout.write('got ' + i + '\\n');
        if (c.noAck || acked >= c.acks) return;
        acked++;
        await ch.basicAck({ deliveryTag: m.deliveryTag });
        await ch.queueDeclare({ queue: c.queue, passive: true });
        process.stdout.write('acked ' + i + '\\n');
      });
    }
  `;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const taken: Taken[] = consumers.map(() => ({ got: 0, acked: 0 }));
  let rest = '';
  child.stdout?.on('data', (d: Buffer) => {
    const lines = (rest + d.toString()).split('\n');
    rest = lines.pop() ?? '';
    for (const line of lines) {
      const [what, i] = line.split(' ');
      const t = taken[Number(i)];
      if (t && what === 'got') t.got++;
      if (t && what === 'acked') t.acked++;
    }
  });
  return { taken, child };
}

/** Polls `read` until `ok` says so or the deadline passes, and returns the last reading either way. */
async function pollUntil<T>(read: () => Promise<T>, ok: (t: T) => boolean, deadlineMs: number): Promise<T> {
  const until = Date.now() + deadlineMs;
  for (;;) {
    const t = await read();
    if (ok(t) || Date.now() >= until) return t;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe.each(up.map((b) => [b.label, b] as const))(
  'path against the broker in random worlds on %s',
  (label, broker) => {
    it('poison message, unroutable publish, consumer crash: what path said, the broker did', async () => {
      const seed = SEED;
      const world = drawWorld(rng(seed));
      const at = (what: string) => `seed ${seed} on ${label} (PATH_DIFF_SEED=${seed}): ${what}`;
      console.info(at('the world'), JSON.stringify(world));
      await inVhostOn(broker, 'pathdiff', async (vhost) => {
        const conn = await connect(broker, vhost);
        let child: ChildProcess | undefined;
        try {
          const ch = await conn.acquire();
          await ch.confirmSelect();
          for (const x of [...world.deadLetters, ...world.exchanges])
            await ch.exchangeDeclare({
              exchange: x.name,
              type: x.type,
              durable: true,
              arguments: x.alternate ? { 'alternate-exchange': x.alternate } : {},
            });
          for (const q of world.queues)
            await ch.queueDeclare({
              queue: q.name,
              durable: true,
              arguments: {
                ...(q.kind === 'quorum' ? { 'x-queue-type': 'quorum' } : {}),
                ...(q.limit !== null ? { 'x-delivery-limit': q.limit } : {}),
                ...(q.deadLetter ? { 'x-dead-letter-exchange': q.deadLetter } : {}),
                // The broker refuses a dead-letter routing key without a dead-letter exchange.
                ...(q.deadLetter && q.deadLetterKey ? { 'x-dead-letter-routing-key': q.deadLetterKey } : {}),
              },
            });
          for (const s of world.sinks) await ch.queueDeclare({ queue: s, durable: true });
          for (const b of world.bindings)
            await ch.queueBind({ queue: b.queue, exchange: b.exchange, routingKey: b.key });
          for (const [i, [exchange, routingKey]] of world.publishes.entries())
            await ch.basicPublish({ exchange, routingKey, durable: true }, `m${i}`);

          const allQueues = [...world.queues.map((q) => q.name), ...world.sinks];
          const held = async (queue: string) => {
            const c = await conn.acquire();
            try {
              return await c.queueDeclare({ queue, passive: true });
            } finally {
              if (c.active) await c.close();
            }
          };
          const counts = async () => {
            const out: Record<string, number> = {};
            for (const q of allQueues) out[q] = (await held(q)).messageCount;
            return out;
          };
          const sum = (c: Record<string, number>, qs: readonly string[] = allQueues) =>
            qs.reduce((n, q) => n + (c[q] ?? 0), 0);

          // path on every queue and exchange.
          const said: Record<string, PathResult> = {};
          const ask = async (q: QDef) => (said[q.name] = await pathJson(broker, vhost, q.name));
          for (const q of world.queues) await ask(q);
          for (const x of [...world.exchanges, ...world.deadLetters])
            said[`x:${x.name}`] = await pathJson(broker, vhost, x.name, '--kind', 'exchange');
          const verdict = (key: string, f: keyof PathResult['survives']) =>
            (said[key] as PathResult).survives[f];
          // Where path does not know, it says why, and claims no number.
          const unknownSaysWhy = () => {
            for (const [key, p] of Object.entries(said))
              for (const [f, v] of Object.entries(p.survives))
                if (v.holds === null) {
                  expect(v.lost, at(`${key} ${f}: unknown, yet a number`)).toBeNull();
                  expect(v.why.length, at(`${key} ${f}: unknown without a why`)).toBeGreaterThan(10);
                }
          };
          unknownSaysWhy();
          // How many verdicts were held against the broker, and how many path left unknown (with a why).
          const tally = { poison: 0, unroutable: 0, crash: 0, unknown: 0 };

          // 1. A poison message: each queue's first message (never delivered yet) taken and returned,
          // its channel closed on it, again and again until it is gone, or CAP times.
          const CAP = 22;
          for (const q of world.queues) {
            const start = await counts();
            const n = start[q.name] ?? 0;
            if (n === 0) continue;
            const others = allQueues.filter((o) => o !== q.name);
            let first: string | undefined;
            let returns = 0;
            let fate: 'redelivered' | 'dead-lettered' | 'dropped' = 'redelivered';
            while (returns < CAP) {
              const c = await conn.acquire();
              const m = await c.basicGet({ queue: q.name });
              const body = m ? String(m.body) : undefined;
              first ??= body;
              expect(body, at(`${q.name}: the poison message at the head after ${returns} returns`)).toBe(
                first,
              );
              await c.close();
              returns++;
              // Back (the queue's count again), dead-lettered (a sink's count up) or, at the deadline, dropped.
              const now = await pollUntil(
                counts,
                (k) => k[q.name] === n || sum(k, others) > sum(start, others),
                3_000,
              );
              if (now[q.name] === n) continue;
              fate = sum(now, others) > sum(start, others) ? 'dead-lettered' : 'dropped';
              break;
            }
            const p = said[q.name] as PathResult;
            const v = p.survives.poison;
            const why = at(
              `poison in ${q.name} (${q.kind}, limit ${q.limit}, dead-letter ${q.deadLetter} key ${q.deadLetterKey}): ${fate} after ${returns} returns; path: ${JSON.stringify({ poison: p.queue.poison, deliveryLimit: p.queue.deliveryLimit, deadLetter: p.queue.deadLetter })} ${JSON.stringify(v)}`,
            );
            if (p.queue.poison === 'unknown') {
              expect(v.holds, why).toBeNull();
              tally.unknown++;
              continue;
            }
            tally.poison++;
            expect(fate, why).toBe(p.queue.poison);
            expect(v.holds, why).toBe(fate !== 'dropped');
            if (fate !== 'redelivered')
              expect(returns, why).toBe(Math.max(0, p.queue.deliveryLimit ?? 0) + 1);
          }

          // 2. An unroutable publish at every exchange a key can miss (mandatory off, confirms on).
          const kept: Record<string, boolean> = {};
          for (const [i, x] of [...world.exchanges, ...world.deadLetters].entries()) {
            const key = `unroutable.${i}`;
            const own = world.bindings.filter((b) => b.exchange === x.name);
            if (own.some((b) => matches(x.type, b.key, key))) {
              // Its own bindings route every message (a fanout, a topic `#`): nothing is unroutable there.
              if (
                own.length > 0 &&
                (x.type === 'fanout' || own.some((b) => x.type === 'topic' && b.key === '#'))
              ) {
                const v = verdict(`x:${x.name}`, 'unroutable');
                expect(
                  v.holds,
                  at(`exchange ${x.name} (${x.type}) routes every key: path: ${JSON.stringify(v)}`),
                ).toBe(true);
                tally.unroutable++;
              }
              continue;
            }
            const was = sum(await counts());
            await ch.basicPublish({ exchange: x.name, routingKey: key, durable: true }, `u${i}`);
            // Confirmed: routed and enqueued, or dropped; a landing is still polled for a moment.
            kept[x.name] = sum(await pollUntil(counts, (c) => sum(c) > was, 1_500)) > was;
            const v = verdict(`x:${x.name}`, 'unroutable');
            const why = at(
              `exchange ${x.name} (${x.type}, alternate ${x.alternate}): ${kept[x.name] ? 'kept' : 'dropped'}; path: ${JSON.stringify(v)}`,
            );
            if (v.holds !== null) expect(v.holds, why).toBe(kept[x.name]);
            tally[v.holds === null ? 'unknown' : 'unroutable']++;
          }
          for (const q of world.queues) {
            const upstream = [
              ...new Set(world.bindings.filter((b) => b.queue === q.name).map((b) => b.exchange)),
            ];
            const v = verdict(q.name, 'unroutable');
            const seen = upstream.filter((x) => x in kept);
            const why = at(
              `queue ${q.name} behind ${upstream.join(', ') || 'the default exchange only'}: ${JSON.stringify(kept)}; path: ${JSON.stringify(v)}`,
            );
            if (v.holds === true)
              expect(
                seen.every((x) => kept[x]),
                why,
              ).toBe(true);
            if (v.holds === false && seen.length === upstream.length)
              expect(
                seen.some((x) => !kept[x]),
                why,
              ).toBe(true);
          }

          // 3. A consumer crash: the consumers started, settled (each has what the broker will give it
          // and has acknowledged what it will), path asked again, then all killed at once.
          const published = await counts();
          const consumed = consumerChild(amqpUrl(broker, vhost), world.consumers);
          child = consumed.child;
          const mine = (q: string) => world.consumers.flatMap((c, i) => (c.queue === q ? [i] : []));
          const settled = async () => {
            const now = await counts();
            for (const q of world.queues) {
              const ids = mine(q.name);
              if (ids.length === 0) continue;
              const ts = ids.map((i) => consumed.taken[i] as Taken);
              const cs = ids.map((i) => world.consumers[i] as CDef);
              if (ts.reduce((n, t) => n + t.got, 0) + (now[q.name] ?? 0) !== published[q.name])
                return undefined;
              if (ts.some((t, k) => t.acked !== Math.min((cs[k] as CDef).acks, t.got))) return undefined;
              const full = cs.every(
                (c, k) =>
                  !c.noAck && c.prefetch > 0 && (ts[k] as Taken).got - (ts[k] as Taken).acked === c.prefetch,
              );
              if (now[q.name] !== 0 && !full) return undefined;
              if ((await held(q.name)).consumerCount !== ids.length) return undefined;
            }
            return now;
          };
          const before = await waitFor(settled, {
            deadlineMs: 30_000,
            intervalMs: 100,
            what: at('the consumers settled'),
          });
          for (const q of world.queues) {
            const n = mine(q.name).length;
            said[q.name] = await waitFor(
              async () => {
                const p = await pathJson(broker, vhost, q.name);
                return p.out.consumers === n ? p : undefined;
              },
              { deadlineMs: 45_000, intervalMs: 500, what: at(`path ${q.name} to show ${n} consumers`) },
            );
          }
          unknownSaysWhy();
          const inHand: Record<string, { manual: number; auto: number }> = {};
          for (const q of world.queues) {
            const h = { manual: 0, auto: 0 };
            for (const i of mine(q.name)) {
              const t = consumed.taken[i] as Taken;
              if ((world.consumers[i] as CDef).noAck) h.auto += t.got;
              else h.manual += t.got - t.acked;
            }
            inHand[q.name] = h;
          }
          child.kill('SIGKILL');
          // Read once every consumer is gone and the manual ones' messages are back; a message past
          // its delivery limit does not come back, so the deadline ends that wait.
          await waitFor(
            async () => {
              for (const q of world.queues) if ((await held(q.name)).consumerCount !== 0) return undefined;
              return true;
            },
            { what: at('the consumers gone') },
          );
          const after = await pollUntil(
            counts,
            (c) =>
              world.queues.every(
                (q) => (c[q.name] ?? 0) >= (before[q.name] ?? 0) + (inHand[q.name]?.manual ?? 0),
              ),
            8_000,
          );
          // What a queue's consumers held and is neither back nor dead-lettered is lost. Each dead-letter
          // exchange has one sink: what the queues sending to it lost is what they missed less what it gained.
          const missing = (q: string) =>
            (inHand[q]?.manual ?? 0) + (inHand[q]?.auto ?? 0) - ((after[q] ?? 0) - (before[q] ?? 0));
          const groups = new Map<string | null, QDef[]>();
          for (const q of world.queues) {
            const d = world.deadLetters.some((x) => x.name === q.deadLetter) ? q.deadLetter : null;
            groups.set(d, [...(groups.get(d) ?? []), q]);
          }
          for (const [d, qs] of groups) {
            const gained = d === null ? 0 : (after[`sink.${d}`] ?? 0) - (before[`sink.${d}`] ?? 0);
            const lost = qs.reduce((n, q) => n + missing(q.name), 0) - gained;
            const shown = qs
              .map(
                (q) =>
                  `${q.name} (${q.kind}, limit ${q.limit}, held ${JSON.stringify(inHand[q.name])}, missing ${missing(q.name)}): ${JSON.stringify(verdict(q.name, 'consumer-crash'))}`,
              )
              .join('; ');
            if (qs.every((q) => verdict(q.name, 'consumer-crash').holds === true))
              expect(
                lost,
                at(`a crash lost what path said it would not (dead-letter target ${d}): ${shown}`),
              ).toBe(0);
            for (const q of qs) {
              const v = verdict(q.name, 'consumer-crash');
              const h = inHand[q.name] as { manual: number; auto: number };
              tally[v.holds === null ? 'unknown' : 'crash']++;
              // What path says a crash loses: what the automatic consumers held, and what the manual
              // ones held where their one return is past the delivery limit and dropped.
              const atRisk =
                v.holds !== false
                  ? 0
                  : ((said[q.name]?.out.autoAck ?? 0) > 0 ? h.auto : 0) +
                    (/delivery limit/.test(v.why) ? h.manual : 0);
              // Without a dead-letter target to land in, exactly those are missing: the rest came back.
              if (d === null)
                expect(missing(q.name), at(`${q.name}: a crash lost what path did not say: ${shown}`)).toBe(
                  atRisk,
                );
              else
                expect(
                  missing(q.name),
                  at(`${q.name}: path said a crash loses what was held: ${shown}`),
                ).toBeGreaterThanOrEqual(atRisk);
            }
          }
          console.info(at('verdicts held against the broker'), JSON.stringify(tally));
        } finally {
          child?.kill('SIGKILL');
          await closeSoon(conn);
        }
      });
    }, 180_000);
  },
);
