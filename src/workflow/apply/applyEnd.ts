import type { ChangeRecord } from '../../audit/index.ts';
import type { PreviewResult } from '../../preview/index.ts';
import type { RecordingServices } from '../services.ts';
import type { TransitionInput } from '../store.ts';
import type { ChangeRequest, Failure } from '../types.ts';

/**
 * How a request's apply ends, the one home for it: the named move (moves.ts) out of `approved` or
 * `applying`, with what it sets, and what the Notifier is told besides the new state.
 */
export type ApplyEnding =
  /** Written and recorded: `record` (the last one appended) posted. */
  | { readonly move: 'finish'; readonly set: TransitionInput['set']; readonly record?: ChangeRecord }
  /** The broker is not what was approved: a single change's fresh preview posted (`fresh`, asked once moved). */
  | {
      readonly move: 'markStale';
      readonly set: TransitionInput['set'];
      readonly fresh?: () => Promise<PreviewResult>;
    }
  /** Not applied: `refuse` when a rule of rules.ts refused the write, `fail` when the write failed (or the ending, with nothing written). */
  | {
      readonly move: 'refuse' | 'fail';
      readonly set: TransitionInput['set'] & { readonly failure: Failure };
    };

/**
 * Ends the request's apply with `ending`; the moved request, or undefined when the store refused
 * the move (another try, or another replica, ended it first: then nothing is told again).
 */
export async function endApply(
  deps: Pick<RecordingServices, 'store' | 'notify'>,
  id: string,
  ending: ApplyEnding,
): Promise<ChangeRequest | undefined> {
  const moved = await deps.store.transition(id, { move: ending.move, set: ending.set });
  if (moved.kind !== 'ok') return undefined;
  const r = moved.request;
  await deps.notify.stateChanged(r);
  switch (ending.move) {
    case 'finish':
      if (ending.record) await deps.notify.applied(r, ending.record);
      break;
    case 'markStale':
      if (ending.fresh) await deps.notify.stale(r, await ending.fresh());
      break;
    default:
      await deps.notify.failed(r);
  }
  return r;
}
