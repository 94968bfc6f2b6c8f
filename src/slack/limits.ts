/**
 * Slack's limits, in one place. Views are built to stay inside them; the fake Slack server of
 * the tests refuses anything beyond them, as Slack does. Sources: docs.slack.dev Block Kit
 * reference and @slack/types (see ../shared/reference/slack-platform.md section 10).
 */
export const SLACK_LIMITS = {
  /** Blocks in one message (a modal or Home tab takes 100). */
  blocksPerMessage: 50,
  blocksPerModal: 100,
  /** Characters in any text object, and so in a section's `text`. */
  textObject: 3000,
  sectionText: 3000,
  sectionFields: 10,
  fieldText: 2000,
  contextElements: 10,
  actionsElements: 25,
  headerText: 150,
  buttonText: 75,
  buttonValue: 2000,
  buttonUrl: 3000,
  blockId: 255,
  /** A modal's title (and its submit and close labels). */
  modalTitle: 24,
  /** A modal's `private_metadata`. */
  privateMetadata: 3000,
  /** An inline error on a form's field (`response_action: errors`) shows at most this much. */
  formError: 2000,
  actionId: 255,
  /** Top-level `text` of chat.postMessage: truncated by Slack beyond 40,000 (`msg_too_long`). */
  messageText: 40_000,
  /** chat.update refuses `text` over 4,000; the docs advise keeping any message text below it. */
  advisedMessageText: 4000,
  /**
   * Not documented: Slack answers `msg_blocks_too_long` once the text of all blocks together
   * passes roughly 13,200 characters (slackapi/bolt-js#2509). Views keep well below it.
   */
  blocksTotalText: 13_000,
} as const;

/** What views aim for: a margin under the hard limits, so a near-limit answer still fits. */
export const VIEW_BUDGET = {
  /** Blocks a view may use; the rest of the 50 stay free for a trailing note. */
  blocks: 45,
  /** Total block text a view may use, under the undocumented aggregate cap. */
  totalText: 11_000,
  /** Items shown per list (also matched, unreadable, notes) before "and N more". */
  listItems: 15,
  /** Fallback `text` for notifications and screen readers. */
  fallbackText: 1000,
  /** An inline error on a form's field, under Slack's 2,000. */
  formError: 1900,
} as const;
