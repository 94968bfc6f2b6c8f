/**
 * Slack's own checks of what an app sends (Block Kit blocks, messages, modals) and how its Web API
 * reads a request's body: one home for both the tests' fake Slack (test/support/fakeSlack.ts)
 * and the trial's stand-in (`npm run try`, workspace.ts), so that what one refuses the other does.
 *
 * The limits are Slack's documented ones (docs.slack.dev Block Kit reference, @slack/types),
 * plus the undocumented aggregate block-text cap seen in slackapi/bolt-js#2509.
 */
import type { IncomingHttpHeaders } from 'node:http';

export const SLACK_CHECK_LIMITS = {
  messageBlocks: 50,
  modalBlocks: 100,
  textObject: 3000,
  sectionText: 3000,
  sectionFields: 10,
  fieldText: 2000,
  headerText: 150,
  contextElements: 10,
  actionsElements: 25,
  buttonText: 75,
  buttonValue: 2000,
  url: 3000,
  blockId: 255,
  actionId: 255,
  markdownBlock: 12_000,
  messageText: 40_000,
  updateText: 4000,
  blocksTotalText: 13_000,
  modalTitle: 24,
  viewBytes: 250_000,
  responseUrlUses: 5,
  altText: 1000,
} as const;

// ---- validation -------------------------------------------------------------------------------

type Problems = string[];

export const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

function problem(list: Problems, message: string, pointer: string): void {
  list.push(`[ERROR] ${message} [json-pointer:${pointer}]`);
}

function onlyKeys(obj: Record<string, unknown>, allowed: readonly string[], at: string, out: Problems): void {
  for (const k of Object.keys(obj)) {
    if (!allowed.includes(k)) problem(out, `unknown property '${k}'`, at);
  }
}

function textObject(
  v: unknown,
  at: string,
  out: Problems,
  options: { max: number; plainOnly?: boolean },
): number {
  if (!isObject(v)) {
    problem(out, 'must be a text object', at);
    return 0;
  }
  if (v.type !== 'plain_text' && v.type !== 'mrkdwn') {
    problem(out, `unsupported type: ${String(v.type)}`, `${at}/type`);
    return 0;
  }
  if (options.plainOnly && v.type !== 'plain_text') problem(out, 'must be plain_text', `${at}/type`);
  onlyKeys(v, v.type === 'plain_text' ? ['type', 'text', 'emoji'] : ['type', 'text', 'verbatim'], at, out);
  if (typeof v.text !== 'string') {
    problem(out, 'must provide a string', `${at}/text`);
    return 0;
  }
  if (v.text.length === 0) problem(out, 'must be more than 0 characters', `${at}/text`);
  if (v.text.length > options.max)
    problem(out, `must be less than ${options.max + 1} characters`, `${at}/text`);
  return v.text.length;
}

function stringMax(v: unknown, max: number, at: string, out: Problems, required = false): void {
  if (v === undefined) {
    if (required) problem(out, 'is required', at);
    return;
  }
  if (typeof v !== 'string') problem(out, 'must be a string', at);
  else if (v.length > max) problem(out, `must be less than ${max + 1} characters`, at);
}

function element(v: unknown, at: string, out: Problems): number {
  if (!isObject(v)) {
    problem(out, 'must be an object', at);
    return 0;
  }
  stringMax(v.action_id, SLACK_CHECK_LIMITS.actionId, `${at}/action_id`, out);
  switch (v.type) {
    case 'button': {
      onlyKeys(
        v,
        ['type', 'text', 'action_id', 'value', 'url', 'style', 'confirm', 'accessibility_label'],
        at,
        out,
      );
      const n = textObject(v.text, `${at}/text`, out, {
        max: SLACK_CHECK_LIMITS.buttonText,
        plainOnly: true,
      });
      stringMax(v.value, SLACK_CHECK_LIMITS.buttonValue, `${at}/value`, out);
      stringMax(v.url, SLACK_CHECK_LIMITS.url, `${at}/url`, out);
      stringMax(v.accessibility_label, 75, `${at}/accessibility_label`, out);
      if (v.style !== undefined && v.style !== 'primary' && v.style !== 'danger') {
        problem(out, 'must be one of primary, danger', `${at}/style`);
      }
      return n;
    }
    case 'image':
      stringMax(v.alt_text, 2000, `${at}/alt_text`, out, true);
      return 0;
    case 'static_select':
    case 'multi_static_select':
    case 'users_select':
    case 'conversations_select':
    case 'channels_select':
    case 'plain_text_input':
    case 'datepicker':
    case 'checkboxes':
    case 'radio_buttons':
    case 'overflow':
      return 0;
    default:
      problem(out, `unsupported type: ${String(v.type)}`, `${at}/type`);
      return 0;
  }
}

