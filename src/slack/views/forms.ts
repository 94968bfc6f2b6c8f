// Over 400 lines: each form is built beside the reader of its answers, so what it asks and what is read stay one.
import type { types } from '@slack/bolt';
import * as z from 'zod';
import { parseDefinitionText } from '../../commands/index.ts';
import { definitionSchema } from '../../definitions/index.ts';
import { lossToAcknowledge } from '../../policy/impact/index.ts';
import type { ApplyTo } from '../../policy/index.ts';
import type { PolicyFields } from '../../preview/index.ts';
import { jsonText } from '../../text/index.ts';
import type { ChangeRequest, DecisionKind } from '../../workflow/index.ts';
import { MAX_REASON, type RefusalOf, refusalSentence } from '../../workflow/index.ts';
import { code, prose, truncate } from '../escape.ts';
import { SLACK_LIMITS } from '../limits.ts';
import { type Block, context, section } from './message.ts';
import { requestTitle, whereWords } from './request.ts';

/**
 * The forms (modals) of change requests, pure: the policy form of `create`/`edit` without
 * flags, the reason a requester must give, the reason an approver must give. What a form
 * carries between opening and submission travels in `private_metadata` (parsed with zod on
 * the way back); what it asks is read back from `view.state.values` by `read…` functions here,
 * next to the blocks that define it.
 */

export const FORMS = {
  policy: 'rmq_policy_form',
  reason: 'rmq_reason_form',
  decision: 'rmq_decision_form',
} as const;

/** The policy form's pattern field dispatches an action as it is typed, to keep its hint true. */
export const PATTERN_TYPED = 'rmq_pattern_typed';

/** Block ids: stable across updates, so what was typed survives them; errors are keyed by them. */
export const BLOCK = {
  pattern: 'pattern',
  applyTo: 'apply_to',
  priority: 'priority',
  definition: 'definition',
  reason: 'reason',
  acknowledgeLoss: 'acknowledge_loss',
} as const;
type BlockId = (typeof BLOCK)[keyof typeof BLOCK];

export const UNANCHORED_HINT = 'unanchored: matches every name that contains it';
export const ANCHORED_HINT = 'A regular expression over queue and exchange names.';
export const PRIORITY_HINT = 'Highest wins. Two matches at the same priority leave it undefined.';

/** The hint the pattern field shows for what is typed in it. */
export function patternHint(pattern: string): string {
  return pattern.startsWith('^') ? ANCHORED_HINT : UNANCHORED_HINT;
}

// --- what travels in private_metadata ---------------------------------------------------------

const Origin = z.object({ channel: z.string().min(1), threadTs: z.string().min(1).optional() });

/** A request being made: everything `Workflow.file` takes but the fields and the reason. */
export const DraftSchema = z.object({
  action: z.enum(['create', 'edit', 'delete']),
  policy: z.string().min(1),
  env: z.string().min(1),
  vhost: z.string().min(1),
  layer: z.enum(['user', 'operator']),
  origin: Origin,
  /** Fields given on the command line (the reason form keeps them to file with the reason). */
  fields: z
    .object({
      pattern: z.unknown().optional(),
      applyTo: z.unknown().optional(),
      priority: z.unknown().optional(),
      definition: z.unknown().optional(),
      /** `edit --set KEY=JSON --unset KEY` (src/commands/preview/preview.ts). */
      definitionPatch: z.object({ set: definitionSchema, unset: z.array(z.string()).readonly() }).optional(),
    })
    .default({}),
  /** `--for`: reverted this long after it is applied (src/workflow/timebox/timebox.ts). */
  timeBoxMs: z.number().int().positive().optional(),
  /** `--break-glass`: applied at once without approval, where allowed (the workflow checks it again). */
  breakGlass: z.boolean().optional(),
});
export type Draft = z.infer<typeof DraftSchema>;

const ReasonMetaSchema = z.discriminatedUnion('for', [
  z.object({ for: z.literal('file'), draft: DraftSchema }),
  z.object({ for: z.literal('revert'), auditId: z.string().min(1), origin: Origin }),
  /** A policy deleted and created again as it is (the links' button, `recreate POLICY`): src/workflow/ `recreate`. */
  z.object({
    for: z.literal('recreate'),
    env: z.string().min(1),
    vhost: z.string().min(1),
    policy: z.string().min(1),
    origin: Origin,
    breakGlass: z.boolean().optional(),
  }),
]);
export type ReasonMeta = z.infer<typeof ReasonMetaSchema>;

