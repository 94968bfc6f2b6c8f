import * as z from 'zod';
import { InputError } from '../../core/index.ts';
import { MAX_FILE_BYTES, readDefinitions, readDefinitionsFolder } from '../../definitions/index.ts';
import { changeJson, type Plan, type PlanBroker, planFile } from '../../plan/index.ts';
import type { ChangeRequest, Origin, Workflow } from '../../workflow/index.ts';
import {
  isWorkflowError,
  MAX_TIMEBOX_MS,
  MIN_TIMEBOX_MS,
  parseTimeBox,
  plannedSet,
} from '../../workflow/index.ts';
import { type FlagDefaults, parseArgs, parseVhostMap, parseWith, vhostMapOf } from '../parse.ts';
import { usageOf } from '../registry.ts';
import { requestEntry } from '../requests/requests.ts';

const IMPORT_USAGE = usageOf('import');

/**
 * `import FILE --reason TEXT [--vhost V] [--vhost-map FROM=TO …] [--env E] [--prune] [--thread LINK] [--for DURATION] [--break-glass]`:
 * one change request for the whole set of a definitions file, planned against the broker
 * (src/plan/), filed through the workflow as one set (`Workflow.fileSet`). The terminal sends the
 * file to the bot (`POST /api/import`, src/bot/importRoute.ts) and never touches Redis or the
 * broker's write credentials; the bot runs `fileImport` with the requester its token names.
 */

const FLAGS = {
  reason: 'string',
  vhost: 'string',
  'vhost-map': 'list',
  env: 'string',
  prune: 'boolean',
  thread: 'string',
  for: 'string',
  'break-glass': 'boolean',
} as const;

/**
 * What the terminal sends and the bot reads: the file's text (a folder: each of its files) and the
 * flags (zod at the bot's boundary).
 */
export const ImportBody = z
  .object({
    /** The file's (or folder's) name as given (`-`: standard input): the set's `source`. */
    source: z.string().min(1).max(1024),
    file: z.string().max(MAX_FILE_BYTES).optional(),
    /** A folder's files, each read on its own, as one set. */
    files: z
      .array(z.object({ name: z.string().min(1).max(1024), file: z.string().max(MAX_FILE_BYTES) }))
      .max(10_000)
      .optional(),
    reason: z.string().min(1).max(2000),
    vhost: z.string().min(1).optional(),
    /** `--vhost-map FROM=TO`, each FROM once. */
    vhostMap: z
      .array(z.object({ from: z.string().min(1), to: z.string().min(1) }))
      .max(1000)
      .refine((m) => new Set(m.map((x) => x.from)).size === m.length, 'a vhost of the file is mapped twice')
      .optional(),
    env: z.string().min(1).optional(),
    prune: z.boolean().optional(),
    /** A Slack message link: the result is posted in that thread. */
    thread: z.string().optional(),
    breakGlass: z.boolean().optional(),
    /** `--for`: the whole set reverted this long after it is applied. */
    timeBoxMs: z.number().int().min(MIN_TIMEBOX_MS).max(MAX_TIMEBOX_MS).optional(),
  })
  .refine((b) => (b.file === undefined) !== (b.files === undefined), {
    message: 'give the definitions as file (one file) or files (a folder), one of the two',
    path: ['file'],
  });
export type ImportBody = z.infer<typeof ImportBody>;

export interface ImportWords {
  readonly file: string;
  readonly body: Omit<ImportBody, 'file' | 'files' | 'source'>;
}

/**
 * `attached`: in Slack the file is attached to the mention; the word, when given, names which of
 * the attached files (`file` is then `''` when none is named).
 */
