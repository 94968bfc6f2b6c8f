/** The entrance of commands/history/: what the other folders of src/ use of it (inside, modules import each other directly). */
export {
  type HistoryInput,
  type HistoryResult,
  type HistorySource,
  history,
  historyExitCode,
  parseHistory,
  type ReadLog,
  unreadableSentence,
  verifySentence,
  withReview,
} from './history.ts';
