import { z } from 'zod';
import type { AuditRecord, HistoryQuery, VerifyResult } from '../src/audit/types.ts';
import { InputError } from '../src/errors.ts';
import { type FlagDefaults, parseArgs, parseWith } from './parse.ts';

/**
 * `history [POLICY or NAME] [--vhost V] [--env E] [--verify]`: the audit trail, newest first:
 * the changes of a policy, or of every policy that governed an object of that name. `--verify`
 * walks the whole hash chain and names the first broken record. Read-only.
 */

export const HISTORY_USAGE = 'history [POLICY or NAME] [--vhost V] [--env E] [--verify]';

export interface HistoryInput extends HistoryQuery {
  readonly verify: boolean;
}

const Words = z.object({
  name: z.string().min(1).optional(),
  vhost: z.string().min(1, 'the vhost cannot be empty').optional(),
  env: z.string().min(1).optional(),
});

/** `defaults`: a Slack channel's `--vhost`/`--env` (`use`), taken where the words give none. */
export function parseHistory(words: readonly string[], defaults: FlagDefaults = {}): HistoryInput {
  const { positionals, flags } = parseArgs(
    words,
    { vhost: 'string', env: 'string', verify: 'boolean' },
    HISTORY_USAGE,
  );
  if (positionals.length > 1)
    throw new InputError(
      `history takes one policy or object name, got ${positionals.length}.`,
      HISTORY_USAGE,
    );
  const q = parseWith(
    Words,
    { name: positionals[0], vhost: flags.vhost ?? defaults.vhost, env: flags.env ?? defaults.env },
    HISTORY_USAGE,
  );
  return {
    ...(q.name === undefined ? {} : { name: q.name }),
    ...(q.vhost === undefined ? {} : { vhost: q.vhost }),
    ...(q.env === undefined ? {} : { env: q.env }),
    verify: flags.verify === true,
  };
}

/** What `history` reads. AuditTrail satisfies it. */
export interface HistorySource {
  list(query: HistoryQuery): Promise<AuditRecord[]>;
  verify(): Promise<VerifyResult>;
}

export interface HistoryResult {
  /** Newest first. */
  entries: AuditRecord[];
  /** With `--verify`: the whole chain's state (not only the entries shown). */
  verify?: VerifyResult;
}

export async function history(input: HistoryInput, source: HistorySource): Promise<HistoryResult> {
  const { verify, ...query } = input;
  const [entries, chain] = await Promise.all([source.list(query), verify ? source.verify() : undefined]);
  return { entries, ...(chain ? { verify: chain } : {}) };
}

/** 0, or 1 when `--verify` found the chain broken (INTERFACE.md). */
export function historyExitCode(r: HistoryResult): number {
  return r.verify && !r.verify.ok ? 1 : 0;
}

/** One sentence on the chain, for the terminal and Slack. */
export function verifySentence(v: VerifyResult): string {
  if (v.ok) return `The audit chain is intact (${v.records} record${v.records === 1 ? '' : 's'}).`;
  const why = {
    'hash-mismatch': 'its content does not match its hash (edited)',
    'chain-broken': 'it does not follow the record before it (a record before it was removed or rewritten)',
    unreadable: 'it cannot be read as an audit record',
    'head-mismatch': 'the trail ends before its recorded head (the last record was removed or rewritten)',
  }[v.why];
  return `The audit chain is BROKEN at ${v.broken}: ${why}.`;
}
