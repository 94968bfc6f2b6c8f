/** The entrance of commands/freeze/ (freeze, unfreeze): what the other folders of src/ use of it. */
export { type FreezeKind, type FreezeResult, type FreezeWords, parseFreeze, runFreeze } from './freeze.ts';
