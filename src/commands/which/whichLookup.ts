import { codeOf, missingVhostError, type VhostLister } from '../../core/index.ts';
import type { LiveQueue } from '../../policy/impact/index.ts';
import type { BrokerVersion, ObjectKind, Policy } from '../../policy/index.ts';
import {
  brokerReason,
  type NotAskedWhy,
  notAskedBecause,
  type QueueDurability,
  toQueueKind,
} from '../../rabbit/index.ts';
import type { WhichInput } from '../parse.ts';
import type { NameLister } from '../suggest.ts';
import type { HazardBroker } from './whichHazards.ts';
import type { WhichLinksBroker } from './whichLinks.ts';

/**
 * What `which` asks the broker about the object: its kind, whether it exists, and the policies
 * the broker reports for it (from statistics, or the queue's record when those are not out yet);
 * and the operator policies, or why this identity may not list them. `which.ts` explains it.
 */

/** What `which` needs of the management API. ManagementClient satisfies it. */
export interface WhichBroker extends NameLister, VhostLister, HazardBroker, WhichLinksBroker {
  overview(): Promise<{ version: BrokerVersion }>;
  getQueue(
    vhost: string,
    name: string,
  ): Promise<{
    type: string;
    arguments?: Readonly<Record<string, unknown>>;
    policy?: string | null | undefined;
    operatorPolicy?: string | null | undefined;
    effectiveDefinition?: Record<string, unknown> | undefined;
    /** Its statistics; null or absent: the broker reports none for it (unknown). */
    live?: LiveQueue | null;
    /** Its node is down (a cluster's): nothing live is known of it. */
    nodeDown?: boolean;
    /** What it says of its durability (`path`); absent: not read. */
    durability?: QueueDurability;
  } | null>;
  getExchange(
    vhost: string,
    name: string,
  ): Promise<{
    policy?: string | null | undefined;
    arguments?: Readonly<Record<string, unknown>>;
    durable?: boolean;
    /** fanout, direct, topic, …: how it routes (`path`'s dead-letter target). */
    type?: string;
    unrouted?: number;
  } | null>;
  /** The user policy from the queue's record, when the detail GET's statistics are not out yet. */
  queuePolicyFromRecord?(vhost: string, name: string): Promise<string | null | undefined>;
  listPolicies(vhost: string): Promise<Policy[]>;
  listOperatorPolicies(vhost: string): Promise<Policy[]>;
}

/** The object as the broker reports it. */
export interface Lookup {
  /** null: a queue of a type this bot does not know (`type` says which). */
  kind: ObjectKind | null;
  /** The broker's word for the object's type. */
  type: string;
  exists: boolean;
  kindAssumed: boolean;
  /** undefined: the broker did not report; null: it reported none. */
  policy: string | null | undefined;
  operatorPolicy: string | null | undefined;
  effective: Record<string, unknown> | undefined;
  arguments: Readonly<Record<string, unknown>>;
  /** A queue's statistics from the same GET; null for exchanges and when not reported. */
  live: LiveQueue | null;
  /** A queue whose node is down: its statistics unknown because of that, not because they lag. */
  nodeDown: boolean;
  /** A queue's GET as the broker answered it (its durability for the `path` line). */
  detail?: NonNullable<Awaited<ReturnType<WhichBroker['getQueue']>>>;
  forbidden?: string;
}

export async function lookUp(broker: WhichBroker, input: WhichInput): Promise<Lookup> {
  const asExchange = async (kindAssumed: boolean): Promise<Lookup | null> => {
    const x = await broker.getExchange(input.vhost, input.name);
    if (!x) return null;
    // Exchanges report `policy` from their record (current); the key is absent when none.
    return {
      kind: 'exchange',
      type: 'exchange',
      exists: true,
      kindAssumed,
      policy: x.policy ?? null,
      operatorPolicy: undefined,
      effective: undefined,
      arguments: x.arguments ?? {},
      live: null,
      nodeDown: false,
    };
  };
  const asQueue = async (): Promise<Lookup | null> => {
    const q = await broker.getQueue(input.vhost, input.name);
    if (!q) return null;
    const kind = toQueueKind(q.type);
    let policy = q.policy === '' ? null : q.policy;
    if (policy === undefined && broker.queuePolicyFromRecord) {
      // Declared seconds ago: no statistics yet. The queue record already knows its policy.
      policy = await broker.queuePolicyFromRecord(input.vhost, input.name);
    }
    return {
      kind,
      type: q.type,
      exists: true,
      kindAssumed: false,
      policy,
      operatorPolicy: q.operatorPolicy === '' ? null : q.operatorPolicy,
      effective: q.effectiveDefinition,
      arguments: q.arguments ?? {},
      live: q.live ?? null,
      nodeDown: q.nodeDown === true,
      detail: q,
    };
  };
  const missing = (kind: ObjectKind, kindAssumed: boolean): Lookup => ({
    kind,
    type: kind,
    exists: false,
    kindAssumed,
    policy: undefined,
    operatorPolicy: undefined,
    effective: undefined,
    arguments: {},
    live: null,
    nodeDown: false,
  });
  try {
    // "" names the default exchange; no queue can have it (declaring "" asks for a generated name).
    if (input.kind === 'exchange' || (input.name === '' && input.kind === undefined)) {
      return (await asExchange(false)) ?? missing('exchange', false);
    }
    const q = await asQueue();
    if (input.kind) {
      // Asked about a quorum queue, found a classic one: the question's object does not exist.
      return q && q.kind === input.kind ? q : missing(input.kind, false);
    }
    return q ?? (await asExchange(false)) ?? missing('classic', true);
  } catch (err) {
    if (codeOf(err) === 'forbidden') {
      return {
        ...missing(input.kind ?? 'classic', input.kind === undefined),
        forbidden: brokerReason(err) ?? 'not allowed',
      };
    }
    throw err;
  }
}

/**
 * Why the reads of a vhost failed, for an answer `not-asked` (`why`, and the broker's reason as
 * `detail`). A vhost that does not exist is not an answer but a mistake to point out: refused
 * with the close names (exit 2; no usage line: the command was typed right), never "nothing governs" (a script would take
 * it as one). Anything else (a bug) is thrown on.
 */
export async function notAskedOf(
  err: unknown,
  broker: VhostLister,
  vhost: string,
): Promise<{ why: NotAskedWhy; detail?: string }> {
  if (codeOf(err) === 'not-found') throw await missingVhostError(broker, vhost);
  const failed = notAskedBecause(err);
  if (!failed) throw err;
  return failed.reason ? { why: failed.why, detail: failed.reason } : { why: failed.why };
}

/** The operator policies, or the broker's reason when this identity may not list them. */
export async function listOperatorPolicies(
  broker: Pick<WhichBroker, 'listOperatorPolicies'>,
  vhost: string,
): Promise<Policy[] | { notRead: string }> {
  try {
    return await broker.listOperatorPolicies(vhost);
  } catch (err) {
    if (codeOf(err) === 'forbidden') return { notRead: brokerReason(err) ?? 'not allowed' };
    throw err;
  }
}
