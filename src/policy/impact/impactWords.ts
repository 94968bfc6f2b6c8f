import { type Hazard, type Impact, type ImpactTotals, type LiveQueue, removesData } from './impact.ts';

/**
 * The live impact in words, once for the terminal and Slack: each effect, `which`'s hazards, the
 * totals an approver accepts, the statistics' age. Beside the rules, not in src/preview/: `which`
 * says the hazards too, and the terminal loads src/preview/ only for `preview` (a chunk of its own,
 * test/integration/build.test.ts). `name` renders a user- or broker-supplied string the way the
 * surface shows such strings (quoted in the terminal, code in Slack); every other word is ours.
 */

export type NameWords = (s: string) => string;

/** A number with its noun ("1 queue", "2 queues"): the policy rules' own, as they import nothing outside src/policy (src/text's `count` for the rest). */
export const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** A duration as a person reads it: 4000 -> "4 s", 90000 -> "1.5 min", 7200000 -> "2 h". */
export function durationWords(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  const round = (n: number) => Number(n.toFixed(1)).toString();
  if (ms < 60_000) return `${round(ms / 1000)} s`;
  if (ms < 3_600_000) return `${round(ms / 60_000)} min`;
  if (ms < 86_400_000) return `${round(ms / 3_600_000)} h`;
  return `${round(ms / 86_400_000)} d`;
}

const CONSEQUENCE = {
  'dead-letter-exchange': 'what it dead-letters will vanish',
  'alternate-exchange': 'unroutable messages will vanish',
  'federation-upstream': 'nothing will be federated',
  'federation-upstream-set': 'nothing will be federated',
} as const;

/** Where a removed message goes, and (lost) why: `[where, why]`. */
function fateWords(
  fate: 'dead-lettered' | 'lost',
  exchange: string | undefined,
  name: NameWords,
): [string, string] {
  if (fate === 'dead-lettered') {
    return [`dead-lettered to ${exchange === '' ? 'the default exchange' : name(exchange ?? '')}`, ''];
  }
  const why =
    exchange === undefined
      ? ' — no dead-letter exchange'
      : ` — dead-letter exchange ${name(exchange)} does not exist`;
  return ['lost', why];
}

/** An hour of the day as the answers give it: `11:40:06 UTC`. */
/** A time of day as the live numbers are dated: "11:40:02 UTC". */
export const clock = (iso: string) => `${iso.slice(11, 19)} UTC`;

export function impactWords(x: Impact, name: NameWords): string {
  switch (x.effect) {
    case 'drop': {
      const n = `${x.estimated ? 'about ' : ''}${plural(x.messages, 'message')}`;
      const [where, why] = fateWords(x.fate, x.exchange, name);
      return `${n} removed at once and ${where} (${x.because} ${x.limit})${why}`;
    }
    case 'delete':
      return `deleted with its ${plural(x.messages, 'message')} about ${durationWords(x.inMs)} after the change (expires ${x.inMs} ms, no consumer)`;
    case 'reject-publish':
      return `full at ${x.because} ${x.limit}: publishers are refused from now on`;
    case 'missing-target':
      return `${x.key} names ${name(x.target)}, which does not exist: ${CONSEQUENCE[x.key]}`;
    case 'may-drop':
      return `${x.nodeDown ? `${NODE_DOWN}; the` : 'its statistics are not known: the'} ready messages above ${x.because} ${x.limit} would be removed at once and ${x.fate}`;
    case 'delete-when-idle':
      return `deleted ${durationWords(x.inMs)} after its last consumer leaves (expires ${x.inMs} ms; ${x.consumers === null ? 'its consumers are not known' : `${plural(x.consumers, 'consumer')} now`}), not counted as deleted`;
    case 'ttl-from-now':
      return `message-ttl ${x.ttlMs} ms: the messages queued now keep their expiry; those published from now on expire after ${durationWords(x.ttlMs)}`;
    case 'dead-letter-lost':
      return `loses dead-letter exchange ${name(x.exchange)}${x.messages === null ? '' : ` with ${plural(x.messages, 'message')} queued`}: what is rejected or expires from now on is dropped`;
    case 'link-stops':
      return `loses ${x.key} ${name(x.upstream)} while its federation link runs: the link stops`;
    case 'link-starts':
      return `gains ${x.key} ${name(x.upstream)}: its federation link starts`;
    case 'may-remove':
      return `stream retention ${x.because} ${typeof x.value === 'string' ? name(x.value) : x.value}: may remove data at once: the whole segments beyond it are deleted as soon as the policy applies (all but the segment being written); how many messages, the broker's statistics cannot say`;
    case 'delivery-limit-lowered':
      return `delivery-limit ${x.was ?? 'none'} -> ${x.limit}: a message already delivered ${x.limit} times or more is dropped or dead-lettered at its next return; none at once`;
  }
}

