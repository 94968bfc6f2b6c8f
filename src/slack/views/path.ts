import { didYouMeanWords, kindWords, NOT_ASKED_WORDS } from '../../commands/index.ts';
import type { PathResult } from '../../commands/path/index.ts';
import { hazardWords } from '../../policy/impact/index.ts';
import { code, prose, truncate, valueCode } from '../escape.ts';
import { type Block, context, finish, listSection, type SlackMessage, section } from './message.ts';

/**
 * The `path` answer as a Slack message: the verdict per failure first (those that do not hold,
 * then the unknown, then those that hold), then the chain: in, the queue, out. Names as code,
 * the rules' sentences escaped; every figure the broker did not report is "unknown", never 0.
 */

const name = (s: string) => code(truncate(s, 260));
const n = (v: number | null, what: string) => (v === null ? `${what} unknown` : `${v} ${what}`);
const yes = (v: boolean | null, t: string, f: string) => (v === null ? 'unknown' : v ? t : f);
const MARK = { false: ':x:', null: ':grey_question:', true: ':white_check_mark:' } as const;

export function pathView(r: PathResult): SlackMessage {
  const what = `${kindWords(r.object.kind)} ${name(r.object.name)}`;
  if (r.answer === 'not-asked') {
    const why = NOT_ASKED_WORDS[r.why ?? 'unreachable'] ?? 'the broker could not be asked';
    const detail = r.detail ? ` (${code(truncate(r.detail, 300))})` : '';
    return finish(
      [section(`:x: *Could not read the path* of ${what}: ${why}${detail}.`)],
      `Could not read the path of ${prose(truncate(r.object.name, 200))}: ${why}.`,
    );
  }
  if (r.answer === 'missing') {
    const close = r.didYouMean?.length
      ? `\n:mag: ${didYouMeanWords(kindWords(r.object.kind), r.object.name, r.didYouMean, name)}`
      : '';
    return finish(
      [section(`There is no ${what} in vhost ${name(r.vhost)}.${close}`)],
      `There is no ${prose(truncate(r.object.name, 200))} in vhost ${prose(truncate(r.vhost, 100))}.`,
    );
  }
  const durable = r.object.durable === null ? '' : r.object.durable ? 'durable' : 'transient';
  const verdicts = Object.entries(r.survives).map(([f, v]) => {
    const lost = v.lost !== null && v.lost > 0 ? ` — *loses ${v.lost} now*` : '';
    return `${MARK[String(v.holds) as 'true']} *${f}*: ${prose(v.why)}${lost}`;
  });
  const blocks: Block[] = [
    section(
      `*Path of ${what}* (${[r.object.type, durable].filter(Boolean).join(', ')}), broker ${r.brokerVersion ?? '?'}`,
    ),
    listSection('*Will the messages there now survive?*', verdicts),
    listSection('*In:*', inItems(r)),
  ];
  if (r.object.kind !== 'exchange') {
    blocks.push(listSection('*The queue:*', queueItems(r)));
    const o = r.out;
    blocks.push(
      section(
        `*Out:* ${n(o.consumers, 'consumers')}, ${n(o.autoAck, 'acknowledging automatically')}, ${n(o.unlimitedPrefetch, 'with unlimited prefetch (0)')}`,
      ),
    );
  }
  if (r.notRead.length) blocks.push(context(...r.notRead.map((w) => `Not read: ${prose(w)}.`)));
  const failing = Object.entries(r.survives)
    .filter(([, v]) => v.holds === false)
    .map(([f]) => f);
  return finish(
    blocks,
    `Path of ${prose(truncate(r.object.name, 200))}: ${failing.length ? `does not hold: ${failing.join(', ')}` : 'nothing found that loses messages'}.`,
  );
}

function inItems(r: PathResult): string[] {
  const items = r.in.exchanges.map((x) => {
    if (x.name === '') return 'the default exchange (routes by queue name)';
    const ae =
      x.alternateExchange === null
        ? 'no alternate exchange'
        : `alternate exchange ${name(x.alternateExchange)} (${yes(x.alternateExists, 'exists', 'does not exist')})`;
    const unrouted =
      x.unrouted === null ? 'unrouted unknown' : `${x.unrouted} unrouted since its statistics began`;
    return `exchange ${name(x.name)}: ${yes(x.durable, 'durable', 'transient')}, ${ae}, ${unrouted}`;
  });
  if (r.in.cut) items.push('_more exchanges route here than were read_');
  const p = r.in.publishers;
  items.push(
    `publishers: ${n(p.channels, 'channels publishing in the vhost')}, ${n(p.confirming, 'in confirm mode')}`,
    `the vhost's unroutable messages: ${n(r.in.unroutable.dropped, 'dropped')}, ${n(r.in.unroutable.returned, 'returned')}`,
  );
  return items;
}

function queueItems(r: PathResult): string[] {
  const q = r.queue;
  const items = [`${n(q.messages, 'messages')}, ${n(q.transient, 'transient')}`];
  if (q.replicas !== null)
    items.push(`${q.replicas} replicas, ${n(q.online, 'online')}, ${n(q.nodes, 'nodes')}`);
  items.push(`policy in force: ${q.policy === null ? 'none' : name(q.policy)}`);
  const limits = Object.entries(q.limits);
  if (limits.length) items.push(`uses: ${limits.map(([k, v]) => `${k} ${valueCode(v, 120)}`).join(', ')}`);
  for (const h of q.hazards) items.push(prose(hazardWords(h, (s) => `"${s}"`)));
  const dl = q.deadLetter;
  items.push(
    dl.exchange === null
      ? 'dead-letter target: none'
      : `dead-letter target: ${name(dl.exchange)} (${yes(dl.exists, 'exists', 'does not exist')}, ${yes(dl.routes, 'routes', 'routes nowhere')})`,
    `delivery limit: ${q.deliveryLimit === null ? 'none' : q.deliveryLimit}; a poison message is ${q.poison === 'unknown' ? 'in an unknown state' : q.poison}`,
  );
  return items;
}
