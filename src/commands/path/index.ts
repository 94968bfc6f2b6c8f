/** The entrance of commands/path/: what the other folders of src/ use of it (inside, modules import each other directly). */
export type { PathBroker } from './chain.ts';
export { type PathExchange, type PathInput, type PathResult, parsePath, path, pathExitCode } from './path.ts';
