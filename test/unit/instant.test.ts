import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseHistory } from '../../src/commands/history/history.ts';
import { InputError } from '../../src/core/errors.ts';
import { instantWords, parseInstant, TIME_FORMS } from '../../src/core/instant.ts';

/** TIME as `history --since/--until` (and later `--at`) read it: src/core/instant.ts (issue 39, item 3). */

const NOW = new Date('2026-12-04T10:30:15.500Z');

describe('parseInstant: the three forms', () => {
  it.each([
    ['2026-12-04T03:12:00Z', '2026-12-04T03:12:00.000Z', 'iso'],
    ['2026-12-04T03:12Z', '2026-12-04T03:12:00.000Z', 'iso'],
    ['2026-12-04T04:12:00+01:00', '2026-12-04T03:12:00.000Z', 'iso'],
    ['2026-12-03T22:12:00-05:00', '2026-12-04T03:12:00.000Z', 'iso'],
    ['2026-12-04T03:12:00.250Z', '2026-12-04T03:12:00.250Z', 'iso'],
    ['2026-12-04T03:12:00+0100', '2026-12-04T02:12:00.000Z', 'iso'],
    ['2024-02-29T00:00:00Z', '2024-02-29T00:00:00.000Z', 'iso'],
    ['03:12', '2026-12-04T03:12:00.000Z', 'today'],
    ['3:12', '2026-12-04T03:12:00.000Z', 'today'],
    ['23:59', '2026-12-04T23:59:00.000Z', 'today'],
    ['-2h', '2026-12-04T08:30:15.500Z', 'relative'],
    ['-30m', '2026-12-04T10:00:15.500Z', 'relative'],
    ['-1d', '2026-12-03T10:30:15.500Z', 'relative'],
    [' -1d ', '2026-12-03T10:30:15.500Z', 'relative'],
  ])('%s -> %s (%s)', (text, iso, form) => {
    const i = parseInstant(text, NOW, '--since');
    expect(i.iso).toBe(iso);
    expect(i.ms).toBe(Date.parse(iso));
    expect(i.form).toBe(form);
  });

  it('an HH:MM says "today, UTC"', () => {
    expect(instantWords(parseInstant('03:12', NOW, '--since'))).toBe(
      '03:12 (today, UTC: 2026-12-04T03:12:00.000Z)',
    );
  });

  it.each([
    ['2026-12-04T03:12:00', 'needs its offset'],
    ['2026-12-04 03:12', 'needs its offset'],
    ['2026-12-04', 'a date alone'],
    ['2h', 'with a minus'],
    ['+2h', 'with a minus'],
    ['-2w', 'not a time'],
    ['-1h30m', 'not a time'],
    ['24:00', 'no such time of day'],
    ['12:60', 'no such time of day'],
    ['2026-02-30T00:00:00Z', 'no such date'],
    ['2026-12-04T25:00:00Z', 'no such date'],
    ['2026-12-04T03:12:00+25:00', 'no such offset'],
    ['yesterday', 'not a time'],
    ['', 'not a time'],
    ['1733282400', 'not a time'],
  ])('%j is refused (%s), naming the three forms', (text, why) => {
    let err: unknown;
    try {
      parseInstant(text, NOW, '--until');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(InputError);
    const message = (err as Error).message;
    expect(message).toContain(why);
    expect(message).toContain('--until');
    expect(message).toContain(TIME_FORMS);
  });

  it('an ISO instant written back parses to itself (property)', () => {
    fc.assert(
      fc.property(
        fc.date({
          min: new Date('1971-01-01T00:00:00Z'),
          max: new Date('2199-12-31T23:59:59Z'),
          noInvalidDate: true,
        }),
        fc.integer({ min: -14 * 60, max: 14 * 60 }),
        (d, offsetMin) => {
          expect(parseInstant(d.toISOString(), NOW, '--since').ms).toBe(d.getTime());
          // The same instant written with an offset of its own.
          const local = new Date(d.getTime() + offsetMin * 60_000).toISOString().slice(0, -1);
          const sign = offsetMin < 0 ? '-' : '+';
          const abs = Math.abs(offsetMin);
          const off = `${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
          expect(parseInstant(`${local}${off}`, NOW, '--since').iso).toBe(d.toISOString());
        },
      ),
    );
  });
});

describe('parseHistory: the window', () => {
  it('since inclusive, until exclusive, as instants of the query', () => {
    const h = parseHistory(['--since', '-2h', '--until', '10:00'], {}, { now: NOW });
    expect(h.since).toBe(Date.parse('2026-12-04T08:30:15.500Z'));
    expect(h.until).toBe(Date.parse('2026-12-04T10:00:00.000Z'));
  });

  it.each([
    [['--since', '-1h', '--until', '-2h'], 'is not before --until'],
    [['--since', '-1h', '--until', '-1h'], 'is not before --until'],
    [['--since', '23:00'], 'in the future'],
    [['--since', '2027-01-01T00:00:00Z'], 'in the future'],
    [['--since', '2026-12-04T03:12:00'], 'needs its offset'],
  ])('%j is refused: %s', (words, why) => {
    expect(() => parseHistory(words, {}, { now: NOW })).toThrow(why);
  });

  it("a Slack thread's start is the since when none is given, and says so", () => {
    const h = parseHistory([], {}, { now: NOW, threadTs: '1796355000.000200' });
    expect(h.since).toBe(1796355000000);
    expect(h.window?.thread).toBe(true);
    const typed = parseHistory(['--since', '-1h'], {}, { now: NOW, threadTs: '1796355000.000200' });
    expect(typed.window?.thread).toBeUndefined();
    expect(() =>
      parseHistory(['--until', '2026-12-01T00:00Z'], {}, { now: NOW, threadTs: '1796355000.000200' }),
    ).toThrow('This thread started at 2026-12-04T03:30:00.000Z, which is not before --until');
  });

  it('without a window, nothing changes', () => {
    expect(parseHistory(['cap'], {}, { now: NOW })).toEqual({ name: 'cap', verify: false });
  });
});
