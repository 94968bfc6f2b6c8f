/** The entrance of policy/validate/: what the other folders of src/ use of it (inside, modules import each other directly). */
export type { Problem } from './problem.ts';
export {
  type DefinitionPatch,
  nameTooLong,
  type ProposedFields,
  type Validation,
  validate,
} from './validate.ts';
export { pluginKeyWords } from './validateDefinition.ts';
