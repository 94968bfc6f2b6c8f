import { type PreviewAnswer, type PreviewInput, preview } from '../preview/preview.ts';
import { isRabbitError } from '../rabbit/index.ts';
import { AuditTrail } from './audit.ts';
import { WorkflowError } from './errors.ts';
import { expireDue } from './expiry.ts';
import { whyIdentityCannotWrite } from './identity.ts';
import { newRequestId, RequestStore } from './store.ts';
import type {
  ChangeRequest,
  DecideInput,
  DecideResult,
  Filed,
  FileInput,
  Notifier,
  Origin,
  PreviewSnapshot,
  RequestAction,
  Workflow,
  WorkflowEnvironment,
  WorkflowOptions,
} from './types.ts';

/**
 * The workflow's front: filing (checks, preview, store), deciding (one atomic move), reverts,
 * expiry. Applying is the worker's (worker.ts); both share the store and the Notifier.
 */
export function createWorkflow(options: WorkflowOptions): Workflow {
  const now = options.now ?? (() => new Date());
  const store = new RequestStore(options.redis, options.keyPrefix, now);
  const audit = new AuditTrail(options.redis, options.keyPrefix);
  const notify = notifierLogging(options.notifier, options.log);

  function environment(name: string | undefined): WorkflowEnvironment {
    const env =
      name === undefined ? options.environments[0] : options.environments.find((e) => e.name === name);
    if (!env) {
      throw new WorkflowError(
        'unknown-env',
        `Unknown environment ${JSON.stringify(name)}; known: ${options.environments.map((e) => e.name).join(', ')}.`,
      );
    }
    return env;
  }

  /** A store call whose Redis failure becomes `store-unavailable`, saying what did not happen. */
  async function storeCall<T>(
    what: string,
    call: () => Promise<T>,
    notDone = 'nothing was filed',
  ): Promise<T> {
    try {
      return await call();
    } catch (err) {
      if (err instanceof WorkflowError) throw err;
      options.log.error({ err }, `request store: ${what} failed`);
      throw new WorkflowError(
        'store-unavailable',
        `The request store (Redis) cannot be reached; ${notDone}. Try again in a moment.`,
        {},
        { cause: err },
      );
    }
  }

  async function fileRequest(input: FileInput, action: RequestAction, revertOf?: string): Promise<Filed> {
    const env = environment(input.env);
    if (env.mode === 'read-only') {
      throw new WorkflowError(
        'read-only-env',
        `Environment ${env.name} is read-only: the bot changes no policy there.`,
      );
    }
    // Before the broker is asked: a request that cannot be stored is refused at once.
    await storeCall('ping', () => options.redis.ping());
    const broker = options.brokerFor(env.name);
    const previewInput: PreviewInput = {
      action: input.action,
      name: input.policy,
      layer: input.layer,
      vhost: input.vhost,
      env: env.name,
      fields: input.fields,
    };
    let cannot: string | null;
    try {
      cannot = await whyIdentityCannotWrite(broker, input.vhost, input.layer);
    } catch (err) {
      if (!isRabbitError(err)) throw err;
      throw new WorkflowError(
        'broker-not-asked',
        `The broker could not be asked (${err.code}): ${err.reason ?? err.message}`,
        {},
        { cause: err },
      );
    }
    if (cannot) throw new WorkflowError('identity-cannot-write', cannot, { reason: cannot });

    const result = await preview(previewInput, broker);
    if (result.status === 'refused') {
      throw new WorkflowError('preview-refused', result.refusals.map((p) => p.message).join(' '), {
        preview: result,
      });
    }
    if (result.status === 'not-asked') {
      throw new WorkflowError(
        'broker-not-asked',
        `The broker could not be asked (${result.why})${result.detail ? `: ${result.detail}` : ''}.`,
        { preview: result },
      );
    }
    if (result.diff.unchanged) {
      throw new WorkflowError(
        'nothing-to-do',
        `Policy ${input.policy} already is exactly this; there is nothing to change.`,
        { preview: result },
      );
    }
    const reason = input.requester.reason?.trim();
    if (!reason && (input.action === 'delete' || env.mode === 'guarded')) {
      throw new WorkflowError(
        'reason-required',
        input.action === 'delete'
          ? 'A delete needs your reason (--reason TEXT).'
          : `Environment ${env.name} is guarded: every change needs your reason (--reason TEXT).`,
        { preview: result },
      );
    }

    const created = now();
    const request: ChangeRequest = {
      id: newRequestId(),
      env: env.name,
      vhost: input.vhost,
      layer: input.layer,
      action,
      policy: input.policy,
      before: result.change.before,
      after: result.change.after,
      preview: snapshotOf(result),
      requester: { user: input.requester.user, ...(reason ? { reason } : {}) },
      origin: input.origin,
      ...(env.approvalsChannel ? { approvalsChannel: env.approvalsChannel } : {}),
      state: 'pending',
      createdAt: created.toISOString(),
      expiresAt: new Date(created.getTime() + env.requestTtlMs).toISOString(),
      updatedAt: created.toISOString(),
      ...(revertOf ? { revertOf } : {}),
      ...(input.timeBoxMs !== undefined ? { timeBoxMs: input.timeBoxMs } : {}),
    };
    await storeCall('create', () => store.create(request));
    options.log.info(
      { requestId: request.id, env: env.name, vhost: input.vhost, policy: input.policy },
      'request filed',
    );
    return { request, preview: result };
  }

  return {
    file: (input) => fileRequest(input, input.action),

    async decide(id, input: DecideInput): Promise<DecideResult> {
      const reason = input.reason.trim();
      if (!reason) {
        throw new WorkflowError(
          'reason-required',
          input.kind === 'approve' ? 'An approval needs your reason.' : 'A rejection needs your reason.',
        );
      }
      const undecided = 'nothing was decided';
      const request = await storeCall('get', () => store.get(id), undecided);
      if (!request) throw new WorkflowError('not-found', `No change request ${id}.`);
      const own = input.user === request.requester.user;
      if (input.kind === 'approve' && own) {
        throw new WorkflowError('self-approval', 'You filed this request: someone else must approve it.', {
          request,
        });
      }
      // The requester may withdraw their own request; anyone else deciding must be an approver.
      if (!own && !(await options.approvers.isApprover(request.env, input.user))) {
        throw new WorkflowError(
          'not-approver',
          `You are not among the approvers of environment ${request.env}.`,
          { request },
        );
      }
      const outcome = await storeCall(
        'decide',
        () =>
          store.transition(id, {
            from: ['pending'],
            to: input.kind === 'approve' ? 'approved' : 'rejected',
            checkDeadline: true,
            set: { decision: { kind: input.kind, by: input.user, reason, at: now().toISOString() } },
          }),
        undecided,
      );
      if (outcome.kind === 'missing') throw new WorkflowError('not-found', `No change request ${id}.`);
      if (outcome.kind === 'expired') {
        await notify.stateChanged(outcome.request);
        return { outcome: 'expired', request: outcome.request };
      }
      if (outcome.kind === 'moved') {
        return {
          outcome: outcome.request.state === 'expired' ? 'expired' : 'already-decided',
          request: outcome.request,
        };
      }
      options.log.info({ requestId: id, decision: input.kind, by: input.user }, 'request decided');
      if (input.kind === 'approve') {
        try {
          await options.queue.enqueue(id);
        } catch (err) {
          // The request stays `approved`: the worker's sweep queues every approved request it finds.
          options.log.error({ err, requestId: id }, 'apply job not queued; the worker sweep will queue it');
        }
      }
      await notify.stateChanged(outcome.request);
      return { outcome: 'decided', request: outcome.request };
    },

    get: (id) => storeCall('get', () => store.get(id), 'nothing was read'),
    listOpen: (env) => storeCall('list', () => store.listOpen(env), 'nothing was read'),

    async attachMessage(id, channel, ts) {
      const r = await storeCall(
        'attach',
        () => store.attachMessage(id, channel, ts),
        'the message was not recorded',
      );
      if (!r) throw new WorkflowError('not-found', `No change request ${id}.`);
      return r;
    },

    async revertRequestFor(auditId, user, origin?: Origin, reason?: string) {
      const record = await audit.get(auditId);
      if (!record) throw new WorkflowError('not-found', `No audit record ${auditId}.`);
      const env = environment(record.env);
      const target = record.before;
      const action = target === null ? 'delete' : record.after === null ? 'create' : 'edit';
      const where = origin ?? (env.approvalsChannel ? { channel: env.approvalsChannel } : undefined);
      if (!where)
        throw new WorkflowError(
          'unknown-env',
          `Environment ${env.name} has no approvals channel to answer in.`,
        );
      return fileRequest(
        {
          env: record.env,
          vhost: record.vhost,
          layer: record.operator ? 'operator' : 'user',
          action,
          policy: record.policy,
          fields: target ?? {},
          requester: { user, ...(reason ? { reason } : {}) },
          origin: where,
        },
        'revert',
        auditId,
      );
    },

    expireDue: () => expireDue(store, notify),
  };
}

export function snapshotOf(p: PreviewAnswer): PreviewSnapshot {
  return {
    brokerVersion: p.brokerVersion,
    summary: p.summary,
    warnings: p.warnings,
    diff: p.diff,
    objects: p.objects.length,
    unpredictable: p.unpredictable.length,
  };
}

/** The Notifier, with each failure logged instead of thrown: a post that fails never undoes a transition. */
export function notifierLogging(n: Notifier, log: WorkflowOptions['log']): Notifier {
  const guard =
    <A extends unknown[]>(what: string, f: (...a: A) => Promise<void>) =>
    async (...a: A) => {
      try {
        await f(...a);
      } catch (err) {
        log.error({ err, requestId: (a[0] as ChangeRequest).id }, `notifier.${what} failed`);
      }
    };
  return {
    stateChanged: guard('stateChanged', (r) => n.stateChanged(r)),
    applied: guard('applied', (r, rec) => n.applied(r, rec)),
    failed: guard('failed', (r) => n.failed(r)),
    stale: guard('stale', (r, p) => n.stale(r, p)),
  };
}
