/** Change requests: states and transitions, the Redis store, who may approve, the apply job, the audit trail. */
export * from './approvers.ts';
export * from './broker.ts';
export * from './errors.ts';
export * from './types.ts';
