/**
 * `AuditRecord` is a union on `action` (issue 26 item 7): a freeze or a review has only its own
 * fields. Records stored before, padded to a change's shape, still parse (the padding dropped for
 * reading) and their seals still hold over the JSON as stored.
 */
import { describe, expect, it } from 'vitest';
import { recordHash } from '../../src/audit/trail.ts';
import { AuditRecordSchema, isChange } from '../../src/audit/types.ts';
import { historyText } from '../../src/terminal/history.ts';
import { freezeEntry } from '../../src/workflow/deciding/thaw.ts';
import { PADDED_FREEZE, PADDED_REVIEW } from '../fixtures/audit-padded-records.ts';

const PADDING = ['vhost', 'policy', 'operator', 'before', 'after', 'objects', 'unpredictable'];

describe('padded freeze and review records as stored today', () => {
  const stored = [PADDED_FREEZE, PADDED_REVIEW].map((line) => JSON.parse(line) as Record<string, unknown>);

  it('parse into the union, without the padding', () => {
    const [freeze, review] = stored.map((s) => AuditRecordSchema.parse(s));
    expect(freeze?.action).toBe('freeze');
    if (freeze?.action !== 'freeze') throw new Error('not a freeze');
    expect(freeze.freeze).toMatchObject({ by: 'U0ALICE', reason: 'INC-7' });
    for (const k of PADDING) expect(freeze).not.toHaveProperty(k);
    expect(isChange(freeze)).toBe(false);

    expect(review?.action).toBe('review');
    if (review?.action !== 'review') throw new Error('not a review');
    expect(review).toMatchObject({ policy: 'cap', vhost: '/', reviewOf: 'a-r-0123', actor: 'U0BOB' });
    for (const k of ['before', 'after', 'objects', 'unpredictable']) expect(review).not.toHaveProperty(k);
  });

  it('keep their seals and their chain over the JSON as stored (what verify checks)', () => {
    let prev = '';
    for (const s of stored) {
      const { hash, ...body } = s;
      expect(recordHash(body)).toBe(hash);
      expect(body.prev).toBe(prev);
      prev = hash as string;
    }
    // The parsed record lacks the padding the seal covers: sealing it would not match.
    const { hash, ...parsed } = AuditRecordSchema.parse(stored[0]);
    expect(recordHash(parsed)).not.toBe(hash);
  });

  it('read in history as a freeze and a review, with no policy lines', () => {
    const entries = stored.map((s) => AuditRecordSchema.parse(s));
    const text = historyText({ entries, unreadable: 0 });
    expect(text).toContain('freeze of prod');
    expect(text).toContain('frozen by U0ALICE until 2026-11-30T14:00:00.000Z');
    expect(text).toContain('review policy "cap" in prod/"/"');
    expect(text).toContain('reviewed by U0BOB (break-glass change a-r-0123)');
    expect(text).not.toContain('before:');
    expect(text).not.toContain('policy ""');
  });
});

describe('a new freeze record', () => {
  it('has no policy, vhost or change fields', () => {
    const at = new Date('2026-12-01T09:00:00.000Z');
    const entry = freezeEntry(
      'prod',
      { until: '2026-12-01T10:00:00.000Z', by: 'U0ALICE', reason: 'INC-8', at: at.toISOString() },
      at,
    );
    for (const k of PADDING) expect(entry).not.toHaveProperty(k);
    const record = AuditRecordSchema.parse({ ...entry, prev: '', hash: 'h' });
    expect(record).not.toHaveProperty('policy');
    expect(record.action).toBe('freeze');
  });
});
