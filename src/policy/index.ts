/** The entrance of policy/: what the other folders of src/ use of it (inside, modules import each other directly). */
export {
  actionOf,
  addressKey,
  canonical,
  differences,
  fromCanonical,
  type PolicyAddress,
  samePolicy,
  sorted,
  stateOf,
  type Transition,
  writeActionOf,
} from './compare.ts';
export { auditObject, auditObjects, type PolicyDiff, policyDiff } from './diff.ts';
export { type EffectiveValue, effectiveDefinition } from './effective.ts';
export { acceptedApplyTo, defaultDeliveryLimit, scopesMeet } from './keys.ts';
export {
  COMPONENT_WORDS,
  canonicalValue,
  isParameterComponent,
  PARAMETER_COMPONENTS,
  type Parameter,
  type ParameterComponent,
  type ParameterTransition,
  sameParameterValue,
  setUpstreams,
} from './parameter.ts';
export { enabledPlugins, pluginsNeedApplications } from './plugins.ts';
export { type KindOrUnknown, PolicyIndex } from './policyIndex.ts';
export { argumentsApply, type Source, withArguments } from './provenance.ts';
export {
  type AlsoMatched,
  buildPolicySet,
  explainLosers,
  type NotApplied,
  type PolicySet,
  type Resolution,
  resolve,
} from './resolve.ts';
export { keyHasEffect, RISKS, type Risk, riskOf } from './risks.ts';
export {
  type ApplyTo,
  atLeast,
  type BrokerVersion,
  type Definition,
  formatVersion,
  MAX_NAME_BYTES,
  OBJECT_KINDS,
  type ObjectKind,
  type Policy,
  type PolicyLayer,
  parseVersion,
  utf8Length,
} from './types.ts';
export {
  type DeprecatedUse,
  TARGET_VERSIONS,
  type TargetVersion,
  type UpgradeMatches,
  type UpgradeNote,
  type UpgradeObjectFacts,
  upgradeNotes,
} from './upgrade.ts';
