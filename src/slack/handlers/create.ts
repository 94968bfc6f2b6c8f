import { changeCommand } from '../requests/command.ts';

/**
 * `/rmq create NAME --pattern P --definition JSON …`: files a request to create the policy.
 * Without any field flag, the policy form opens (pattern, apply-to, priority, definition, reason).
 */
export const createCommand = changeCommand('create');
