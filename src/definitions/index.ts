/** The entrance of definitions/: what the other folders of src/ use of it (inside, modules import each other directly). */

export { secretWords } from './manifestParameters.ts';
export {
  type DeclaredTarget,
  type DefinitionsFile,
  type DefinitionsSource,
  definitionSchema,
  type FederationNames,
  type FileParameter,
  type FilePolicy,
  MAX_DEPTH,
  MAX_FILE_BYTES,
  MAX_POLICIES,
  missingVhostWords,
  type ReadDefinitions,
  type ReadOptions,
  readDefinitions,
  readDefinitionsFolder,
  type VhostOrigin,
  withDeclared,
} from './read.ts';
