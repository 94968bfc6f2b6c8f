/** The entrance of commands/which/: what the other folders of src/ use of it (inside, modules import each other directly). */
export {
  isKnownPolicy,
  type PolicyView,
  type UnknownPolicyView,
  type WhichBroker,
  type WhichResult,
  which,
} from './which.ts';
export { consumerFacts, queueFacts } from './whichDurability.ts';
