/** The entrance of commands/change/ (create, edit, delete): what the other folders of src/ use of it. */
export { type ChangeAction, type ChangeWords, parseChange, parseThreadLink } from './change.ts';
