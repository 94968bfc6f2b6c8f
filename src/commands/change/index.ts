/** The entrance of commands/change/ (create, edit, delete, recreate): what the other folders of src/ use of it. */
export { type ChangeAction, type ChangeWords, parseChange, parseThreadLink } from './change.ts';
export { parseRecreate, type RecreateWords } from './recreate.ts';
