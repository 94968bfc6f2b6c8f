import { expect } from 'vitest';
import type { LabClient } from '../../src/rabbit/lab.ts';
import { waitFor } from './broker.ts';
import type { Harness } from './harness.ts';
import { requestFlow } from './requestFlow.ts';

/** A `history --json` entry of a set's step, as the e2e tests of an import read it. */
export interface SetEntry {
  readonly policy: string;
  readonly action: string;
  readonly set?: unknown;
  readonly requester: { readonly user: string };
}

/**
 * The rename (`keep` -> `keep-audit`) filed as a set and posted at `ts`: approved in Slack by
 * U0APPROVER with `reason` (the form submitted through the bot at `h`), then waited for until `keep`
 * is gone and `keep-audit` written; the vhost's trail once it holds both steps (`history` prints
 * `history --vhost V --json`).
 */
export async function approveRename(o: {
  readonly h: Harness;
  readonly admin: LabClient;
  readonly vhost: string;
  readonly request: { readonly id: string; readonly ts: string };
  readonly reason: string;
  readonly history: () => Promise<string>;
}): Promise<SetEntry[]> {
  const decided = await requestFlow(o.h).decide('U0APPROVER', 'approve', o.request, o.reason);
  expect(decided.status).toBe(200);
  await waitFor(async () => (await o.admin.getPolicy('user', o.vhost, 'keep')) === null, {
    what: 'the set applied',
  });
  expect(await o.admin.getPolicy('user', o.vhost, 'keep-audit')).toMatchObject({ priority: 10 });
  return waitFor(
    async () => {
      const e = JSON.parse(await o.history()).entries as SetEntry[];
      return e.length >= 2 && e;
    },
    { what: 'both steps in the trail' },
  );
}