export function parseImport(
  words: readonly string[],
  defaults: FlagDefaults = {},
  options: { attached?: boolean } = {},
): ImportWords {
  const { positionals, flags, lists } = parseArgs(words, FLAGS, IMPORT_USAGE);
  if (options.attached && positionals.length === 0) positionals.push('');
  if (positionals.length !== 1)
    throw new InputError(
      positionals.length === 0
        ? 'import needs a definitions file (a path, or - for standard input).'
        : `import takes one file, got ${positionals.length}.`,
      { usage: IMPORT_USAGE },
    );
  const timeBoxMs = typeof flags.for === 'string' ? parseTimeBox(flags.for, 'import') : undefined;
  const reason = typeof flags.reason === 'string' ? flags.reason.trim() : '';
  if (!reason)
    throw new InputError('import needs --reason: why the set is changed.', { usage: IMPORT_USAGE });
  // Not the default vhost (RMQ_VHOST, a channel's): without --vhost, every vhost the file names.
  // Not `Vhost.optional()` either: its default ('/') fills in an absent --vhost, and a file of
  // other vhosts was read as having nothing for '/'.
  const { vhost, env } = parseWith(
    z.object({
      vhost: z.string().min(1, 'the vhost cannot be empty').optional(),
      env: z.string().min(1).optional(),
    }),
    { vhost: flags.vhost, env: flags.env ?? defaults.env },
    IMPORT_USAGE,
  );
  const vhostMap = parseVhostMap(lists['vhost-map'], IMPORT_USAGE);
  return {
    file: positionals[0] as string,
    body: {
      reason,
      ...(vhost ? { vhost } : {}),
      ...(vhostMap ? { vhostMap } : {}),
      ...(env ? { env } : {}),
      ...(flags.prune === true ? { prune: true } : {}),
      ...(typeof flags.thread === 'string' ? { thread: flags.thread } : {}),
      ...(flags['break-glass'] === true ? { breakGlass: true } : {}),
      ...(timeBoxMs !== undefined ? { timeBoxMs } : {}),
    },
  };
}

/** `plan` in the `--json` of `import`: the plan's keys (docs/json.md, `plan --json`) that say what is filed. */
export function planSummaryJson(plan: Plan) {
  return {
    changes: plan.changes.map(changeJson),
    unchanged: plan.unchanged,
    ignored: plan.ignored,
    impact: plan.impact,
    transitional: plan.transitional,
  };
}

export type ImportOutcome =
  | { readonly status: 'filed'; readonly request: ChangeRequest; readonly plan: Plan }
  /** The file, the plan or the workflow refused it: nothing filed. `code`: the workflow's refusal code, when it was one. */
  | { readonly status: 'refused'; readonly problems: readonly string[]; readonly code?: string }
  | { readonly status: 'not-asked'; readonly why: string; readonly detail?: string };

export interface ImportDeps {
  readonly workflow: Workflow;
  /**
   * The environment's broker (the one that answers Slack) and its name; throws an InputError for
   * an unknown environment, or a vhost of the file outside the environment's (RMQ_VHOSTS).
   */
  readonly broker: (
    env: string | undefined,
    vhosts: readonly string[],
  ) => { readonly name: string; readonly broker: PlanBroker };
}

/** Reads, plans and files the set for `requester` (`api:NAME`, or a Slack user): nothing is filed on a refusal. */
export async function fileImport(
  deps: ImportDeps,
  body: ImportBody,
  requester: string,
  origin: Origin,
): Promise<ImportOutcome> {
  const options = { vhost: body.vhost, vhostMap: vhostMapOf(body.vhostMap) };
  const read = body.files
    ? readDefinitionsFolder(
        body.source,
        body.files.map((f) => ({ name: f.name, bytes: f.file })),
        options,
      )
    : readDefinitions(body.file ?? '', options);
  if (!read.ok) return { status: 'refused', problems: [read.problem] };
  const { name, broker } = deps.broker(body.env, read.file.vhosts);
  const planned = await planFile(read.file, broker, { prune: body.prune === true });
  if (planned.status === 'refused') return { status: 'refused', problems: planned.problems };
  if (planned.status === 'not-asked')
    return { status: 'not-asked', why: planned.why, ...(planned.detail ? { detail: planned.detail } : {}) };
  const { plan } = planned;
  if (plan.changes.length === 0)
    return {
      status: 'refused',
      code: 'nothing-to-do',
      problems: [
        `Nothing to change: the broker already has every policy, upstream and shovel of ${body.source} (${plan.unchanged} unchanged).`,
      ],
    };
  try {
    const { request } = await deps.workflow.fileSet({
      env: name,
      source: body.source,
      ...plannedSet(plan),
      requester: { user: requester, reason: body.reason },
      origin,
      ...(body.breakGlass ? { breakGlass: true } : {}),
      ...(body.timeBoxMs !== undefined ? { timeBoxMs: body.timeBoxMs } : {}),
    });
    return { status: 'filed', request, plan };
  } catch (err) {
    if (isWorkflowError(err)) return { status: 'refused', problems: [err.message], code: err.code };
    throw err;
  }
}

/** The `--json` of `import` (and the bot's answer): the request as `requests --json` has it, and the plan. */
export function importJson(env: string, request: ChangeRequest, plan: Plan) {
  return { env, request: requestEntry(request), plan: planSummaryJson(plan) };
}
