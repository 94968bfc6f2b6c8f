import { assertMayBreakGlassAtFiling, createBreakGlass } from '../deciding/breakGlass.ts';
import { createDecide } from '../deciding/decide.ts';
import { expireDue } from '../deciding/expiry.ts';
import { createFreezing } from '../deciding/freezing.ts';
import { WorkflowError } from '../errors.ts';
import { createTimeBoxRevert } from '../timebox/timeboxRevert.ts';
import type { FileSetInput, Workflow, WorkflowOptions } from '../types.ts';
import { type WorkflowDeps, workflowContext } from './context.ts';
import { createFileOne } from './fileOne.ts';
import { createFileSet } from './fileSet.ts';
import { createRecreate } from './recreate.ts';
import { createReverts } from './reverts.ts';

export type { WorkflowDeps } from './context.ts';

/**
 * The workflow's front, wired from its parts: filing one change (fileOne.ts) or a set (fileSet.ts),
 * reverts (reverts.ts), deciding (deciding/decide.ts), break-glass (deciding/breakGlass.ts), freezes
 * (deciding/freezing.ts), the time box's revert (timebox/timeboxRevert.ts); what they share is the
 * context (context.ts). Who may do what is rules.ts's; applying is the worker's (apply/worker.ts).
 */
export function createWorkflow(options: WorkflowOptions & WorkflowDeps): Workflow {
  const ctx = workflowContext(options);
  const { store, storeCall } = ctx;
  const one = createFileOne(ctx);
  const sets = createFileSet(ctx);
  const reverts = createReverts(ctx, one, sets);
  const timeBox = createTimeBoxRevert(ctx, one, sets, reverts);
  const glass = createBreakGlass({
    ...ctx,
    queue: options.queue,
    isApprover: (env, user) => options.approvers.isApprover(env, user),
    revertFor: reverts.reviewRevertFor,
  });

  /** `--break-glass`: refused before anything is filed; then filed and applied at once, one move. */
  async function filedBroken<F extends { request: { id: string } }>(
    input: { env?: string; breakGlass?: boolean; requester: { user: string; reason?: string } },
    file: () => Promise<F>,
  ) {
    assertMayBreakGlassAtFiling(ctx.environment(input.env), input.requester.reason);
    const filed = await file();
    const broken = await glass.breakGlassAtFiling(filed.request.id, {
      user: input.requester.user,
      reason: input.requester.reason ?? '',
    });
    return { filed, request: broken.request };
  }

  const recreates = createRecreate(ctx);

  async function fileSet(input: FileSetInput) {
    if (!input.breakGlass) return sets.fileSet(input);
    const { request } = await filedBroken(input, () => sets.fileSet(input));
    return { request };
  }

  return {
    async file(input) {
      if (!input.breakGlass) return one.fileRequest(input, { action: input.action });
      const { filed, request } = await filedBroken(input, () =>
        one.fileRequest(input, { action: input.action }),
      );
      return { ...filed, request };
    },
    fileSet,
    recreate: async (input) => fileSet(await recreates.recreateInput(input)),
    breakGlass: glass.breakGlass,
    review: glass.review,
    listUnreviewed: glass.listUnreviewed,
    mayRequest: (env, user) => ctx.assertMayRequest(ctx.environment(env), user),
    decide: createDecide(ctx),
    ...createFreezing(ctx),
    get: (id) => storeCall('get', () => store.get(id), 'nothing was read'),
    listOpen: (env) => storeCall('list', () => store.listOpen(env), 'nothing was read'),
    async attachMessage(id, channel, ts) {
      const r = await storeCall(
        'attach',
        () => store.attachMessage(id, channel, ts),
        'the message was not recorded',
      );
      if (!r) throw new WorkflowError({ code: 'not-found', what: 'change request', id });
      return r;
    },
    revertRequestFor: reverts.revertRequestFor,
    revertSetFor: reverts.revertSetFor,
    approveTimeBoxRevert: timeBox.approveTimeBoxRevert,
    fileAgain: one.fileAgain,
    expireDue: () => expireDue(store, ctx.notify),
  };
}
