/** The entrance of commands/requests/: what the other folders of src/ use of it (inside, modules import each other directly). */
export {
  type FrozenEnvironment,
  parseRequests,
  type RequestEntry,
  type RequestsInput,
  type RequestsResult,
  type RequestsSource,
  requestEntry,
  requests,
} from './requests.ts';
