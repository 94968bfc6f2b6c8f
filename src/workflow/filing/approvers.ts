/**
 * Who may approve, per environment: the users and user groups of SLACK_APPROVERS (or the
 * environment's `approvers`); and who may file change requests: those of SLACK_REQUESTERS (or
 * the environment's `requesters`; none: anyone). Slack user-group ids start with `S`; anything else is a user id.
 * Group members are read with an injected `usergroups.users.list`-style function and kept for
 * `ttlMs` (default five minutes), so a click never waits for Slack; a failed read keeps the
 * last known members (and is retried on the next ask).
 */

import { isSlackGroupId, isSlackUserId } from '../../core/index.ts';

export { isSlackGroupId, isSlackUserId };

/** `usergroups.users.list` for one group: the user ids in it. */
export type ListGroupMembers = (groupId: string) => Promise<readonly string[]>;

export interface ApproverDirectoryOptions {
  /** Environment name -> its approvers (user ids and group ids). */
  readonly approvers: ReadonlyMap<string, readonly string[]>;
  /** Environment name -> who may file change requests (user ids and group ids); absent or empty: anyone. */
  readonly requesters?: ReadonlyMap<string, readonly string[]>;
  readonly listMembers: ListGroupMembers;
  /** How long a group's members are trusted. Default 5 minutes. */
  readonly ttlMs?: number;
  readonly now?: () => number;
}

export interface ApproverDirectory {
  /** Whether `user` may approve requests of environment `env`. */
  isApprover(env: string, user: string): Promise<boolean>;
  /** The configured ids (users and groups) of `env`, for messages. */
  configured(env: string): readonly string[];
  /** Who may file change requests in `env` (user and group ids); empty: anyone. */
  requesters(env: string): readonly string[];
  /** Whether `user` may file change requests in `env` (true when no requesters are configured). */
  isRequester(env: string, user: string): Promise<boolean>;
}

export function createApproverDirectory(options: ApproverDirectoryOptions): ApproverDirectory {
  const ttl = options.ttlMs ?? 5 * 60_000;
  const now = options.now ?? Date.now;
  const cache = new Map<string, { members: ReadonlySet<string>; at: number }>();
  const inflight = new Map<string, Promise<ReadonlySet<string>>>();

  async function members(group: string): Promise<ReadonlySet<string>> {
    const hit = cache.get(group);
    if (hit && now() - hit.at < ttl) return hit.members;
    let p = inflight.get(group);
    if (!p) {
      p = options
        .listMembers(group)
        .then((ids) => {
          const set = new Set(ids);
          cache.set(group, { members: set, at: now() });
          return set as ReadonlySet<string>;
        })
        .catch((err: unknown) => {
          if (hit) return hit.members;
          throw err;
        })
        .finally(() => inflight.delete(group));
      inflight.set(group, p);
    }
    return p;
  }

  async function among(ids: readonly string[], user: string): Promise<boolean> {
    // A group's id as the user (never sent by Slack) is nobody: not the group it names.
    if (!isSlackUserId(user)) return false;
    if (ids.includes(user)) return true;
    for (const id of ids) {
      if (isSlackGroupId(id) && (await members(id)).has(user)) return true;
    }
    return false;
  }
  const requesters = (env: string) => options.requesters?.get(env) ?? [];

  return {
    configured: (env) => options.approvers.get(env) ?? [],
    isApprover: (env, user) => among(options.approvers.get(env) ?? [], user),
    requesters,
    async isRequester(env, user) {
      const ids = requesters(env);
      return ids.length === 0 || among(ids, user);
    },
  };
}
