import { type Impact, type ImpactInput, lowered, num } from './impactTypes.ts';

/**
 * The rules whose effect the statistics cannot count: a lower `message-ttl` (the messages already
 * queued keep their expiry), a lower quorum `delivery-limit` (a message already returned that
 * often goes at its next return), a stream's lower retention (whole segments deleted at once, how
 * many messages the statistics cannot say). Measured: see impact.ts's header.
 */

/** Seconds of a `max-age` (`7D`, `12h`, `1Y`…), undefined when unreadable. */
export function maxAgeSeconds(v: unknown): number | undefined {
  const m = typeof v === 'string' ? /^(\d+)([YMDhms])$/.exec(v) : null;
  if (!m) return undefined;
  const unit = { Y: 31_536_000, M: 2_592_000, D: 86_400, h: 3600, m: 60, s: 1 }[m[2] as 'Y'];
  return Number(m[1]) * unit;
}

/** The slower or uncountable effects of a change, after the counted ones. */
export function slowRules(i: ImpactInput, out: Impact[]): void {
  const { kind, before, after } = i;
  if (kind === 'classic' || kind === 'quorum') {
    const ttlMs = num(after['message-ttl']);
    if (lowered(num(before['message-ttl']), ttlMs))
      out.push({ effect: 'ttl-from-now', ttlMs, because: 'message-ttl' });
  }
  if (kind === 'quorum') {
    const fallback = i.defaultDeliveryLimit;
    const limitOf = (v: unknown) => {
      const n = num(v) ?? fallback;
      return n === undefined || n < 0 ? undefined : n;
    };
    const was = limitOf(before['delivery-limit']);
    const limit = limitOf(after['delivery-limit']);
    if (lowered(was, limit)) out.push({ effect: 'delivery-limit-lowered', limit, was: was ?? null });
  }
  if (kind === 'stream') {
    const bytes = num(after['max-length-bytes']);
    if (lowered(num(before['max-length-bytes']), bytes)) {
      out.push({ effect: 'may-remove', because: 'max-length-bytes', value: bytes });
    }
    const age = maxAgeSeconds(after['max-age']);
    if (lowered(maxAgeSeconds(before['max-age']), age)) {
      out.push({ effect: 'may-remove', because: 'max-age', value: after['max-age'] as string });
    }
  }
}
