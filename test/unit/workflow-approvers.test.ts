import { describe, expect, it } from 'vitest';
import { createApproverDirectory } from '../../src/workflow/filing/approvers.ts';

function directory(groups: Record<string, string[]>, ttlMs = 1000) {
  let clock = 0;
  const calls: string[] = [];
  let failing = false;
  const dir = createApproverDirectory({
    approvers: new Map([
      ['prod', ['U1', 'S9']],
      ['dev', ['U2']],
    ]),
    listMembers: async (g) => {
      calls.push(g);
      if (failing) throw new Error('slack down');
      return groups[g] ?? [];
    },
    ttlMs,
    now: () => clock,
  });
  return {
    dir,
    calls,
    tick: (ms: number) => {
      clock += ms;
    },
    fail: (v: boolean) => {
      failing = v;
    },
  };
}

describe('approver directory', () => {
  it('takes users listed directly, and members of listed groups, per environment', async () => {
    const { dir } = directory({ S9: ['U7'] });
    expect(await dir.isApprover('prod', 'U1')).toBe(true);
    expect(await dir.isApprover('prod', 'U7')).toBe(true);
    expect(await dir.isApprover('prod', 'U2')).toBe(false);
    expect(await dir.isApprover('dev', 'U2')).toBe(true);
    expect(await dir.isApprover('dev', 'U7')).toBe(false);
    expect(await dir.isApprover('unknown', 'U1')).toBe(false);
  });

  it('reads a group once per ttl, not per click; concurrent asks share one read', async () => {
    const { dir, calls, tick } = directory({ S9: ['U7'] });
    await Promise.all([
      dir.isApprover('prod', 'U7'),
      dir.isApprover('prod', 'U8'),
      dir.isApprover('prod', 'U9'),
    ]);
    await dir.isApprover('prod', 'U7');
    expect(calls).toEqual(['S9']);
    tick(1001);
    await dir.isApprover('prod', 'U7');
    expect(calls).toEqual(['S9', 'S9']);
  });

  it('keeps the last known members when a refresh fails, and fails closed when none are known', async () => {
    const known = directory({ S9: ['U7'] });
    await known.dir.isApprover('prod', 'U7');
    known.tick(2000);
    known.fail(true);
    expect(await known.dir.isApprover('prod', 'U7')).toBe(true);

    const unknown = directory({ S9: ['U7'] });
    unknown.fail(true);
    await expect(unknown.dir.isApprover('prod', 'U7')).rejects.toThrow('slack down');
    // a user listed directly does not need the group read
    expect(await unknown.dir.isApprover('prod', 'U1')).toBe(true);
  });
});
