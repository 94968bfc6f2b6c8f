import {
  type ConsumerFacts,
  DEFAULT_EXCHANGE,
  flagLine,
  type QueueFacts,
  survives,
  transientOf,
} from '../../policy/durability/index.ts';
import type { Hazard } from '../../policy/impact/index.ts';
import type { BrokerVersion } from '../../policy/index.ts';
import { type QueueDurability, toQueueKind } from '../../rabbit/index.ts';
import { quoted } from '../../text/index.ts';
import type { WhichBroker } from './whichLookup.ts';

/**
 * A queue's durability facts from its GET (the one `which` asks), for `path` and for the line
 * `which` ends with: what `path` would flag, from what the GET already says (the queue, its
 * dead-letter target, its consumers; the exchanges on the way are `path`'s to read).
 */

type Queue = NonNullable<Awaited<ReturnType<WhichBroker['getQueue']>>>;

const NOT_READ: QueueDurability = {
  durable: undefined,
  exclusive: undefined,
  persistent: undefined,
  members: undefined,
  online: undefined,
  deliveryLimit: undefined,
  consumers: undefined,
};

/** A queue's facts from its GET and the values it uses. */
export function queueFacts(name: string, q: Queue, values: Readonly<Record<string, unknown>>): QueueFacts {
  const d = q.durability ?? NOT_READ;
  const live = q.live ?? null;
  const kind = toQueueKind(q.type);
  const members = d.members ?? null;
  return {
    name,
    type: q.type,
    kind,
    // Every version reports `durable`; where it did not, nothing about the messages is claimed.
    durable: d.durable ?? true,
    exclusive: d.exclusive ?? false,
    messages: d.durable === undefined ? null : (live?.messages ?? null),
    persistent: live === null ? null : (d.persistent ?? null),
    members,
    online: members === null ? null : (d.online ?? null),
    nodeDown: q.nodeDown === true,
    values,
    reportedDeliveryLimit: d.deliveryLimit ?? null,
  };
}

/** Its consumers, as the queue's GET lists them. */
export function consumerFacts(q: Queue): ConsumerFacts {
  const list = q.durability?.consumers;
  if (list === undefined) return { consumers: null, autoAck: null, unlimitedPrefetch: null };
  return {
    consumers: list.length,
    autoAck: list.filter((c) => !c.ackRequired).length,
    unlimitedPrefetch: list.filter((c) => c.ackRequired && c.prefetch === 0).length,
  };
}

/**
 * The line `which` ends with when `path` would flag something about the messages there now: a
 * restart that loses some, automatic acknowledgement, a poison message dropped, a replicated
 * queue that cannot lose a node. A classic queue living on one node is no news, and the
 * exchanges on the way are not read here: those are `path`'s to say.
 */
export function whichPathLine(
  name: string,
  q: Queue,
  values: Readonly<Record<string, unknown>>,
  hazards: readonly Hazard[],
  version: BrokerVersion,
): string | null {
  if (q.durability === undefined) return null;
  const facts = queueFacts(name, q, values);
  const dlx =
    typeof values['dead-letter-exchange'] === 'string' ? (values['dead-letter-exchange'] as string) : null;
  const missing = hazards.some((h) => h.effect === 'missing-target' && h.key === 'dead-letter-exchange');
  const s = survives(
    {
      version,
      object: { name, kind: 'queue' },
      exchanges: [
        {
          name: DEFAULT_EXCHANGE,
          durable: true,
          alternateExchange: null,
          alternateExists: null,
          alternateRoutes: null,
          routesEvery: false,
          unrouted: null,
        },
      ],
      publishers: { channels: null, confirming: null },
      queue: facts,
      deadLetter: { exchange: dlx || null, exists: dlx ? !missing : null, routes: null },
      consumers: consumerFacts(q),
      nodes: null,
    },
    quoted,
  );
  const news = facts.kind === 'classic' ? { ...s, 'node-loss': { ...s['node-loss'], holds: true } } : s;
  return flagLine(news, transientOf(facts));
}
