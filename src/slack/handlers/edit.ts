import { changeCommand } from '../requests/command.ts';

/**
 * `/rmq edit POLICY [--pattern P] [--definition JSON] …`: files a request to rewrite the policy;
 * fields not given keep their current value. Without any field flag, the policy form opens,
 * filled in with the policy as it is.
 */
export const editCommand = changeCommand('edit');
