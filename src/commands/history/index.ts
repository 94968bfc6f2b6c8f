/** The entrance of commands/history/: what the other folders of src/ use of it (inside, modules import each other directly). */
export {
  type HistoryContext,
  type HistoryInput,
  type HistoryResult,
  type HistorySource,
  type HistoryWindow,
  type HistoryWindowJson,
  history,
  historyExitCode,
  parseHistory,
  type ReadLog,
  unreadableSentence,
  verifySentence,
  windowSentence,
  withReview,
} from './history.ts';