/** Slack's checks of a `blocks` array; returns the problems and the characters of text seen. */
export function validateBlocks(
  blocks: unknown,
  options: { maxBlocks?: number; pointer?: string } = {},
): { problems: string[]; textChars: number } {
  const out: Problems = [];
  const base = options.pointer ?? '/blocks';
  const max = options.maxBlocks ?? SLACK_CHECK_LIMITS.messageBlocks;
  let chars = 0;
  if (!Array.isArray(blocks)) {
    problem(out, 'must be an array', base);
    return { problems: out, textChars: 0 };
  }
  if (blocks.length > max) problem(out, `no more than ${max} items allowed`, base);
  const ids = new Set<string>();
  blocks.forEach((b, i) => {
    const at = `${base}/${i}`;
    if (!isObject(b)) {
      problem(out, 'must be an object', at);
      return;
    }
    if (b.block_id !== undefined) {
      stringMax(b.block_id, SLACK_CHECK_LIMITS.blockId, `${at}/block_id`, out);
      if (typeof b.block_id === 'string') {
        if (ids.has(b.block_id)) problem(out, `block_id '${b.block_id}' is already used`, `${at}/block_id`);
        ids.add(b.block_id);
      }
    }
    switch (b.type) {
      case 'section': {
        onlyKeys(b, ['type', 'block_id', 'text', 'fields', 'accessory', 'expand'], at, out);
        if (b.text === undefined && b.fields === undefined) problem(out, 'must provide text or fields', at);
        if (b.text !== undefined)
          chars += textObject(b.text, `${at}/text`, out, { max: SLACK_CHECK_LIMITS.sectionText });
        if (b.fields !== undefined) {
          if (!Array.isArray(b.fields) || b.fields.length === 0)
            problem(out, 'must be a non-empty array', `${at}/fields`);
          else {
            if (b.fields.length > SLACK_CHECK_LIMITS.sectionFields) {
              problem(out, `no more than ${SLACK_CHECK_LIMITS.sectionFields} items allowed`, `${at}/fields`);
            }
            b.fields.forEach((f, j) => {
              chars += textObject(f, `${at}/fields/${j}`, out, { max: SLACK_CHECK_LIMITS.fieldText });
            });
          }
        }
        if (b.accessory !== undefined) chars += element(b.accessory, `${at}/accessory`, out);
        break;
      }
      case 'divider':
        onlyKeys(b, ['type', 'block_id'], at, out);
        break;
      case 'header':
        onlyKeys(b, ['type', 'block_id', 'text'], at, out);
        chars += textObject(b.text, `${at}/text`, out, {
          max: SLACK_CHECK_LIMITS.headerText,
          plainOnly: true,
        });
        break;
      case 'context': {
        onlyKeys(b, ['type', 'block_id', 'elements'], at, out);
        if (!Array.isArray(b.elements) || b.elements.length === 0) {
          problem(out, 'must be a non-empty array', `${at}/elements`);
          break;
        }
        if (b.elements.length > SLACK_CHECK_LIMITS.contextElements) {
          problem(out, `no more than ${SLACK_CHECK_LIMITS.contextElements} items allowed`, `${at}/elements`);
        }
        b.elements.forEach((e, j) => {
          if (isObject(e) && e.type === 'image')
            stringMax(e.alt_text, 2000, `${at}/elements/${j}/alt_text`, out, true);
          else chars += textObject(e, `${at}/elements/${j}`, out, { max: SLACK_CHECK_LIMITS.textObject });
        });
        break;
      }
      case 'actions': {
        onlyKeys(b, ['type', 'block_id', 'elements'], at, out);
        if (!Array.isArray(b.elements) || b.elements.length === 0) {
          problem(out, 'must be a non-empty array', `${at}/elements`);
          break;
        }
        if (b.elements.length > SLACK_CHECK_LIMITS.actionsElements) {
          problem(out, `no more than ${SLACK_CHECK_LIMITS.actionsElements} items allowed`, `${at}/elements`);
        }
        b.elements.forEach((e, j) => {
          chars += element(e, `${at}/elements/${j}`, out);
        });
        break;
      }
      case 'input':
        onlyKeys(b, ['type', 'block_id', 'label', 'element', 'hint', 'optional', 'dispatch_action'], at, out);
        chars += textObject(b.label, `${at}/label`, out, { max: 2000, plainOnly: true });
        if (b.hint !== undefined)
          chars += textObject(b.hint, `${at}/hint`, out, { max: 2000, plainOnly: true });
        element(b.element, `${at}/element`, out);
        break;
      case 'image':
        stringMax(b.alt_text, 2000, `${at}/alt_text`, out, true);
        break;
      case 'markdown':
        onlyKeys(b, ['type', 'block_id', 'text'], at, out);
        stringMax(b.text, SLACK_CHECK_LIMITS.markdownBlock, `${at}/text`, out, true);
        chars += typeof b.text === 'string' ? b.text.length : 0;
        break;
      case 'rich_text':
        if (!Array.isArray(b.elements)) problem(out, 'must be an array', `${at}/elements`);
        break;
      default:
        problem(out, `unsupported type: ${String(b.type)}`, `${at}/type`);
    }
  });
  return { problems: out, textChars: chars };
}

export interface Refusal {
  readonly error: string;
  readonly messages: readonly string[];
}

/**
 * What Slack says to a message (chat.postMessage, chat.postEphemeral, chat.update, a response
 * URL post): `null` when it would take it.
 */
