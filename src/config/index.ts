/** The entrance of config/: what the other folders of src/ use of it (inside, modules import each other directly). */
export {
  type AmqpEndpoint,
  type Config,
  DEFAULT_KEY_PREFIX,
  type Environment,
  loadConfig,
  loadTerminalConfig,
  pickEnvironment,
  QUESTION_BUDGET_MS,
  questionBudget,
  type TerminalConfig,
  type TerminalEnvironment,
} from './config.ts';
export { isSentinelUrl, parseSentinels, sentinelUrl } from './redisAddress.ts';