const DecisionMetaSchema = z.object({ id: z.string().min(1), kind: z.enum(['approve', 'reject']) });
export type DecisionMeta = z.infer<typeof DecisionMetaSchema>;

export function encodeMeta(meta: unknown): string {
  return JSON.stringify(meta);
}

export function parseMeta<T>(schema: z.ZodType<T>, text: string): T | undefined {
  try {
    const r = schema.safeParse(JSON.parse(text));
    return r.success ? r.data : undefined;
  } catch {
    return undefined;
  }
}

export const parseDraft = (text: string) => parseMeta(DraftSchema, text);
export const parseReasonMeta = (text: string) => parseMeta(ReasonMetaSchema, text);
export const parseDecisionMeta = (text: string) => parseMeta(DecisionMetaSchema, text);

// --- building blocks --------------------------------------------------------------------------

type View = types.ModalView;

const plain = (text: string) => ({ type: 'plain_text' as const, text });

export function textInput(
  block: BlockId,
  label: string,
  options: {
    initial?: string | undefined;
    multiline?: boolean;
    optional?: boolean;
    hint?: string;
    placeholder?: string;
    dispatch?: boolean;
    maxLength?: number;
  },
): types.InputBlock {
  return {
    type: 'input',
    block_id: block,
    label: plain(label),
    optional: options.optional ?? false,
    ...(options.hint ? { hint: plain(options.hint) } : {}),
    ...(options.dispatch ? { dispatch_action: true } : {}),
    element: {
      type: 'plain_text_input',
      action_id: options.dispatch ? PATTERN_TYPED : 'value',
      multiline: options.multiline ?? false,
      ...(options.maxLength ? { max_length: options.maxLength } : {}),
      ...(options.initial !== undefined && options.initial !== '' ? { initial_value: options.initial } : {}),
      ...(options.placeholder ? { placeholder: plain(options.placeholder) } : {}),
      ...(options.dispatch
        ? { dispatch_action_config: { trigger_actions_on: ['on_character_entered'] } }
        : {}),
    } as types.PlainTextInput,
  };
}

export function modal(
  callbackId: string,
  title: string,
  submit: string,
  meta: string,
  blocks: Block[],
): View {
  return {
    type: 'modal',
    callback_id: callbackId,
    title: plain(title.slice(0, SLACK_LIMITS.modalTitle)),
    submit: plain(submit),
    close: plain('Cancel'),
    private_metadata: meta,
    blocks: blocks as View['blocks'],
  };
}

/** A modal with nothing to submit: a wait, or the end of a form (refused, filed). */
export function noticeModal(title: string, mrkdwn: string): View {
  return {
    type: 'modal',
    title: plain(title.slice(0, SLACK_LIMITS.modalTitle)),
    close: plain('Close'),
    blocks: [section(mrkdwn)],
  };
}

function draftLine(d: Draft): string {
  const layer = d.layer === 'operator' ? 'operator policy' : 'policy';
  return `${prose(d.action === 'create' ? 'Create' : d.action === 'edit' ? 'Edit' : 'Delete')} ${layer} ${code(truncate(d.policy, 200))} in ${code(d.env)}/${code(truncate(d.vhost, 200))}`;
}

// --- the policy form ---------------------------------------------------------------------------

export interface PolicyFormInput {
  readonly draft: Draft;
  /** The apply-to values this broker's version accepts. */
  readonly applyTo: readonly ApplyTo[];
  /** What the fields start with: the policy as it is (edit), or a blank one (create). */
  readonly initial: PolicyFields | null;
  /** The pattern as currently typed, for the hint (an update while typing). */
  readonly typedPattern?: string;
}

