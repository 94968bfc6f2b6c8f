import * as z from 'zod';
import { type LinkFacts, recreatePolicyOf } from '../../links/index.ts';
import { showInvisible } from '../../text/index.ts';
import { code, truncate } from '../escape.ts';
import { SLACK_LIMITS } from '../limits.ts';
import { actions, button, finish, type SlackMessage, section } from './message.ts';

/**
 * The button "Re-create policy P" that a link's answer or watch post carries where re-creating
 * the policy is the runbook's step (src/links/ `recreatePolicyOf`): clicked, it asks the clicking
 * user's reason and files the re-creation as a change request (src/slack/requests/interactions.ts).
 * Pure.
 */

export const RECREATE_BUTTON = 'rmq_links_recreate';

/** What the button carries: where the policy is. */
export const RecreateTargetSchema = z.object({
  env: z.string().min(1),
  vhost: z.string().min(1),
  policy: z.string().min(1),
});
export type RecreateTarget = z.infer<typeof RecreateTargetSchema>;

/** Most buttons one message carries (one per policy); the others are said by their links' next step. */
const MAX_BUTTONS = 5;

/** The buttons for the links whose step is their policy's re-creation: one per policy, none when none is. */
export function recreateButtons(env: string, links: readonly LinkFacts[]) {
  const targets = new Map<string, RecreateTarget>();
  for (const l of links) {
    const policy = recreatePolicyOf(l);
    if (policy === null) continue;
    const target = { env, vhost: l.vhost, policy };
    if (JSON.stringify(target).length > SLACK_LIMITS.buttonValue) continue;
    targets.set(JSON.stringify([l.vhost, policy]), target);
  }
  return recreateActions([...targets.values()].slice(0, MAX_BUTTONS));
}

/** One actions block of re-create buttons (none: no block). */
function recreateActions(targets: readonly RecreateTarget[]) {
  if (targets.length === 0) return [];
  return [
    actions(
      'rmq_links_recreate',
      ...targets.map((t) =>
        button(
          RECREATE_BUTTON,
          `Re-create policy ${truncate(showInvisible(t.policy), 50)}`,
          JSON.stringify(t),
          {
            confirm: {
              title: 'Re-create the policy?',
              text: 'A change request: the policy deleted, then created again as it is, with its preview; an approver decides, and only then is it written.',
              confirm: 'Give the reason',
              deny: 'Cancel',
            },
          },
        ),
      ),
    ),
  ];
}

/** To the requester of `recreate POLICY` without a reason: the form is open, or (a mention: no trigger) the button opens it. */
export function recreateReasonPrompt(target: RecreateTarget, opened: boolean): SlackMessage {
  const need = `To re-create policy ${code(truncate(target.policy, 200))}, give your reason: every change set needs one.`;
  if (opened) return finish([section(`:memo: ${need} The form is open.`)], 'The form is open.');
  const { env, vhost, policy } = target;
  return finish(
    [section(`:memo: ${need}`), ...recreateActions([{ env, vhost, policy }])],
    'A form is needed: use the button.',
  );
}
