import { code, truncate } from '../escape.ts';
import { type Draft, encodeMeta } from './forms.ts';
import { actions, button, finish, type SlackMessage, section } from './message.ts';

/**
 * To the requester, when a form is needed: it is open (a slash command opened it), or a button
 * opens it (a mention carries no trigger to open a form with). Pure.
 */

export const OPEN_FORM = 'rmq_open_form';

export type FormKind = 'policy' | 'reason';

function what(draft: Draft): string {
  return `${draft.action} ${draft.layer === 'operator' ? 'operator policy' : 'policy'} ${code(truncate(draft.policy, 200))}`;
}

export function openFormPrompt(
  kind: FormKind,
  draft: Draft,
  options: { opened?: boolean } = {},
): SlackMessage {
  const need =
    kind === 'policy'
      ? `To ${what(draft)}, fill in the form: pattern, apply-to, priority, definition and your reason.`
      : `To ${what(draft)}, give your reason: it is required for every delete, and for every change in a guarded environment.`;
  if (options.opened) return finish([section(`:memo: ${need} The form is open.`)], 'The form is open.');
  return finish(
    [
      section(`:memo: ${need}`),
      actions(
        'rmq_open_form',
        button(
          OPEN_FORM,
          kind === 'policy' ? 'Open the form' : 'Give your reason',
          encodeMeta({ form: kind, draft }),
          {
            style: 'primary',
          },
        ),
      ),
    ],
    'A form is needed: use the button.',
  );
}