/** What threatens an object as it stands (`which`), one line each. */
export function hazardWords(x: Hazard, name: NameWords): string {
  switch (x.effect) {
    case 'missing-target':
      return impactWords(x, name);
    case 'expires-idle':
      return `no consumer: deleted with its ${plural(x.messages, 'message')} once unused for ${durationWords(x.inMs)} (expires ${x.inMs} ms) — by ${clock(x.by)} at the latest, unless a consumer attaches, a message is fetched or it is declared again`;
    case 'expires-when-unused':
      return x.consumers === null
        ? `deleted ${durationWords(x.inMs)} after it is last used (expires ${x.inMs} ms); whether it has consumers now is not known`
        : `deleted ${durationWords(x.inMs)} after its last consumer leaves (expires ${x.inMs} ms; ${plural(x.consumers, 'consumer')} now)`;
    case 'full': {
      const at = `at its limit (${x.because} ${x.limit}, overflow ${x.overflow})`;
      if (x.dropped === null && !x.refused) {
        return `${at}: the next message is taken (a quorum queue takes one past its limit), then publishers are refused`;
      }
      if (x.dropped === null) return `${at}: publishers are refused from now on`;
      const [where, why] = fateWords(x.dropped, x.exchange, name);
      return x.refused
        ? `${at}: publishers are refused from now on, and each refused message ${where}${why}`
        : `${at}: each message published pushes out the oldest, ${where}${why}`;
    }
  }
}

/** How old a reading is: "the broker's statistics said at 11:40:02 UTC (they lag …)". */
export const statisticsSaid = (sampledAt: string) =>
  `the broker's statistics said at ${clock(sampledAt)} (they lag the broker by a few seconds)`;

/** A queue the broker reports no statistics for: unknown, never zero. */
export const NO_STATISTICS =
  'the broker reports no statistics for it (yet): its messages and consumers are unknown, not zero';

/**
 * A queue on a cluster's node that is down: the broker still lists it (its record is
 * cluster-wide) but reports nothing live of it; nothing is predicted from the nodes that answer.
 */
export const NODE_DOWN = 'its node is down: its messages and consumers are unknown, not zero';

/** A queue's numbers now, for the object-by-object lines of a preview ("statistics unknown"). */
export const objectNowWords = (now: LiveQueue | null, nodeDown: boolean | undefined): string =>
  now === null && nodeDown ? `unknown — ${NODE_DOWN}` : nowWords(now);

/** Why a queue's numbers now are unknown, after "unknown — ". */
export const unknownNowWords = (nodeDown: boolean | undefined): string =>
  nodeDown ? NODE_DOWN : NO_STATISTICS;

/** The loss in numbers, one line; null when the change removes and refuses nothing. */
export function totalsWords(t: ImpactTotals): string | null {
  const parts = [
    t.messagesLost ? `${plural(t.messagesLost, 'message')} lost` : '',
    t.messagesDeadLettered ? `${plural(t.messagesDeadLettered, 'message')} dead-lettered` : '',
    t.queuesDeleted ? `${plural(t.queuesDeleted, 'queue')} deleted` : '',
    t.queuesRefusingPublishes ? `${plural(t.queuesRefusingPublishes, 'queue')} refusing publishes` : '',
  ].filter(Boolean);
  return parts.length ? parts.join(', ') : null;
}

/**
 * The loss an approver must acknowledge, in numbers: null when the change removes no message and
 * deletes no queue (or was previewed before the impact was read).
 */
export function lossToAcknowledge(s: { readonly totals: ImpactTotals } | undefined): string | null {
  return s && removesData(s.totals) ? totalsWords(s.totals) : null;
}

/** Queues the broker lists without statistics (`null` numbers), where a loss is counted. */
export const withoutStatisticsWords = (n: number): string =>
  `${plural(n, 'queue')} without statistics: their messages are unknown, not counted.`;

/** The numbers a plan's findings count of queues no change reaches, asked and not read. */
export const findingNumbersUnreadWords = (n: number, why: string): string =>
  `The numbers of ${plural(n, 'queue')} the findings count could not be read (${why}): what they find of those queues' messages is not known.`;

/** How old the numbers are, and what is not known. */
export function readingWords(s: {
  readonly sampledAt: string | null;
  readonly asOf?: string | undefined;
  readonly unknown: number;
  readonly nodeDown?: number | undefined;
  readonly notes: readonly string[];
}): string[] {
  const out: string[] = [];
  if (s.asOf && s.sampledAt) {
    out.push(
      `Messages as the broker's statistics sampled them just before ${clock(s.asOf)}, from its length history read at ${clock(s.sampledAt)}.`,
    );
  } else if (s.sampledAt) {
    out.push(`Messages as ${statisticsSaid(s.sampledAt)}.`);
  }
  if (s.unknown > 0) out.push(withoutStatisticsWords(s.unknown));
  if (s.nodeDown) {
    out.push(`Of them, ${plural(s.nodeDown, 'queue')} on a cluster node that is down.`);
  }
  out.push(...s.notes);
  return out;
}

/** A queue's numbers now, for the object-by-object lines. */
export function nowWords(now: LiveQueue | null): string {
  if (now === null) return 'statistics unknown';
  return `${plural(now.ready, 'message')} ready, ${now.unacked} unacked, ${plural(now.consumers, 'consumer')}`;
}
