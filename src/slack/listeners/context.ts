import { randomBytes } from 'node:crypto';
import type { Logger } from '../../log.ts';
import type { PatternCache } from '../../policy/pattern.ts';
import type { ChannelDefaultsStore } from '../channelDefaults.ts';
import type { Delivery } from '../delivery.ts';
import type { Environments, Records } from '../handlers/types.ts';
import type { InFlight } from '../inflight.ts';
import type { Metrics } from '../metrics.ts';
import type { EventDedupe } from '../redis.ts';
import type { ChangeRequests } from '../requests/service.ts';

/** What the listeners are built from; assembled once by createApp. */
export interface ListenerDeps {
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly environments: Environments;
  readonly patterns: PatternCache;
  readonly inFlight: InFlight;
  readonly dedupe: EventDedupe;
  /** Each channel's defaults (`/rmq use`). */
  readonly channelDefaults: ChannelDefaultsStore;
  /** The change requests and the audit trail (`requests`, `history`); absent: those say so. */
  readonly records?: Records;
  /** Every answer goes out through it. */
  readonly delivery: Delivery;
  /** Filing change requests; absent when the bot files none. */
  readonly changes?: ChangeRequests;
}

/** Short enough to read out in a thread, long enough to find in the logs. */
export function newRequestId(): string {
  return randomBytes(6).toString('hex');
}
