/** The entrance of slack/: what the other folders of src/ use of it (inside, modules import each other directly). */
export {
  type AppDeps,
  type BotApp,
  createApp,
  missingSlackMessage,
  missingSlackSettings,
  slackGroupMembers,
} from './app.ts';
export { createDelivery, type DeliveryOptions } from './delivery.ts';
export { environmentDirectory, pickForVhosts } from './environments.ts';
export { slackLinksNotifier } from './linksNotifier.ts';
export { type LintDigest, startLintDigest } from './lintDigest.ts';
export { slackOutsideNotifier } from './outsideNotifier.ts';
export { createSlackNotifier } from './requests/notifier.ts';
export { type ChangeRequests, createChangeRequests, type FileOutcome } from './requests/service.ts';
