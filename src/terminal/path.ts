import { didYouMeanWords, kindWords, NOT_ASKED_WORDS } from '../commands/index.ts';
import type { PathResult } from '../commands/path/index.ts';
import { hazardWords } from '../policy/impact/index.ts';
import { jsonWritten, quoted, terminalText } from '../text/index.ts';

/**
 * The `path` answer as terminal text: the verdict per failure first (those that do not hold, then
 * the unknown, then those that hold), then the chain: in (exchanges, publishers), the queue, out
 * (consumers). Every figure the broker did not report is "unknown", never 0.
 */

const n = (v: number | null, what: string) => (v === null ? `${what} unknown` : `${v} ${what}`);
const yes = (v: boolean | null, t: string, f: string) => (v === null ? 'unknown' : v ? t : f);

const VERDICT = { false: 'DOES NOT HOLD', null: 'UNKNOWN', true: 'holds' } as const;

export function pathLines(r: PathResult): string[] {
  const what = `${kindWords(r.object.kind)} ${quoted(r.object.name)}`;
  if (r.answer === 'not-asked') {
    const why = NOT_ASKED_WORDS[r.why ?? 'unreachable'] ?? 'the broker could not be asked';
    return [`Could not read the path of ${what}: ${why}${r.detail ? ` (${r.detail})` : ''}.`];
  }
  if (r.answer === 'missing') {
    const lines = [`There is no ${what} in vhost ${quoted(r.vhost)}.`];
    if (r.didYouMean?.length)
      lines.push(didYouMeanWords(kindWords(r.object.kind), r.object.name, r.didYouMean, quoted));
    return lines;
  }
  const durable = r.object.durable === null ? '' : r.object.durable ? 'durable' : 'transient';
  const lines = [
    `Path of ${what} (${[r.object.type, durable].filter(Boolean).join(', ')}), broker ${r.brokerVersion ?? '?'}:`,
    '',
  ];
  for (const [f, v] of Object.entries(r.survives)) {
    const lost = v.lost !== null && v.lost > 0 ? ` — loses ${v.lost} now` : '';
    lines.push(`  ${VERDICT[String(v.holds) as 'true']}  ${f}: ${v.why}${lost}`);
  }
  if (r.upgrade !== null) lines.push('', `  upgrade: ${jsonWritten(r.upgrade)}`);
  lines.push('', 'In:');
  for (const x of r.in.exchanges) {
    if (x.name === '') {
      lines.push('  the default exchange (routes by queue name; no alternate exchange possible)');
      continue;
    }
    const ae =
      x.alternateExchange === null
        ? 'no alternate exchange'
        : `alternate exchange ${quoted(x.alternateExchange)} (${yes(x.alternateExists, 'exists', 'does not exist')})`;
    const unrouted =
      x.unrouted === null ? 'unrouted unknown' : `${x.unrouted} unrouted since its statistics began`;
    lines.push(`  exchange ${quoted(x.name)}: ${yes(x.durable, 'durable', 'transient')}, ${ae}, ${unrouted}`);
  }
  if (r.in.cut) lines.push('  (more exchanges route here than were read)');
  const p = r.in.publishers;
  lines.push(
    `  publishers: ${n(p.channels, 'channels publishing in the vhost')}, ${n(p.confirming, 'in confirm mode')}`,
    `  the vhost's unroutable messages since its statistics began: ${n(r.in.unroutable.dropped, 'dropped')}, ${n(r.in.unroutable.returned, 'returned')}`,
  );
  if (r.object.kind !== 'exchange') lines.push('', 'The queue:', ...queueLines(r));
  const o = r.out;
  if (r.object.kind !== 'exchange')
    lines.push(
      '',
      'Out:',
      `  ${n(o.consumers, 'consumers')}, ${n(o.autoAck, 'acknowledging automatically')}, ${n(o.unlimitedPrefetch, 'with unlimited prefetch (0)')}`,
    );
  for (const why of r.notRead) lines.push('', `Not read: ${why}.`);
  return lines;
}

function queueLines(r: PathResult): string[] {
  const q = r.queue;
  const out = [
    `  ${n(q.messages, 'messages')}, ${n(q.transient, 'transient')}`,
    ...(q.replicas === null
      ? []
      : [`  ${q.replicas} replicas, ${n(q.online, 'online')}, on a broker of ${n(q.nodes, 'nodes')}`]),
    `  policy in force: ${q.policy === null ? 'none' : quoted(q.policy)}`,
  ];
  const limits = Object.entries(q.limits);
  if (limits.length) out.push(`  uses: ${limits.map(([k, v]) => `${k} ${jsonWritten(v)}`).join(', ')}`);
  for (const h of q.hazards) out.push(`  ${hazardWords(h, quoted)}`);
  const dl = q.deadLetter;
  out.push(
    dl.exchange === null
      ? '  dead-letter target: none'
      : `  dead-letter target: ${quoted(dl.exchange)} (${yes(dl.exists, 'exists', 'does not exist')}, ${yes(dl.routes, 'routes', 'routes nowhere')})`,
    `  delivery limit: ${q.deliveryLimit === null ? 'none' : q.deliveryLimit}; a poison message is ${q.poison === 'unknown' ? 'in an unknown state' : q.poison}`,
  );
  return out;
}

export function pathText(r: PathResult): string {
  return terminalText(pathLines(r));
}
