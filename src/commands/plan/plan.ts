import * as z from 'zod';
import { InputError } from '../../core/index.ts';
import type { ReadDefinitions, ReadOptions } from '../../definitions/index.ts';
import { changeJson, type PlanBroker, type PlanResult, planFile } from '../../plan/index.ts';
import { quoted } from '../../text/index.ts';
import { whyOf } from '../lint/lint.ts';
import { parseArgs, parseVhostMap, parseWith, type VhostMapping, vhostMapOf } from '../parse.ts';
import { usageOf } from '../registry.ts';
import { type IncompleteJson, incompleteJson, incompleteWords } from '../words.ts';

const PLAN_USAGE = usageOf('plan');

/**
 * `plan FILE [--vhost V] [--vhost-map FROM=TO …] [--env E] [--prune] [--detailed-exitcode]`: the words -> what to plan
 * (refused with exit 2 when malformed); the planner (src/plan/) answers; its result as the
 * `--json` document (docs/json.md, `plan --json`) and the exit code. The file itself is read by the front
 * door (the terminal: a path or `-` for stdin), within the reader's size limit.
 */

const FLAGS = {
  vhost: 'string',
  'vhost-map': 'list',
  env: 'string',
  prune: 'boolean',
  'detailed-exitcode': 'boolean',
} as const;

const Words = z.object({
  vhost: z.string().min(1, 'the vhost cannot be empty').optional(),
  env: z.string().min(1).optional(),
});

export interface PlanInput {
  /** A path, or `-` for standard input. */
  readonly file: string;
  /** Given with `--vhost`: only that vhost, and the vhost of policies that name none. */
  readonly vhost?: string | undefined;
  /** `--vhost-map FROM=TO`: the file's vhost FROM read as TO. */
  readonly vhostMap?: readonly VhostMapping[] | undefined;
  readonly env?: string | undefined;
  readonly prune: boolean;
  readonly detailedExitcode: boolean;
}

/**
 * `attached`: in Slack the file is attached to the mention; the word, when given, names which of
 * the attached files (`file` is then `''` when none is named).
 */
export function parsePlan(words: readonly string[], options: { attached?: boolean } = {}): PlanInput {
  const { positionals, flags, lists } = parseArgs(words, FLAGS, PLAN_USAGE);
  const [file = options.attached ? '' : undefined, ...rest] = positionals;
  if (file === undefined || (file === '' && !options.attached)) {
    throw new InputError('plan needs a definitions file: a path, or - for standard input.', {
      usage: PLAN_USAGE,
    });
  }
  if (rest.length > 0)
    throw new InputError(`plan takes one file, got ${rest.length + 1}.`, { usage: PLAN_USAGE });
  const { vhost, env } = parseWith(Words, { vhost: flags.vhost, env: flags.env }, PLAN_USAGE);
  return {
    file,
    vhost,
    vhostMap: parseVhostMap(lists['vhost-map'], PLAN_USAGE),
    env,
    prune: flags.prune === true,
    detailedExitcode: flags['detailed-exitcode'] === true,
  };
}

/** How the file is read for the plan: `--vhost` and `--vhost-map`. */
export function planReadOptions(input: PlanInput): ReadOptions {
  return { vhost: input.vhost, vhostMap: vhostMapOf(input.vhostMap) };
}

/**
 * The vhosts the plan is asked in, each one the environment must answer about: the file's (a
 * file of several names them at its top), or `--vhost`'s when the file was refused; a default
 * vhost never.
 */
export function planVhosts(input: PlanInput, read: ReadDefinitions): readonly string[] {
  return read.ok ? read.file.vhosts : input.vhost ? [input.vhost] : [];
}

/** The plan of the file read: the planner's answer, or the file's refusal as the plan refused. */
export async function runPlan(
  input: PlanInput,
  read: ReadDefinitions,
  broker: PlanBroker,
): Promise<PlanResult> {
  return read.ok
    ? await planFile(read.file, broker, { prune: input.prune })
    : { status: 'refused', problems: [read.problem] };
}

/** The `--json` document: docs/json.md, `plan --json` (the front door puts `env` first). */
export function planJson(result: PlanResult): object {
  if (result.status === 'refused') {
    return {
      error: { code: 'bad-input', message: result.problems.join(' ') },
      problems: result.problems,
    };
  }
  if (result.status === 'not-asked') {
    return { error: { code: result.why, message: result.detail ?? result.why } };
  }
  const { plan } = result;
  return {
    vhosts: plan.vhosts.map((v) => v.vhost),
    changes: plan.changes.map(changeJson),
    unchanged: plan.unchanged,
    ignored: plan.ignored,
    objects: plan.vhosts.flatMap((v) =>
      v.objects.map((o) => ({
        vhost: o.vhost,
        name: o.name,
        kind: o.kind,
        before: o.before,
        after: o.after,
        lost: o.lost,
        gained: o.gained,
        changed: o.changed,
        now: o.now,
        impact: o.impact,
      })),
    ),
    impact: plan.impact,
    // Beside the impact: what lint would find in the end state and does not find now.
    findings: plan.findings.map((f) => ({ ...f, why: whyOf(f) })),
    transitional: plan.transitional.map((t) => ({
      vhost: t.vhost,
      name: t.name,
      kind: t.kind,
      step: t.step,
      impact: t.impact,
    })),
    unpredictable: plan.vhosts.flatMap((v) => v.unpredictable.map((u) => ({ vhost: v.vhost, ...u }))),
    ...incompleteKey(result),
  };
}

/** `incomplete` of the document, when what the loss depends on could not be read. */
function incompleteKey(result: PlanResult): { incomplete?: IncompleteJson } {
  const incomplete =
    result.status === 'planned' ? incompleteJson(result.plan.unread ?? [], 'loss', quoted) : undefined;
  return incomplete ? { incomplete } : {};
}

/**
 * The sentence a plan that could not read what its loss depends on leads with (both views; `show`
 * formats a vhost's name), or undefined when it read all.
 */
export function planIncompleteWords(result: PlanResult, show: (name: string) => string): string | undefined {
  const unread = result.status === 'planned' ? (result.plan.unread ?? []) : [];
  return unread.length ? incompleteWords(unread, 'loss', show) : undefined;
}

/**
 * 0 answered (with `--detailed-exitcode`: 4 when something is to change), 2 refused, 3 not asked,
 * and 3 when what the loss depends on could not be read: an incomplete plan is no answer, with
 * `--detailed-exitcode` too (never 0 "nothing to change" nor 4 as if its loss were known).
 */
export function planExitCode(result: PlanResult, detailed: boolean): number {
  if (result.status === 'refused') return 2;
  if (result.status === 'not-asked') return 3;
  if (result.plan.unread?.length) return 3;
  return detailed && result.plan.changes.length > 0 ? 4 : 0;
}
