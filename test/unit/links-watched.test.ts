/**
 * `links` with the bot's watch's record (src/links/watched.ts), pure: a link the broker reports
 * `starting` is stuck when the watch recorded it reported and not running (stopped or stuck) for
 * more than a minute, counted from the later of when it saw it so and when its unbroken run of
 * readings began; a link recorded `missing` that now starts, a link not starting, one not
 * expected, or a record within the minute: as the reading gives it. The reason is the bot's words,
 * never shown as the broker's. What the watch records for it (src/watch/linksBurst.ts): since when
 * it first saw the link not running, and the broker's last error, kept across readings that say
 * it in the bot's words, and kept out of the audit record.
 */
import { describe, expect, it } from 'vitest';
import type { LinksResult, LinksWatchRead } from '../../src/commands/links/index.ts';
import {
  countLinks,
  type LinkRow,
  type LinksAsWatched,
  linkKey,
  reasonFromBroker,
  STARTING_RETRIES_WORDS,
  stuckAsWatched,
} from '../../src/links/index.ts';
import { linksView } from '../../src/slack/views/links.ts';
import { linksText } from '../../src/terminal/links.ts';
import { linksEntries } from '../../src/watch/links.ts';
import { linksMoved, stuckAcross } from '../../src/watch/linksBurst.ts';

const T = Date.UTC(2026, 11, 6, 4, 0, 0);
const iso = (ms: number) => new Date(ms).toISOString();

const row = (over: Partial<LinkRow> = {}): LinkRow => ({
  kind: 'exchange',
  vhost: 'v',
  object: 'fed.x',
  upstream: 'silent',
  policy: 'fed',
  expected: true,
  state: 'starting',
  node: 'rabbit@a',
  reason: null,
  status: 'starting',
  next: null,
  ...over,
});

const watched = (
  state: string,
  since: number,
  from = since,
  error: string | null = null,
): LinksAsWatched => ({
  from: iso(from),
  down: new Map([[linkKey(row()), { state, since: iso(since), error }]]),
});

describe('stuckAsWatched', () => {
  it.each([
    ['recorded stuck 61 s ago', row(), watched('stuck', T - 61_000), 'stuck'],
    ['recorded stopped 61 s ago', row(), watched('stopped', T - 61_000), 'stuck'],
    ['recorded 60 s ago: not more than a minute', row(), watched('stuck', T - 60_000), 'starting'],
    [
      'recorded long ago, the watch reading for 30 s',
      row(),
      watched('stuck', T - 3_600_000, T - 30_000),
      'starting',
    ],
    ['recorded missing: now starting, just created', row(), watched('missing', T - 600_000), 'starting'],
    ['no record', row(), { from: iso(T - 600_000), down: new Map() }, 'starting'],
    ['running', row({ state: 'running', status: 'running' }), watched('stuck', T - 120_000), 'running'],
    [
      'stopped stays stopped',
      row({ state: 'stopped', status: 'error', reason: 'econnrefused' }),
      watched('stopped', T - 120_000),
      'stopped',
    ],
    [
      'not expected',
      row({ state: 'unexpected', expected: false, policy: null }),
      watched('stuck', T - 120_000),
      'unexpected',
    ],
  ] as const)('%s', (_, r, w, state) => {
    expect(stuckAsWatched([r], w, T).map((x) => x.state)).toEqual([state]);
  });

  it("says since when as the bot's watch saw it, the broker's last error, the runbook's step; not as the broker's", () => {
    const [stuck] = stuckAsWatched(
      [row()],
      watched('stuck', T - 90_000, T - 120_000, 'handshake_receive_timed_out'),
      T,
    );
    expect(stuck).toMatchObject({
      state: 'stuck',
      status: 'starting',
      reason: `starting again at each try, not running since ${iso(T - 90_000)} as the bot's watch saw it; the broker's last error: handshake_receive_timed_out`,
    });
    expect(stuck?.next).toBeTruthy();
    expect(stuck && reasonFromBroker(stuck)).toBe(false);
    expect(reasonFromBroker(row({ state: 'stopped', status: 'error', reason: 'x' }))).toBe(true);
  });
});

describe('the answer says once why one reading cannot tell', () => {
  const doc = (links: LinkRow[], watch?: LinksWatchRead): LinksResult => ({
    env: 'prod',
    vhosts: ['v'],
    answer: 'answered',
    brokerVersion: '4.3.6',
    notRead: [],
    ...(watch ? { watch } : {}),
    links,
    risks: [],
    advisories: [],
    counts: countLinks(links),
  });
  it.each([
    ['two starting, no watch asked', [row(), row({ object: 'fed.y' })], undefined, ''],
    [
      'the watch read',
      [row()],
      { read: true as const, from: iso(T) },
      ` The bot's watch, reading since ${iso(T)}, has not seen it not running for over a minute.`,
    ],
    [
      'the watch not read',
      [row()],
      { read: false as const, why: 'Redis down' },
      " Not asked of the bot's watch: Redis down.",
    ],
  ])('%s', (_, links, watch, tail) => {
    const r = doc(links, watch);
    const text = linksText(r);
    expect(text.split(STARTING_RETRIES_WORDS).length - 1).toBe(1);
    expect(text).toContain(`${STARTING_RETRIES_WORDS}${tail}`);
    expect(JSON.stringify(linksView(r).blocks)).toContain('one reading cannot tell it stuck');
  });
  it('not said without a link starting', () => {
    const r = doc([row({ state: 'running', status: 'running' })]);
    expect(linksText(r)).not.toContain(STARTING_RETRIES_WORDS);
  });
});

describe('what the watch records of a link retrying', () => {
  it('down since it first saw it not running; the broker last error kept; not in the audit record', () => {
    const since = new Map<string, number>();
    const k = linkKey(row());
    stuckAcross([row()], since, T);
    // The try timed out: the broker's error, the watch tells it down (since the first reading).
    const error = row({ state: 'stopped', status: 'error', reason: 'handshake_receive_timed_out' });
    const first = linksMoved(new Map(), stuckAcross([error], since, T + 61_000), new Date(T + 61_000), since);
    expect(first.down.map((l) => [l.since, l.error])).toEqual([[iso(T), 'handshake_receive_timed_out']]);
    // Starting again: stuck across readings, in the bot's words; the broker's error kept.
    const again = linksMoved(
      first.next,
      stuckAcross([row()], since, T + 70_000),
      new Date(T + 70_000),
      since,
    );
    expect(again.next.get(k)).toMatchObject({
      state: 'stuck',
      since: iso(T),
      error: 'handshake_receive_timed_out',
    });
    const [entry] = linksEntries({
      env: 'prod',
      went: 'down',
      source: 'interval',
      links: first.down,
      stillDown: 1,
      at: new Date(T + 61_000),
    });
    expect(entry?.links[0]).toMatchObject({ state: 'stopped', since: iso(T) });
    expect(entry?.links[0]).not.toHaveProperty('error');
  });
});
