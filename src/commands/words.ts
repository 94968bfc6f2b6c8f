import type { NotApplied, ObjectKind } from '../policy/index.ts';
import type { RabbitErrorCode, Unread, UnreadWhat } from '../rabbit/index.ts';

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

/**
 * What went wrong asking the broker, keyed by the management client's error codes: the one
 * table every front door words a broker failure from.
 */
export const BROKER_FAILURE_WORDS: Readonly<Record<RabbitErrorCode, string>> = {
  unreachable: 'the broker could not be reached',
  timeout: 'the broker did not answer in time',
  unauthorized: "the broker refused the bot's credentials",
  forbidden: "the bot's broker user may not read this",
  'not-found': 'the broker does not know that vhost or object',
  'refused-by-broker': 'the broker refused the request',
  'broker-error': 'the broker answered with an error',
  'bad-response': "the broker's answer could not be read",
  'too-large': "the broker's answer was larger than the bot reads",
};

/** Why the broker could not be asked (`which` answer `not-asked`, preview `not-asked`), by `why`. */
export const NOT_ASKED_WORDS: Readonly<Record<string, string>> = {
  ...BROKER_FAILURE_WORDS,
  forbidden: "the bot's broker user may not read that vhost",
  missing: 'that vhost does not exist',
};

/** As a sentence of its own. */
export const asSentence = (words: string): string => `${words.charAt(0).toUpperCase()}${words.slice(1)}.`;

/** The object's type in words; a queue type this bot does not know is named as the broker names it. */
export function kindWords(kind: string): string {
  return KIND_WORDS[kind as ObjectKind] ?? `queue of type ${kind}`;
}

/**
 * Said at the top of every delete preview, and on the approval message of a delete: a delete
 * restores no default, the resolution simply runs again without the policy.
 */
export const DELETE_WARNING =
  'Deleting a policy restores no default: every object it governs falls back to the next policy that matches it, or, when none does, to its own arguments alone — and that can silently take away a TTL or a dead-letter target.';

/** The same for an operator policy: the user policy stays, only the ceiling on top goes. */
export const OPERATOR_DELETE_WARNING =
  'Deleting an operator policy restores no default: every object it governs keeps its user policy and falls back to the next operator policy that matches it, or to none — and that can silently lift a limit the operator policy capped.';

export function deleteWarning(operator: boolean): string {
  return operator ? OPERATOR_DELETE_WARNING : DELETE_WARNING;
}

const SCOPE_WORDS: Readonly<Record<string, string>> = {
  all: 'queue or exchange',
  queues: 'queue',
  exchanges: 'exchange',
  classic_queues: 'classic queue',
  quorum_queues: 'quorum queue',
  streams: 'stream',
};

/**
 * A create or edit reaches names by pattern, not the objects there now: said in its preview.
 * `pattern` comes formatted by the front door; `unanchored`: it does not start with `^`.
 */
export function reachWords(pattern: string, applyTo: string, unanchored: boolean): string {
  const what = SCOPE_WORDS[applyTo] ?? 'object';
  const how = unanchored
    ? `contains a match of ${pattern} anywhere (the pattern is unanchored: it does not start with ^)`
    : `matches ${pattern}`;
  return `It reaches every ${what} whose name ${how}: the ones there now, and every one created later.`;
}

/** How a pattern that does not start with ^ is marked wherever a policy is listed. */
export const UNANCHORED_MARK = 'unanchored: it matches every name that contains it';

/** Said when this identity may not list the operator policies; the rest of the answer stands. */
const NOT_READ = "The operator policies could not be read with the bot's broker user";
export const OPERATOR_POLICIES_NOT_LISTED = `${NOT_READ}, so they are not in this list.`;

/** Under a list of policies where some share a priority. */
export const POLICIES_TIE_WORDS =
  'Policies marked tie share a priority: on an object both match, which one the broker picks is not defined.';

/**
 * "No queue `orders.adit`; did you mean `orders.audit`?" — `show` formats each name for where it
 * is read (inline code in Slack, quoted in the terminal); an exchange among queues says so.
 */
export function didYouMeanWords(
  what: string,
  typed: string,
  names: readonly { name: string; kind?: string }[],
  show: (name: string) => string,
): string {
  const shown = names.map(
    (n) => `${show(n.name)}${n.kind === 'exchange' && what !== 'exchange' ? ' (exchange)' : ''}`,
  );
  const list = shown.length > 1 ? `${shown.slice(0, -1).join(', ')} or ${shown[shown.length - 1]}` : shown[0];
  return `No ${what} ${show(typed)}; did you mean ${list}?`;
}

