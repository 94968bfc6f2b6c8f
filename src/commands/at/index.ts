/** The entrance of commands/at/: `which --at` and `policies --at`, loaded only when `--at` is given (it reads the audit trail). */

export {
  type AroundOf,
  aroundDiff,
  aroundHeading,
  aroundNone,
  aroundWords,
  asWhichSays,
  atHead,
  betweenWords,
  claimsWinner,
  KIND_NOT_ASKED,
  RECOMPUTED,
  threadWords,
  unknownWords,
} from './atWords.ts';
export { type PoliciesAtResult, policiesAt } from './policiesAt.ts';
export { sinceThreadStart, THREAD_AGE_MS, type ThreadChange } from './thread.ts';
export {
  AROUND_MS,
  type AroundEntry,
  type AtKeys,
  type AtTrail,
  type EdgeAnswer,
  type WhichAtResult,
  whichAt,
} from './whichAt.ts';
