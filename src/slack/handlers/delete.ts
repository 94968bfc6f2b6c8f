import { changeCommand } from '../requests/command.ts';

/**
 * `/rmq delete POLICY --reason TEXT …`: files a request to delete the policy. A delete always
 * needs the requester's reason; without one the bot asks for it in a form.
 */
export const deleteCommand = changeCommand('delete');
