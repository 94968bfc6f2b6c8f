import type { Risk } from '../src/policy/risks.ts';
import type { ObjectKind } from '../src/policy/types.ts';

/**
 * The sentences every front door (terminal, Slack) uses for the same states, written once.
 * Views add their own formatting around them.
 */

export const KIND_WORDS: Readonly<Record<ObjectKind, string>> = {
  classic: 'classic queue',
  quorum: 'quorum queue',
  stream: 'stream',
  exchange: 'exchange',
};

/** Why the broker could not be asked (`which` answer `not-asked`), by `why`. */
export const NOT_ASKED_WORDS: Readonly<Record<string, string>> = {
  unreachable: 'the broker could not be reached',
  timeout: 'the broker did not answer in time',
  unauthorized: "the broker refused the bot's credentials",
  'broker-error': 'the broker answered with an error',
  forbidden: "the bot's broker user may not read that vhost",
  missing: 'that vhost does not exist',
  'refused-by-broker': 'the broker refused the request',
  'too-large': "the broker's answer was larger than the bot reads",
};

/** Why the broker did not report the object's policy (`which` answer `not-reported`), by `why`. */
export const NOT_REPORTED_WORDS: Readonly<Record<string, string>> = {
  missing: 'it does not exist',
  forbidden: "the bot's broker user may not read it",
  'stats-pending': 'the broker has not published its statistics for it yet',
};

/** Why a policy that matched does not apply, by `alsoMatched[].reason`. */
export const NOT_APPLIED_WORDS = {
  'lower-priority': 'lower priority than the one in force, so it contributes nothing to this object',
  'same-priority': 'same priority: which one the broker picks is not defined',
  'refused-key': 'sets a key this object type refuses, so it never applies to it',
} as const;

/** What losing a key means to a person, by risk (`summary.risks[].words`). */
export const RISK_WORDS: Readonly<Record<Risk, string>> = {
  'dead-letter': 'lose a dead-letter target',
  ttl: 'lose a TTL (message-ttl or expires)',
  limit: 'lose a length limit',
  'delivery-limit': 'lose a delivery limit',
  federation: 'lose a federation upstream',
  'alternate-exchange': 'lose an alternate exchange',
  retention: 'lose a stream retention setting',
};
