/** The entrance of commands/: what the other folders of src/ use of it (inside, modules import each other directly). */
export { parseDefinitionText } from './definition.ts';
export { helpText } from './help.ts';
export { type FlagDefaults, givesFlag, parseArgs, parseWhich, vhostMapOf } from './parse.ts';
export { type CommandName, commandsOf, type TerminalCommandName, usageOf } from './registry.ts';
export { splitSlackText } from './split.ts';
export {
  asSentence,
  BROKER_FAILURE_WORDS,
  deleteWarning,
  didYouMeanWords,
  type IncompleteJson,
  incompleteJson,
  incompleteWords,
  KIND_WORDS,
  kindWords,
  lossUnknownWords,
  NOT_ASKED_WORDS,
  OPERATOR_POLICIES_NOT_LISTED,
  POLICIES_TIE_WORDS,
  reachWords,
  UNANCHORED_MARK,
  WHICH_WORDS,
} from './words.ts';
