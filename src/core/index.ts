/** The entrance of core/: what the other folders of src/ use of it (inside, modules import each other directly). */
export { CloseNames, closeNames } from './didYouMean.ts';
export { formatDuration, parseDuration } from './duration.ts';
export { CodedError, ConfigError, codeOf, InputError } from './errors.ts';
export { type Instant, type InstantForm, instantWords, parseInstant, TIME_FORMS } from './instant.ts';
export { onFirstUse } from './onFirstUse.ts';
export { type RetryPolicy, type RetryVerdict, retryDelay, SleepAborted, sleep } from './retry.ts';
export { isSlackGroupId, isSlackUserId } from './slackIds.ts';
export { maskUri, maskUris, maskUrisIn } from './uri.ts';
export {
  checkScope,
  closeVhosts,
  inScope,
  missingVhost,
  missingVhostError,
  missingVhostSentence,
  outsideScope,
  type VhostLister,
} from './vhosts.ts';