const NOT_REPORTED: Readonly<Record<string, string>> = {
  missing: 'it does not exist',
  forbidden: "the bot's broker user may not read it",
  'stats-pending': 'the broker has not published its statistics for it yet',
  past: 'the broker cannot be asked about the past: recomputed from the trail',
};

const NOT_APPLIED: Readonly<Record<NotApplied, (kind: string) => string>> = {
  'lower-priority': () => 'lower priority than the one in force, so it contributes nothing to this object',
  'same-priority': () => 'the same priority as the one in force: which one the broker picks is not defined',
  'refused-key': (kind) => `sets a key a ${kind} refuses, so it never governs it`,
  'key-rules-unknown': (kind) =>
    `a higher priority than the one in force, which the broker passed over: a ${kind} probably refuses one of its keys, but which keys that type refuses this bot does not know`,
};

/**
 * The words of a `which` answer, for both its views (terminal, Slack), each view adding its own
 * formatting (a heading in bold in Slack, indented in the terminal).
 */
export const WHICH_WORDS = {
  /** Why the broker did not report the object's policy (answer `not-reported`), by `why`. */
  notReported: NOT_REPORTED,
  /** Why a policy that matched does not apply, by `alsoMatched[].reason`, for an object of this kind (in words). */
  notApplied: NOT_APPLIED,
  /**
   * When the broker did not report: beside a later match in the list by priority, why it is not
   * the first (nothing when it only comes later).
   */
  laterMatch(reason: NotApplied, kind: string): string | undefined {
    if (reason === 'refused-key') return NOT_APPLIED['refused-key'](kind);
    return reason === 'same-priority' ? 'same priority as the first' : undefined;
  },
  /** Said of an object whose type's key rules this bot does not know. */
  keyRulesUnknown: (kind: string): string =>
    `This bot does not know which keys a ${kind} refuses, nor how its own arguments combine with a policy's: it assumes no key is refused, and the broker's report is the answer.`,
  /** A policy the broker reports that is not among the vhost's policies now: only its name is known. */
  onlyNameKnown: "not among the vhost's policies now (deleted a moment ago?): only its name is known",
  /** When this identity may not list the operator policies; the rest of the answer stands. */
  operatorPoliciesNotRead: `${NOT_READ}: the operator layer shown is only what the broker reports for this object, by name (it reports none for exchanges).`,
  /** Where a value the object uses comes from, by `effective.<key>.from`. */
  from: {
    policy: 'policy',
    'operator-policy': 'operator policy',
    both: 'both: the stricter value',
    arguments: 'its own argument',
  },
  /** Beside a value the object's type takes and does nothing with on this broker (`effective.<key>.noEffect`). */
  noEffect: (kind: string, brokerVersion: string | undefined): string =>
    `no effect on ${/^[aeiou]/.test(kindWords(kind)) ? 'an' : 'a'} ${kindWords(kind)}${brokerVersion ? ` on RabbitMQ ${brokerVersion}` : ''}`,
  /** What `which` did not find: the kind asked about, or either when none was given. */
  missingObject: (kind: string, kindAssumed: boolean): string =>
    kindAssumed ? 'queue or exchange' : kindWords(kind),
  /** The parts' headings and the sentences both views say as they are. */
  matchesByPriority: 'Matches, by priority',
  firstByPriority: 'first by priority',
  noneCanApply: 'Matches, none of which can apply',
  alsoMatched: 'Also matched, and does not apply',
  noUserPolicyMatches: 'No user policy matches it.',
  operatorOnTop:
    'An operator policy applies on top of whichever user policy governs: for limits both set, the stricter value holds.',
  /** Beside `operatorAlsoMatched`: the operator policies that match and do not apply. */
  operatorAlsoMatched: 'Operator policies that match it, and do not apply',
  /**
   * Nothing governs the object (or would, by the bot's reading, when the broker did not report).
   * "Matches" only when no policy of either layer matches its name; else none applies.
   */
  nothingGoverns(r: {
    readonly answer: string;
    readonly alsoMatched: readonly unknown[];
    readonly operatorAlsoMatched?: readonly unknown[];
  }): { heading: string; why: string } {
    const anyMatched = r.alsoMatched.length > 0 || (r.operatorAlsoMatched?.length ?? 0) > 0;
    return {
      heading:
        r.answer === 'not-reported' ? 'Nothing would govern this object' : 'Nothing governs this object',
      why: `no user policy and no operator policy ${anyMatched ? 'applies to' : 'matches'} it.`,
    };
  },
  nothingClaimed: 'Nothing is claimed about this object.',
} as const;

