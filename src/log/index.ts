/** The entrance of log/: what the other folders of src/ use of it (inside, modules import each other directly). */
export { createLogger, type Logger } from './log.ts';
