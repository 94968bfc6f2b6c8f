/** The entrance of commands/policies/: what the other folders of src/ use of it (inside, modules import each other directly). */
export { type ListedPolicy, type PoliciesResult, parsePolicies, policies } from './policies.ts';
