/**
 * `/rmq lint`'s Slack message: the most severe first, inside Slack's limits however many findings
 * and however long their names, and every finding in the attached CSV when the message cannot
 * hold them all.
 */
import { describe, expect, it } from 'vitest';
import { type LintResult, whyOf } from '../../src/commands/lint/lint.ts';
import type { Finding } from '../../src/policy/lint/lint.ts';
import { lintView } from '../../src/slack/views/lint.ts';
import { checkMessage } from '../support/fakeSlack.ts';

function result(findings: Finding[]): LintResult {
  return {
    env: 'prod',
    vhost: 'v',
    answer: 'linted',
    brokerVersion: '4.3.6',
    findings: findings.map((f) => ({ ...f, why: whyOf(f) })),
    policies: findings.length,
    objects: 10,
    notRead: [],
  };
}

const unanchored = (i: number, long = false): Finding => ({
  kind: 'unanchored',
  severity: 'warning',
  policy: `${long ? 'p'.repeat(250) : 'p'}${i}`,
  operator: false,
  objects: Array.from({ length: 20 }, (_, k) => `${long ? 'q'.repeat(240) : 'q'}${k}`),
  objectCount: 500,
  pattern: long ? 'x'.repeat(255) : 'x',
});

describe('lintView', () => {
  it('a few findings: all in the message, no file, the counts in the heading', () => {
    const m = lintView(result([unanchored(1), unanchored(2)]));
    expect(checkMessage({ ...m })).toBeNull();
    expect(m.file).toBeUndefined();
    expect(JSON.stringify(m.blocks)).toContain('2 warnings');
  });

  it('300 findings with names at the limit: inside Slack limits, every finding in the CSV', () => {
    const m = lintView(result(Array.from({ length: 300 }, (_, i) => unanchored(i, true))));
    expect(checkMessage({ ...m })).toBeNull();
    expect(m.file?.filename).toBe('lint-v.csv');
    expect(m.file?.content.trim().split('\n')).toHaveLength(301);
    expect(JSON.stringify(m.blocks)).toMatch(/of 300 findings shown: every one is in the attached file/);
  });

  it('not asked: one sentence', () => {
    const m = lintView({ ...result([]), answer: 'not-asked', why: 'unreachable' });
    expect(checkMessage({ ...m })).toBeNull();
    expect(JSON.stringify(m.blocks)).toContain('Could not lint');
  });
});
