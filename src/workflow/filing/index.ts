/** The entrance of workflow/filing/: what the other folders of src/ use of it (inside, modules import each other directly). */
export { createApproverDirectory, type ListGroupMembers } from './approvers.ts';
export { createWorkflow, type WorkflowDeps } from './workflow.ts';
