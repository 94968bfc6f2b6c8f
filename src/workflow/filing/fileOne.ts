import { writeActionOf } from '../../policy/index.ts';
import { type PreviewInput, preview } from '../../preview/index.ts';
import { WorkflowError } from '../errors.ts';
import { environmentRefusal, fileRefusal, vhostRefusal } from '../rules.ts';
import { derivedRequestId } from '../timebox/timebox.ts';
import type { ChangeRequest, Filed, FileInput } from '../types.ts';
import type { WorkflowContext } from './context.ts';
import { assertIdentityCanWrite } from './identity.ts';
import { type Filing, newRequest, snapshotOf } from './newRequest.ts';

/** Filing one change: checked (rules, the broker's identity), previewed, stored. */
export function createFileOne(ctx: WorkflowContext) {
  const { options, store, storeCall } = ctx;

  /** The request `input` files, checked and previewed as filing does, not stored yet. */
  async function requestFor(input: FileInput, filing: Filing): Promise<Filed> {
    const env = ctx.environment(input.env);
    const closed = environmentRefusal(env) ?? vhostRefusal(env, input.vhost);
    if (closed) throw new WorkflowError(closed);
    if (!filing.askedWithChange)
      await ctx.assertMayRequest(env, input.requester.user, filing.reviewing === true);
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
    await assertIdentityCanWrite(broker, input.vhost, input.layer);

    const result = await preview(previewInput, broker);
    if (result.status === 'refused') {
      throw new WorkflowError(
        { code: 'preview-refused', refusals: result.refusals.map((p) => p.message) },
        { preview: result },
      );
    }
    if (result.status === 'not-asked') {
      throw new WorkflowError(
        { code: 'broker-not-asked', why: result.why, detail: result.detail },
        { preview: result },
      );
    }
    if (result.diff.unchanged) throw new WorkflowError({ code: 'nothing-to-do' }, { preview: result });
    // After the preview: a change the broker would refuse is told before a missing reason.
    const reason = input.requester.reason?.trim();
    const refused = fileRefusal({ env, action: input.action, reason });
    if (refused) throw new WorkflowError(refused, { preview: result });

    const request = newRequest(
      env,
      filing,
      {
        vhost: input.vhost,
        layer: input.layer,
        policy: input.policy,
        before: result.change.before,
        after: result.change.after,
        preview: snapshotOf(result),
        requester: { user: input.requester.user, reason },
        origin: input.origin,
        timeBoxMs: input.timeBoxMs,
      },
      ctx.now(),
    );
    return { request, preview: result };
  }

  async function fileRequest(input: FileInput, filing: Filing): Promise<Filed> {
    const filed = await requestFor(input, filing);
    const { request } = filed;
    if (!(await storeCall('create', () => store.create(request))))
      throw new WorkflowError({ code: 'already-filed', id: request.id });
    ctx.log.info(
      { requestId: request.id, env: request.env, vhost: request.vhost, policy: request.policy },
      'request filed',
    );
    return filed;
  }

  /** A request gone stale on a bigger loss, filed again as it was, under an id derived from its. */
  async function fileAgain(staleId: string): Promise<Filed> {
    const stale = await storeCall('get', () => store.get(staleId));
    if (!stale) throw new WorkflowError({ code: 'not-found', what: 'change request', id: staleId });
    if (stale.state !== 'stale' || stale.staleBecause !== 'loss-grew')
      throw new Error(`${staleId} did not go stale on a bigger loss: not filed again`);
    const id = derivedRequestId('again', staleId);
    if (await storeCall('get', () => store.get(id)))
      throw new Error(`${staleId} was filed again already, as ${id}`);
    return fileRequest(againInput(stale), {
      action: stale.action,
      id,
      againOf: staleId,
      approvalsChannel: stale.approvalsChannel,
      ...(stale.revertOf ? { revertOf: stale.revertOf } : {}),
    });
  }

  return { requestFor, fileRequest, fileAgain };
}

/** The same change: the policy it writes (or its deletion), on what is there now. */
function againInput(stale: ChangeRequest): FileInput {
  return {
    env: stale.env,
    vhost: stale.vhost,
    layer: stale.layer,
    action: writeActionOf(stale),
    policy: stale.policy,
    fields: stale.after ?? {},
    requester: stale.requester,
    origin: stale.origin,
    ...(stale.timeBoxMs === undefined ? {} : { timeBoxMs: stale.timeBoxMs }),
  };
}