export function policyForm(input: PolicyFormInput): View {
  const { draft, initial } = input;
  const pattern = input.typedPattern ?? initial?.pattern ?? '';
  const applyTo = initial?.applyTo ?? 'all';
  const options = input.applyTo.map((a) => ({ text: plain(a), value: a }));
  const selected = options.find((o) => o.value === applyTo);
  const blocks: Block[] = [
    section(`*${draftLine(draft)}*`),
    textInput(BLOCK.pattern, 'Pattern', {
      initial: initial?.pattern,
      hint: patternHint(pattern),
      placeholder: '^orders\\.',
      dispatch: true,
    }),
    {
      type: 'input',
      block_id: BLOCK.applyTo,
      label: plain('Apply to'),
      element: {
        type: 'static_select',
        action_id: 'value',
        options,
        ...(selected ? { initial_option: selected } : {}),
      },
    },
    textInput(BLOCK.priority, 'Priority', { initial: String(initial?.priority ?? 0), hint: PRIORITY_HINT }),
    textInput(BLOCK.definition, 'Definition (JSON)', {
      initial: initial ? jsonText(initial.definition, 2) : undefined,
      multiline: true,
      placeholder: '{"message-ttl": 60000}',
    }),
    textInput(BLOCK.reason, 'Reason', {
      multiline: true,
      optional: true,
      hint: 'Required for a delete and in a guarded environment; approvers read it.',
      maxLength: MAX_REASON,
    }),
    context('Nothing changes until an approver other than you approves it, with a reason.'),
  ];
  return modal(
    FORMS.policy,
    draft.action === 'edit' ? 'Edit policy' : 'Create policy',
    'Preview & file',
    encodeMeta(draft),
    blocks,
  );
}

export type StateValues = Record<
  string,
  Record<
    string,
    {
      value?: string | null;
      selected_option?: { value: string } | null;
      selected_options?: { value: string }[] | null;
    }
  >
>;

function textOf(values: StateValues, block: BlockId): string {
  const b = values[block] ?? {};
  const v = Object.values(b)[0];
  return v?.value ?? v?.selected_option?.value ?? '';
}

export interface PolicyFormValues {
  readonly fields: {
    pattern: string;
    applyTo: string;
    priority: number;
    definition: Record<string, unknown>;
  };
  readonly reason: string | undefined;
}

/** The submitted policy form -> the fields to file, or the errors to show inline (by block id). */
export function readPolicyForm(values: StateValues): PolicyFormValues | { errors: Record<string, string> } {
  const errors: Record<string, string> = {};
  const pattern = textOf(values, BLOCK.pattern);
  if (pattern === '') errors[BLOCK.pattern] = 'A pattern is required.';
  const applyTo = textOf(values, BLOCK.applyTo) || 'all';
  const priorityText = textOf(values, BLOCK.priority).trim();
  const priority = priorityText === '' ? 0 : Number(priorityText);
  if (!Number.isInteger(priority))
    errors[BLOCK.priority] = `A whole number, not ${JSON.stringify(truncate(priorityText, 40))}.`;
  const definitionText = textOf(values, BLOCK.definition);
  let definition: Record<string, unknown> = {};
  // One reading of a definition for flags and form alike: phones' curly quotes folded.
  const read = parseDefinitionText(definitionText);
  if (read.ok) definition = read.definition;
  else
    errors[BLOCK.definition] =
      read.why === 'not-object'
        ? 'The definition must be a JSON object of keys and values, e.g. {"message-ttl": 60000}.'
        : `Not valid JSON: ${read.detail}`;
  if (Object.keys(errors).length > 0) return { errors };
  const reason = textOf(values, BLOCK.reason).trim();
  return { fields: { pattern, applyTo, priority, definition }, reason: reason || undefined };
}

/** A refusal's field (validate.ts) -> the form block it is shown on. */
export function blockOfField(field: string | undefined): BlockId {
  switch (field) {
    case 'pattern':
      return BLOCK.pattern;
    case 'apply-to':
      return BLOCK.applyTo;
    case 'priority':
      return BLOCK.priority;
    default:
      return BLOCK.definition;
  }
}

// --- reasons -------------------------------------------------------------------------------------

export function reasonForm(meta: ReasonMeta, why: string): View {
  const what =
    meta.for === 'file'
      ? draftLine(meta.draft)
      : meta.for === 'recreate'
        ? `Re-create policy ${code(truncate(meta.policy, 200))} in ${code(truncate(meta.env, 100))}/${code(truncate(meta.vhost, 200))}: deleted, then created again as it is (a change request, with its own approval)`
        : `Revert the change of audit record ${code(meta.auditId)} (a new request, with its own approval)`;
  return modal(FORMS.reason, 'Your reason', 'File the request', encodeMeta(meta), [
    section(`*${what}*\n${prose(why)}`),
    textInput(BLOCK.reason, 'Reason', { multiline: true, maxLength: MAX_REASON, placeholder: 'INC-1234: …' }),
  ]);
}

export function readReason(values: StateValues): string {
  return textOf(values, BLOCK.reason).trim();
}

type ReasonFor = RefusalOf<'reason-required'>['for'];

