import type { App } from '@slack/bolt';
import type { Logger } from '../log/index.ts';

/**
 * Buttons, forms, shortcuts and menus (interactivity is on in the manifest). Slack waits three
 * seconds for an acknowledgement and shows the user an error without one, so whatever no handler
 * claims is acknowledged at once and logged at `info`, never left to time out.
 *
 * A handler for an interaction registers itself with Bolt (`app.action('approve', …)`) AND puts
 * its id here, so that the catch-all below leaves it alone (Bolt runs every matching listener,
 * and a second acknowledgement is an error).
 */
export interface HandledInteractions {
  /** `action_id`s of buttons and menus (block actions), and of external-select options. */
  readonly actions: ReadonlySet<string>;
  /** `callback_id`s of modals (submission and close) and of shortcuts. */
  readonly callbacks: ReadonlySet<string>;
}

export const NO_INTERACTIONS: HandledInteractions = { actions: new Set(), callbacks: new Set() };

/** Registers the catch-all for everything `handled` does not name. */
export function acknowledgeUnhandledInteractions(
  app: App,
  logger: Logger,
  handled: HandledInteractions,
): void {
  const log = (kind: string, id: string, user: string | undefined) =>
    logger.info({ kind, id: id.slice(0, 255), user }, 'interaction nobody handles: acknowledged');

  app.action(/.*/, async ({ action, body, ack }) => {
    const id =
      'action_id' in action ? action.action_id : ((action as { callback_id?: string }).callback_id ?? '');
    if (handled.actions.has(id)) return;
    await ack();
    log('action', id, body.user?.id);
  });
  app.view(/.*/, async ({ view, body, ack }) => {
    if (handled.callbacks.has(view.callback_id)) return;
    await ack();
    log(body.type, view.callback_id, body.user?.id);
  });
  app.shortcut(/.*/, async ({ shortcut, ack }) => {
    if (handled.callbacks.has(shortcut.callback_id)) return;
    await ack();
    log(shortcut.type, shortcut.callback_id, shortcut.user?.id);
  });
  app.options(/.*/, async ({ body, ack }) => {
    const id = 'action_id' in body ? String(body.action_id) : '';
    if (handled.actions.has(id)) return;
    await ack({ options: [] });
    log('options', id, body.user?.id);
  });
}
