/** The entrance of commands/import/: what the other folders of src/ use of it (inside, modules import each other directly). */
export {
  fileImport,
  ImportBody,
  type ImportDeps,
  type ImportOutcome,
  type ImportWords,
  importJson,
  parseImport,
  planSummaryJson,
} from './import.ts';
export { type BotReply, type ImportAnswer, type ImportSent, type ImportSource, sendImport } from './send.ts';
