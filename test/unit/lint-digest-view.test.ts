import { describe, expect, it } from 'vitest';
import type { LintedFinding, LintResult } from '../../src/commands/lint/lint.ts';
import { diffFindings } from '../../src/policy/lint/lintDigest.ts';
import { SLACK_LIMITS } from '../../src/slack/limits.ts';
import { type DigestVhost, lintDigestView } from '../../src/slack/views/lintDigest.ts';

const text = (m: { blocks: unknown }) => JSON.stringify(m.blocks);

const finding = (i: number): LintedFinding => ({
  kind: 'unanchored',
  severity: 'warning',
  policy: `p-${i}`,
  operator: false,
  objects: [`q\u202e-${i}`],
  objectCount: 1,
  pattern: `p${i}`,
  why: `Policy "p-${i}"'s pattern has no ^, ${'and so on '.repeat(20)}`,
});

const linted = (vhost: string, findings: LintedFinding[], before?: LintedFinding[]): DigestVhost => ({
  vhost,
  result: {
    env: 'prod',
    vhost,
    answer: 'linted',
    findings,
    policies: 3,
    objects: 9,
    notRead: [],
  } as LintResult & {
    answer: 'linted';
  },
  diff: diffFindings(before, findings),
  first: before === undefined,
});

describe('the lint digest message', () => {
  it('says so when the broker could not be asked, and that the last digest is kept', () => {
    const m = lintDigestView({ env: 'prod', answer: 'not-asked', detail: 'connect ECONNREFUSED' });
    expect(text(m)).toContain('the broker could not be asked');
    expect(text(m)).toContain('the last digest is kept');
  });

  it('a vhost that could not be linted says so beside the others', () => {
    const down: DigestVhost = {
      vhost: 'gone',
      result: {
        env: 'prod',
        vhost: 'gone',
        answer: 'not-asked',
        why: 'unreachable',
        findings: [],
        policies: 0,
        objects: 0,
        notRead: [],
      },
    };
    const m = lintDigestView({
      env: 'prod',
      answer: 'linted',
      vhosts: [down, linted('ok', [finding(1)], [])],
    });
    expect(text(m)).toMatch(/`gone`.*could not lint.*the last digest is kept/);
    expect(text(m)).toContain(':new:');
  });

  it('names as written, and a digest too long for one message stays within Slack’s limits and says how to see all', () => {
    const many = Array.from({ length: 400 }, (_, i) => finding(i));
    const m = lintDigestView({ env: 'prod', answer: 'linted', vhosts: [linted('v\n1', many, [])] });
    expect(text(m)).not.toContain('\u202e');
    expect(text(m)).toContain('\\\\u202e');
    expect(m.blocks.length).toBeLessThanOrEqual(SLACK_LIMITS.blocksPerMessage);
    const total = m.blocks.reduce((n, b) => n + JSON.stringify(b).length, 0);
    expect(total).toBeLessThan(SLACK_LIMITS.blocksTotalText + 2000);
    expect(text(m)).toMatch(/lines shown: .*rmq lint --vhost V --env prod/);
  });
});
