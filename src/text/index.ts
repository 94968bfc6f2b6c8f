/** The entrance of text/: what the other folders of src/ use of it (inside, modules import each other directly). */
export {
  asWritten,
  definitionWritten,
  jsonText,
  jsonWritten,
  quoted,
  showInvisible,
  terminalText,
  valueWritten,
  type WrittenFields,
} from './asWritten.ts';
export { agree, count, namesOrCount } from './count.ts';
