/** The entrance of commands/use/: what the other folders of src/ use of it. */
export {
  DefaultsUnavailableError,
  type StoredDefaults,
  type UseChannel,
  type UseEnvironments,
  type UseResult,
  use,
} from './use.ts';
