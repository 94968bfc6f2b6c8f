/** The entrance of slack/: what the other folders of src/ use of it (inside, modules import each other directly). */
export { type AppDeps, type BotApp, createApp, missingSlackMessage, missingSlackSettings } from './app.ts';
export { type LintDigest, startLintDigest } from './lintDigest.ts';
export { slackOutsideNotifier } from './outsideNotifier.ts';
