import { UnrecoverableError } from 'bullmq';
import { planChanges } from '../../plan/index.ts';
import { lossGrew } from '../../policy/impact/index.ts';
import { narrowedTo, PAGE_MAX, RabbitError } from '../../rabbit/index.ts';
import type { WorkflowBroker } from '../broker.ts';
import { plannedSet, policySteps, type SetStep, setImpact, transitionOf } from '../changeSet.ts';
import type { ChangeRequest } from '../types.ts';
import { lossNotRead } from './applyOne.ts';

/**
 * A change set's guard on its loss, as a single change has its fresh preview (applyOne.ts): the
 * set's steps planned again on the broker as it is now (src/plan/ `planChanges`), and its loss
 * (the end state's and the way's, summed as at filing: changeSet.ts `setImpact`) held against what
 * the approval accepted, by the one rule (`lossGrew`). Asked by applySet.ts before the set's first
 * write only. Its queue listings are narrowed to the queues the steps' patterns find, as they are
 * and as planned (what a change moves, they find: narrowed.ts), unless the set moved more objects
 * than one page of the broker's narrowed listing holds. Throws what the queue may retry.
 *
 * The planner orders the steps again: the way's loss is that of its order now, which is the set's
 * when the broker holds what it held at filing (the order depends on the policies and objects,
 * not on the messages).
 */
export async function setLossGrew(
  r: ChangeRequest,
  all: readonly SetStep[],
  broker: WorkflowBroker,
): Promise<boolean> {
  const accepted = r.preview.summary.impact;
  // A set filed without figures (none planned) has no loss accepted to compare with, as for one change.
  // Parameters move no message: the loss is the policies'.
  const policies = policySteps(all);
  if (!accepted || policies.length === 0) return false;
  const steps = policies;
  const patterns = steps.flatMap((s) => [s.before, s.after].flatMap((p) => (p ? [p.pattern] : [])));
  const readings =
    r.preview.summary.objects > PAGE_MAX
      ? broker
      : { ...narrowedTo(broker, patterns), listVhosts: () => broker.listVhosts() };
  const vhosts = [...new Set(steps.map((s) => s.vhost))];
  const result = await planChanges(
    vhosts,
    (vhost) => steps.filter((s) => s.vhost === vhost).map(transitionOf),
    readings,
    { findings: false },
  );
  if (result.status === 'not-asked')
    // Broker trouble: the queue retries it like any other failure that may pass.
    throw new RabbitError({
      code: result.why,
      method: 'GET',
      path: `(plan of ${vhosts.join(', ')})`,
      ...(result.detail ? { reason: result.detail } : {}),
    });
  if (result.status === 'refused')
    throw new UnrecoverableError(`The broker now refuses the set: ${result.problems.join(' ')}`);
  if (result.plan.unread?.length) throw lossNotRead(result.plan.unread);
  const fresh = plannedSet(result.plan);
  return lossGrew(accepted, setImpact(fresh.impact, fresh.losing, fresh.transitional));
}
