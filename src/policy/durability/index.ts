/** The entrance of policy/durability/: what the other folders of src/ use of it (inside, modules import each other directly). */
export {
  alternateOf,
  type ConsumerFacts,
  countsDroppedUnroutable,
  DEFAULT_EXCHANGE,
  type DeadLetterFacts,
  deadLetterExchangeOf,
  deliveryLimitOf,
  type ExchangeFacts,
  type Poison,
  type PublisherFacts,
  poisonOf,
  type QueueFacts,
  requeueCountsTowardLimit,
  restartKeepsTransientExchanges,
  transientOf,
} from './facts.ts';
export {
  type BindingFacts,
  DURABILITY_KINDS,
  DURABILITY_SEVERITY,
  type DurabilityFinding,
  type DurabilityKind,
  DurabilityLint,
  durabilityWhy,
  type LintQueue,
} from './findings.ts';
export {
  type Chain,
  FAILURES,
  type Failure,
  failuresFirst,
  flagLine,
  type Survives,
  survives,
  type Verdict,
} from './verdict.ts';
