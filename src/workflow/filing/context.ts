import type { Redis } from 'ioredis';
import type { AuditTrail } from '../../audit/index.ts';
import type { FreezeStore } from '../deciding/freeze.ts';
import { orStoreUnavailable, WorkflowError } from '../errors.ts';
import { notifierLogging } from '../notifierLogging.ts';
import { actorRefusal, type DeciderRole, requesterRefusal } from '../rules.ts';
import type { RecordingServices } from '../services.ts';
import type { RequestStore } from '../store.ts';
import type { ChangeRequest, WorkflowEnvironment, WorkflowOptions } from '../types.ts';

/** What the workflow works with, built by the composition root (src/bot/botChangeRequests.ts `workflowDeps`) and handed in. */
export interface WorkflowDeps {
  /** The app's Redis, which the stores sit on: pinged before a filing previews anything. */
  readonly redis: Redis;
  readonly requests: RequestStore;
  /** Read for reverts (the record a revert undoes); appended by the apply job and the watchers. */
  readonly audit: AuditTrail;
  readonly freezes: FreezeStore;
}

/**
 * What every part of the workflow's front shares (filing, reverts, deciding, freezes, the time
 * box's revert): the services, the environment lookup, who is asking, and the store call that
 * turns Redis trouble into `store-unavailable`. Built once by createWorkflow.
 */
export interface WorkflowContext extends RecordingServices {
  readonly options: WorkflowOptions & WorkflowDeps;
  readonly freezes: FreezeStore;
  /** The environment named, or the first when none is; refused `unknown-env` when there is none such. */
  environment(name: string | undefined): WorkflowEnvironment;
  /** Refuses (`not-a-user`) a signed payload whose user is not a person. */
  assertActor(user: string): void;
  /**
   * Refuses (`not-requester`, naming who may ask or approve) a user the environment does not let
   * file; `reviewing`: an approver filing the revert of the break-glass change they review.
   */
  assertMayRequest(env: WorkflowEnvironment, user: string, reviewing?: boolean): Promise<void>;
  /** Who `user` is to `request`: the directory is asked only about someone else. */
  roleOf(request: ChangeRequest, user: string): Promise<DeciderRole>;
  /** A store call whose Redis failure becomes `store-unavailable`, saying what did not happen. */
  storeCall<T>(what: string, call: () => Promise<T>, notDone?: string): Promise<T>;
}

export function workflowContext(options: WorkflowOptions & WorkflowDeps): WorkflowContext {
  const now = options.now ?? (() => new Date());

  function environment(name: string | undefined): WorkflowEnvironment {
    const env =
      name === undefined ? options.environments[0] : options.environments.find((e) => e.name === name);
    if (!env) {
      throw new WorkflowError({
        code: 'unknown-env',
        env: name,
        known: options.environments.map((e) => e.name),
      });
    }
    return env;
  }

  function assertActor(user: string): void {
    const refused = actorRefusal(user);
    if (refused) throw new WorkflowError(refused);
  }

  return {
    options,
    store: options.requests,
    audit: options.audit,
    freezes: options.freezes,
    notify: notifierLogging(options.notifier, options.log),
    log: options.log,
    now,
    environment,
    assertActor,
    async assertMayRequest(env, user, reviewing = false) {
      assertActor(user);
      const requesters = options.approvers.requesters(env.name);
      const refused = requesterRefusal({
        env: env.name,
        requesters,
        isRequester: requesters.length > 0 && (await options.approvers.isRequester(env.name, user)),
        approvers: options.approvers.configured(env.name),
        reviewing,
      });
      if (refused) throw new WorkflowError(refused);
    },
    async roleOf(request, user) {
      if (user === request.requester.user) return 'requester';
      return (await options.approvers.isApprover(request.env, user)) ? 'approver' : 'other';
    },
    storeCall(what, call, notDone = 'nothing was filed') {
      return orStoreUnavailable(notDone, call, (err) =>
        options.log.error({ err }, `request store: ${what} failed`),
      );
    },
  };
}