/** What a form whose hidden metadata cannot be read says: opened by a button, or by a command. */
export const UNREADABLE_FORM = {
  button: 'This form cannot be read: close it and click the button again.',
  command: 'This form cannot be read: close it and ask again.',
} as const;

/**
 * A reason form's submission, read: its hidden metadata (`parse`) and its reason; or the inline
 * errors to answer with, the form unreadable or the reason missing (for a change, a decision or
 * a break-glass: each has its sentence).
 */
export function readReasonForm<M>(
  view: { readonly private_metadata: string; readonly state: { readonly values: unknown } },
  parse: (text: string) => M | undefined,
  openedBy: keyof typeof UNREADABLE_FORM,
  reasonFor: ReasonFor,
): { readonly meta: M; readonly reason: string } | { readonly errors: Record<string, string> } {
  const meta = parse(view.private_metadata);
  if (!meta) return { errors: { [BLOCK.reason]: UNREADABLE_FORM[openedBy] } };
  const reason = readReason(view.state.values as StateValues);
  if (!reason)
    return { errors: { [BLOCK.reason]: refusalSentence({ code: 'reason-required', for: reasonFor }) } };
  return { meta, reason };
}

/** The acknowledgement's one option: ticked, the approval accepts the loss it names. */
const LOSS_ACCEPTED = 'accepted';

/** Whether the decision form's acknowledgement of the loss is ticked. */
export function readLossAcknowledged(values: StateValues): boolean {
  const b = values[BLOCK.acknowledgeLoss] ?? {};
  return (Object.values(b)[0]?.selected_options ?? []).some((o) => o.value === LOSS_ACCEPTED);
}

/**
 * Asked of whoever makes a change that removes messages or deletes queues happen (an approver, a
 * requester breaking the glass): the loss in numbers; none when the change loses nothing.
 */
export function lossAcknowledgement(r: ChangeRequest): types.InputBlock[] {
  const loss = lossToAcknowledge(r.preview.summary.impact);
  return loss ? [lossBlock(loss)] : [];
}

function lossBlock(loss: string): types.InputBlock {
  return {
    type: 'input',
    block_id: BLOCK.acknowledgeLoss,
    // Optional for Slack, so that a form without it reaches the bot and is refused with the reason.
    optional: true,
    label: plain('This change removes data'),
    element: {
      type: 'checkboxes',
      action_id: 'value',
      options: [{ text: plain(`I accept: ${loss}`), value: LOSS_ACCEPTED }],
    },
  };
}

export function decisionForm(r: ChangeRequest, kind: DecisionKind): View {
  const verb = kind === 'approve' ? 'Approve' : 'Reject';
  return modal(
    FORMS.decision,
    `${verb} change`,
    verb,
    encodeMeta({ id: r.id, kind } satisfies DecisionMeta),
    [
      section(`${requestTitle(r)} in ${whereWords(r)}`),
      textInput(BLOCK.reason, kind === 'approve' ? 'Why approve it' : 'Why reject it', {
        multiline: true,
        maxLength: MAX_REASON,
        hint: 'Required. It goes into the audit trail.',
      }),
      ...(kind === 'approve' ? lossAcknowledgement(r) : []),
    ],
  );
}

/**
 * The open policy form with the pattern's hint made true for `pattern` (as typed so far), or
 * `undefined` when the hint already is. Only the fields views.update takes are kept.
 */
export function withPatternHint(
  view: {
    blocks: unknown[];
    title: unknown;
    submit?: unknown;
    close?: unknown;
    private_metadata?: string;
    callback_id?: string;
  },
  pattern: string,
): View | undefined {
  const hint = patternHint(pattern);
  let changed = false;
  const blocks = view.blocks.map((b) => {
    const block = b as { block_id?: string; hint?: { text?: string } };
    if (block.block_id !== BLOCK.pattern || block.hint?.text === hint) return b;
    changed = true;
    return { ...block, hint: plain(hint) };
  });
  if (!changed) return undefined;
  return {
    type: 'modal',
    title: view.title as View['title'],
    ...(view.submit ? { submit: view.submit as View['submit'] } : {}),
    ...(view.close ? { close: view.close as View['close'] } : {}),
    ...(view.private_metadata !== undefined ? { private_metadata: view.private_metadata } : {}),
    ...(view.callback_id ? { callback_id: view.callback_id } : {}),
    blocks: blocks as View['blocks'],
  };
}
