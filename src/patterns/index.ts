/** The entrance of patterns/: what the other folders of src/ use of it (inside, modules import each other directly). */
export { BacktrackingReader, defaultReader } from './reader.ts';
export { resolveRead, settleSimulation } from './resolveRead.ts';
