/** The entrance of policy/pattern/: what the other folders of src/ use of it (inside, modules import each other directly). */
export {
  CompiledPattern,
  isAnchored,
  nameView,
  PatternCache,
  type PendingVerdicts,
  pendingVerdicts,
} from './pattern.ts';