const UNREAD_WORDS: Readonly<Record<UnreadWhat, string>> = {
  'queue-statistics': "the queues' statistics (messages, consumers)",
  'federation-upstreams': 'the federation upstreams',
};

/** What an answer cannot claim when a reading is missing, by command. */
const UNKNOWN_WORDS = {
  loss: 'what the change loses is not known',
  findings: 'what they would find is not claimed either way',
} as const;

/** Why a reading failed, and what to do about it, by the client's error code. */
function failureWords(u: Unread): { why: string; fix: string } {
  const seconds = u.budgetMs === undefined ? undefined : Math.round(u.budgetMs / 100) / 10;
  switch (u.why) {
    case 'timeout':
      return {
        why:
          seconds === undefined
            ? 'the broker did not answer in time (timeout)'
            : `timeout after ${seconds} s, the budget RMQ_TIMEOUT gives a question`,
        fix: `raise RMQ_TIMEOUT${seconds === undefined ? '' : ` above ${seconds}s`} and ask again`,
      };
    case 'forbidden':
      return {
        why: "not permitted: the bot's broker user may not read them",
        fix: "check that user's permissions on the vhost and its tags (monitoring reads every queue's statistics)",
      };
    case 'unauthorized':
      return {
        why: "refused: the broker refused the bot's credentials",
        fix: "check the broker user's credentials",
      };
    case 'too-large':
      return {
        why: "the broker's answer was larger than the bot reads",
        fix: 'raise RMQ_MAX_LISTING and ask again',
      };
    default:
      return {
        why: `refused: ${BROKER_FAILURE_WORDS[u.why as RabbitErrorCode] ?? 'the broker could not be asked'}`,
        fix: 'ask again, and check the broker if it keeps failing',
      };
  }
}

/**
 * The sentence an answer that could not read what it depends on leads with, in both front doors
 * (the terminal's first line, the first block in Slack): what could not be read, why, and what to
 * do. `show` formats a vhost's name for where it is read; `consequence`: what the answer cannot
 * claim (`loss` for plan and preview, `findings` for lint). Such an answer exits 3.
 */
export function incompleteWords(
  unread: readonly Unread[],
  consequence: keyof typeof UNKNOWN_WORDS,
  show: (name: string) => string,
): string {
  const [first] = unread;
  if (!first) return '';
  const parts = [...new Set(unread.map((u) => u.what))].map((what) => {
    const vhosts = [...new Set(unread.filter((u) => u.what === what).map((u) => u.vhost))];
    return `${UNREAD_WORDS[what]} of vhost${vhosts.length > 1 ? 's' : ''} ${vhosts.map(show).join(', ')}`;
  });
  const { why, fix } = failureWords(first);
  return `INCOMPLETE, not an answer: ${parts.join(' and ')} could not be read — ${why} — so ${UNKNOWN_WORDS[consequence]}. ${asSentence(fix)}`;
}

/**
 * A change request filed on a preview or plan that could not read what its loss depends on: the
 * sentence its approval message (and the requester's reply) leads with. What follows from it is
 * the apply's (src/workflow/apply/): the approval accepts no loss, so a loss found before the
 * write makes the request stale (filed again with the numbers), and a reading that fails again
 * writes nothing.
 */
export function lossUnknownWords(unread: readonly Unread[], show: (name: string) => string): string {
  const [first] = unread;
  if (!first) return '';
  const vhosts = [...new Set(unread.map((u) => u.vhost))];
  const what = [...new Set(unread.map((u) => UNREAD_WORDS[u.what]))].join(' and ');
  return `Loss unknown: ${what} of vhost${vhosts.length > 1 ? 's' : ''} ${vhosts.map(show).join(', ')} could not be read when this was filed — ${failureWords(first).why} — so what the change loses is not shown. Approving it accepts no loss: before writing, the bot reads them again; if it finds any loss the request goes stale and is filed again with the numbers, and if it cannot read them it writes nothing.`;
}

/** The `--json` key of such an answer (docs/json.md, `incomplete`): what could not be read and why. */
export interface IncompleteJson {
  readonly what: readonly UnreadWhat[];
  /** The first reading's reason: the client's error code. */
  readonly why: string;
  /** The sentence the text leads with. */
  readonly message: string;
  readonly unread: readonly Unread[];
}

export function incompleteJson(
  unread: readonly Unread[],
  consequence: keyof typeof UNKNOWN_WORDS,
  show: (name: string) => string,
): IncompleteJson | undefined {
  const [first] = unread;
  if (!first) return undefined;
  return {
    what: [...new Set(unread.map((u) => u.what))],
    why: first.why,
    message: incompleteWords(unread, consequence, show),
    unread,
  };
}
