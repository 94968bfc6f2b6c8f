import { randomBytes } from 'node:crypto';
import type { Metrics, Via } from '../../bot/metrics/index.ts';
import type { Logger } from '../../log/index.ts';
import type { PatternCache } from '../../policy/pattern/index.ts';
import type { AttachedRef, Attachments, Downloaded } from '../attachments.ts';
import { type ChannelDefaultsStore, channelScope } from '../channelDefaults.ts';
import type { Delivery, Reply } from '../delivery.ts';
import { dispatch } from '../dispatch.ts';
import type { Environments } from '../environments.ts';
import type { Asker, CommandContext, Records } from '../handlers/types.ts';
import type { InFlight } from '../inflight.ts';
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
  /** Downloads a file attached to a mention, with the bot token (`../attachments.ts`). */
  readonly download?: (file: AttachedRef) => Promise<Downloaded>;
}

/** Short enough to read out in a thread, long enough to find in the logs. */
export function newRequestId(): string {
  return randomBytes(6).toString('hex');
}

/** A request as it arrived: when, its id, and its child logger; counted as `via`. */
export interface Arrived {
  readonly via: Via;
  /** `performance.now()` on arrival. */
  readonly started: number;
  readonly requestId: string;
  readonly logger: Logger;
}

/** A request's arrival: its id, and a child logger with `fields` (the ids of its payload). */
export function arrived(deps: ListenerDeps, via: Via, fields: Readonly<Record<string, unknown>>): Arrived {
  const started = performance.now();
  const requestId = newRequestId();
  return { via, started, requestId, logger: deps.logger.child({ requestId, via, ...fields }) };
}

/** Where a request came from, as each listener reads it off its own payload. */
export interface RequestOrigin {
  /** How the user called the bot (`/rmq`, `@rmq`). */
  readonly prefix: string;
  readonly channel: string;
  /** Absent on an event without a user. */
  readonly asker: Asker | undefined;
  /** The files attached to the mention, as the event names them. */
  readonly files?: readonly AttachedRef[];
}

/** A command's context, the same for every surface: the deps, and where the request came from. */
export function commandContext(
  deps: ListenerDeps,
  request: Pick<Arrived, 'logger' | 'requestId'>,
  o: RequestOrigin,
): Omit<CommandContext, 'available'> {
  return {
    prefix: o.prefix,
    environments: deps.environments,
    patterns: deps.patterns,
    logger: request.logger,
    requestId: request.requestId,
    // A thread is part of its channel: the channel's defaults hold there too.
    channel: channelScope(deps.channelDefaults, o.channel, o.asker?.user, request.logger),
    ...(o.asker ? { asker: o.asker } : {}),
    ...(deps.records ? { records: deps.records } : {}),
    ...(deps.changes ? { changes: deps.changes } : {}),
    ...(o.files && deps.download ? { attachments: attachmentsOf(o.files, deps.download) } : {}),
  };
}

function attachmentsOf(
  files: readonly AttachedRef[],
  download: (file: AttachedRef) => Promise<Downloaded>,
): Attachments {
  return { files, read: download };
}

/**
 * The words answered, for every surface: dispatched to their command, the answer delivered
 * through `reply` and counted; tracked, so a shutdown lets it finish.
 */
export function answer(
  deps: ListenerDeps,
  request: Arrived,
  words: string,
  origin: RequestOrigin,
  reply: Reply,
): Promise<void> {
  return deps.inFlight.track(
    (async () => {
      const answer = await dispatch(words, commandContext(deps, request, origin));
      const { via, started, logger, requestId } = request;
      await deps.delivery.deliver(reply, answer, {
        via,
        command: answer.command,
        started,
        logger,
        requestId,
      });
    })(),
  );
}
