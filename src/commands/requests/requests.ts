import * as z from 'zod';
import { InputError } from '../../core/index.ts';
import type { ChangeRequest } from '../../workflow/index.ts';
// The terminal imports this module only for `requests` and `import` (src/terminal/cli.ts), so not at start.
import { approvalsNeeded, approvalsOf, awaitsReview, setVhosts } from '../../workflow/index.ts';
import { type FlagDefaults, parseArgs, parseWith } from '../parse.ts';
import { usageOf } from '../registry.ts';

const REQUESTS_USAGE = usageOf('requests');

/**
 * `requests [--env E]`: the change requests still open (pending, approved, applying), oldest
 * first, and the break-glass changes applied without approval and not reviewed yet (marked
 * `unreviewed`). Read-only; the same list in Slack and the terminal.
 */

export interface RequestsInput {
  readonly env?: string | undefined;
}

const Words = z.object({ env: z.string().min(1).optional() });

/** `defaults`: a Slack channel's `--env` (`use`), taken where the words give none. */
export function parseRequests(words: readonly string[], defaults: FlagDefaults = {}): RequestsInput {
  const { positionals, flags } = parseArgs(words, { env: 'string' }, REQUESTS_USAGE);
  if (positionals.length > 0) {
    throw new InputError(`requests takes no ${JSON.stringify(positionals[0])}.`, { usage: REQUESTS_USAGE });
  }
  return parseWith(Words, { env: flags.env ?? defaults.env }, REQUESTS_USAGE);
}

/** What `requests` reads. RequestStore and Workflow satisfy it. */
export interface RequestsSource {
  listOpen(env?: string): Promise<ChangeRequest[]>;
  /** Break-glass changes not reviewed yet; absent: not known to this source. */
  listUnreviewed?(env?: string): Promise<ChangeRequest[]>;
  /** The environments frozen now (`freeze`); absent: not known to this source. */
  frozen?(): Promise<readonly FrozenEnvironment[]>;
}

/** An environment frozen now: nothing is applied there until `until`, unless an approver lifts it. */
export interface FrozenEnvironment {
  env: string;
  until: string;
  by: string;
  reason: string;
}

/** One request as docs/json.md lists it (`requests --json`). */
export interface RequestEntry {
  id: string;
  state: ChangeRequest['state'];
  env: string;
  vhost: string;
  change: {
    action: ChangeRequest['action'];
    policy: string;
    vhost: string;
    operator: boolean;
    before: ChangeRequest['before'];
    after: ChangeRequest['after'];
  };
  requester: ChangeRequest['requester'];
  /**
   * A change set (`import`, or a set's revert): the file it came from, how many policy changes it
   * holds, and every vhost they touch (`change` is then its first step's).
   */
  set?: { source: string; size: number; vhosts: string[] };
  createdAt: string;
  expiresAt: string;
  decision?: ChangeRequest['decision'];
  /** Distinct approvers the change needs, and the approvals given so far (in order). */
  approvalsRequired: number;
  approvals: NonNullable<ChangeRequest['approvals']>;
  revertOf?: string;
  /** Applied (or being applied) without approval: who, why, and by when an approver reviews it. */
  breakGlass?: ChangeRequest['breakGlass'];
  review?: ChangeRequest['review'];
  /** A break-glass change no approver has reviewed yet. */
  unreviewed?: true;
}

export interface RequestsResult {
  requests: RequestEntry[];
  /** The environments frozen now (approved requests there wait for the freeze's end). */
  frozen: readonly FrozenEnvironment[];
}

export function requestEntry(r: ChangeRequest): RequestEntry {
  return {
    id: r.id,
    state: r.state,
    env: r.env,
    vhost: r.vhost,
    change: {
      action: r.action,
      policy: r.policy,
      vhost: r.vhost,
      operator: r.layer === 'operator',
      before: r.before,
      after: r.after,
    },
    requester: r.requester,
    ...(r.set ? { set: { source: r.set.source, size: r.set.steps.length, vhosts: setVhosts(r.set) } } : {}),
    createdAt: r.createdAt,
    expiresAt: r.expiresAt,
    ...(r.decision ? { decision: r.decision } : {}),
    approvalsRequired: approvalsNeeded(r),
    approvals: approvalsOf(r),
    ...(r.revertOf ? { revertOf: r.revertOf } : {}),
    ...(r.breakGlass ? { breakGlass: r.breakGlass } : {}),
    ...(r.review ? { review: r.review } : {}),
    ...(awaitsReview(r) ? { unreviewed: true as const } : {}),
  };
}

export async function requests(input: RequestsInput, source: RequestsSource): Promise<RequestsResult> {
  const [open, unreviewed, frozen] = await Promise.all([
    source.listOpen(input.env),
    source.listUnreviewed?.(input.env) ?? [],
    source.frozen?.() ?? [],
  ]);
  // A break-glass change on its way is open and unreviewed at once: listed once, where it is open.
  const ids = new Set(open.map((r) => r.id));
  return {
    requests: [...open, ...unreviewed.filter((r) => !ids.has(r.id))].map(requestEntry),
    frozen: frozen.filter((f) => input.env === undefined || f.env === input.env),
  };
}