export function checkMessage(
  args: Record<string, unknown>,
  options: { maxText?: number } = {},
): Refusal | null {
  const { text, blocks, attachments } = args;
  if (blocks === undefined && attachments === undefined && (typeof text !== 'string' || text.length === 0)) {
    return { error: 'no_text', messages: [] };
  }
  if (text !== undefined && typeof text !== 'string')
    return { error: 'invalid_arguments', messages: ['text must be a string'] };
  if (typeof text === 'string' && text.length > (options.maxText ?? SLACK_CHECK_LIMITS.messageText)) {
    return { error: 'msg_too_long', messages: [] };
  }
  if (blocks !== undefined) {
    const { problems, textChars } = validateBlocks(blocks);
    if (problems.length > 0) return { error: 'invalid_blocks', messages: problems };
    if (textChars > SLACK_CHECK_LIMITS.blocksTotalText) return { error: 'msg_blocks_too_long', messages: [] };
  }
  if (Array.isArray(attachments) && attachments.length > 100)
    return { error: 'too_many_attachments', messages: [] };
  return null;
}

export function checkView(view: unknown): Refusal | null {
  if (!isObject(view))
    return { error: 'invalid_arguments', messages: ['[ERROR] must be an object [json-pointer:/view]'] };
  if (JSON.stringify(view).length > SLACK_CHECK_LIMITS.viewBytes)
    return { error: 'view_too_large', messages: [] };
  const problems: string[] = [];
  if (view.type !== 'modal' && view.type !== 'home') problem(problems, 'must be modal or home', '/view/type');
  if (view.type === 'modal') {
    textObject(view.title, '/view/title', problems, { max: SLACK_CHECK_LIMITS.modalTitle, plainOnly: true });
    if (view.submit !== undefined)
      textObject(view.submit, '/view/submit', problems, { max: 24, plainOnly: true });
    if (view.close !== undefined)
      textObject(view.close, '/view/close', problems, { max: 24, plainOnly: true });
  }
  stringMax(view.private_metadata, 3000, '/view/private_metadata', problems);
  stringMax(view.callback_id, 255, '/view/callback_id', problems);
  problems.push(
    ...validateBlocks(view.blocks, { maxBlocks: SLACK_CHECK_LIMITS.modalBlocks, pointer: '/view/blocks' })
      .problems,
  );
  if (
    view.type === 'modal' &&
    Array.isArray(view.blocks) &&
    view.blocks.some((b) => isObject(b) && b.type === 'input') &&
    view.submit === undefined
  ) {
    problem(problems, 'submit is required when a modal has input blocks', '/view/submit');
  }
  return problems.length > 0 ? { error: 'invalid_arguments', messages: problems } : null;
}

const JSON_ARGS = new Set(['blocks', 'attachments', 'view', 'files', 'metadata']);

export function parseBody(
  headers: IncomingHttpHeaders,
  raw: string,
): Record<string, unknown> | { __invalid: string } {
  const type = String(headers['content-type'] ?? '');
  if (type.startsWith('application/json')) {
    try {
      const v: unknown = raw ? JSON.parse(raw) : {};
      return isObject(v) ? v : { __invalid: 'invalid_json' };
    } catch {
      return { __invalid: 'invalid_json' };
    }
  }
  const args: Record<string, unknown> = {};
  for (const [k, v] of new URLSearchParams(raw)) {
    if (JSON_ARGS.has(k)) {
      try {
        args[k] = JSON.parse(v);
      } catch {
        return { __invalid: k === 'blocks' ? 'invalid_blocks_format' : 'invalid_arguments' };
      }
    } else {
      args[k] = v;
    }
  }
  return args;
}

/**
 * The file's bytes from an upload POST: the body itself, or, for multipart/form-data (what
 * @slack/web-api sends), the first part that carries a filename. `undefined` when malformed.
 */
export function uploadedBytes(contentType: string, body: Buffer): Buffer | undefined {
  if (!/^multipart\/form-data/i.test(contentType)) return body;
  const m = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
  const boundary = m?.[1] ?? m?.[2];
  if (!boundary) return undefined;
  const delimiter = Buffer.from(`--${boundary}`);
  let start = body.indexOf(delimiter);
  while (start !== -1) {
    const next = body.indexOf(delimiter, start + delimiter.length);
    if (next === -1) break;
    const part = body.subarray(start + delimiter.length, next);
    const headEnd = part.indexOf('\r\n\r\n');
    if (headEnd !== -1 && /filename=/i.test(part.subarray(0, headEnd).toString('utf8'))) {
      const data = part.subarray(headEnd + 4);
      return data.subarray(-2).toString('latin1') === '\r\n' ? data.subarray(0, -2) : data;
    }
    start = next;
  }
  return undefined;
}

/** The token of a Web API call: `Authorization: Bearer …`, else a `token` argument; '' when none. */
export function tokenOf(headers: IncomingHttpHeaders, args: Record<string, unknown>): string {
  const auth = String(headers.authorization ?? '');
  if (auth.startsWith('Bearer ')) return auth.slice(7);
  return typeof args.token === 'string' ? args.token : '';
}
