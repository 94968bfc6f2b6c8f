/** The entrance of commands/preview/: what the other folders of src/ use of it (inside, modules import each other directly). */
export { parsePreview, previewExitCode, previewIncompleteWords, previewJson } from './preview.ts';
