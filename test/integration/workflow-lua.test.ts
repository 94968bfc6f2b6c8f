/**
 * The request store's Lua scripts (src/workflow/lua/*.lua) as Redis runs them: each file loads
 * (SCRIPT LOAD: its syntax is valid Lua once its includes and placeholders are in), and each runs
 * its main cases against the real Redis, on keys of its own prefix, removed after. The store's
 * behaviour through them is request-moves.test.ts's, approvals.test.ts's and break-glass.test.ts's.
 */
import { randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FREEZE_SCRIPTS } from '../../src/workflow/deciding/freeze.ts';
import { loadScripts, luaScript } from '../../src/workflow/lua/scripts.ts';
import { MOVES } from '../../src/workflow/moves.ts';
import { STORE_SCRIPTS, storePlaceholders } from '../../src/workflow/store.ts';

const prefix = `rmq:test-lua-${randomBytes(5).toString('hex')}`;
const open = `${prefix}:open`;
let redis: Redis;
const SCRIPTS = [...STORE_SCRIPTS, ...FREEZE_SCRIPTS];
const lua = loadScripts(SCRIPTS, storePlaceholders());
const placeholders = storePlaceholders;
let n = 0;
const key = () => `${prefix}:request:${++n}`;
const eval_ = (script: string, keys: string[], args: (string | number)[]) =>
  redis.eval(script, keys.length, ...keys, ...args.map(String));

/** create.lua's ARGV from 1: doc, state, updatedAt, expiresAt (ms), score in the open set. */
const fields = (state: string, expiresAt: number, score: number | '' = 1) => [
  '{}',
  state,
  'now',
  expiresAt,
  score,
];
const FAR = Date.now() + 3_600_000;

beforeAll(() => {
  redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
});

afterAll(async () => {
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length > 0) await redis.del(...keys);
  redis.disconnect();
});

describe('the request store scripts', () => {
  it('are every .lua file beside the loader, each valid Lua to Redis, no placeholder left', async () => {
    const files = readdirSync(new URL('../../src/workflow/lua/', import.meta.url)).filter((f) =>
      f.endsWith('.lua'),
    );
    expect(files.map((f) => f.replace(/\.lua$/, '')).sort()).toEqual([...SCRIPTS].sort());
    for (const name of SCRIPTS) {
      expect(lua[name]).not.toMatch(/\{\{|@include/);
      expect(await redis.script('LOAD', lua[name])).toMatch(/^[0-9a-f]{40}$/);
    }
  });

  it('refuse a placeholder with no value, and take an include once', () => {
    const files: Record<string, string> = {
      'x.lua': '--- @include "a"\n--- @include "a"\nreturn \'{{MOVES.start.to}}\'',
      'includes/a.lua': 'local a = 1',
      'y.lua': "return '{{NOPE}}'",
    };
    expect(luaScript('x', storePlaceholders(), (f) => files[f] as string)).toBe(
      `local a = 1\n\nreturn '${MOVES.start.to}'`,
    );
    expect(() => luaScript('y', storePlaceholders(), (f) => files[f] as string)).toThrow(/NOPE/);
    expect(placeholders().get('MOVES.approve.from')).toBe(MOVES.approve.from.join(','));
  });

  it('create.lua stores once, in the open set when given a score', async () => {
    const k = key();
    expect(await eval_(lua.create, [k, open], fields('pending', FAR, 5))).toBe(1);
    expect(await eval_(lua.create, [k, open], fields('pending', FAR, 5))).toBe(0);
    expect(await redis.hget(k, 'state')).toBe('pending');
    expect(await redis.zscore(open, k)).toBe('5');
    const closed = key();
    await eval_(lua.create, [closed, open], fields('applied', FAR, ''));
    expect(await redis.zscore(open, closed)).toBeNull();
  });

  it('createRevert.lua claims a record for one open revert, answering the holder to another', async () => {
    const claim = `${prefix}:revert-of:a-1`;
    const [a, b] = [key(), key()];
    expect(await eval_(lua.createRevert, [a, open, claim], [...fields('pending', FAR), FAR])).toBe('');
    expect(await eval_(lua.createRevert, [b, open, claim], [...fields('pending', FAR), FAR])).toBe(a);
    expect(await eval_(lua.createRevert, [a, open, claim], [...fields('pending', FAR), FAR])).toBe(a);
    await redis.zrem(open, a); // closed: the claim no longer holds
    expect(await eval_(lua.createRevert, [b, open, claim], [...fields('pending', FAR), FAR])).toBe('');
    expect(await redis.get(claim)).toBe(b);
  });

  it('transition.lua moves from a listed state, says where it stands otherwise, and expires past the deadline', async () => {
    const k = key();
    await eval_(lua.create, [k, open], fields('pending', FAR));
    const move = (from: string, to: string, rule: string, nowMs: number, leaves = '0', ...set: string[]) =>
      eval_(lua.transition, [k, open], [from, to, nowMs, rule, 'iso', leaves, ...set]);
    expect(await move('approved', 'applying', 'none', Date.now())).toEqual(['moved', 'pending']);
    expect(await move('pending', 'approved', 'refuse', Date.now(), '0', 'decision', '{}')).toEqual([
      'ok',
      'pending',
    ]);
    expect(await redis.hget(k, 'decision')).toBe('{}');
    expect(await move('approved', 'applied', 'none', Date.now(), '1')).toEqual(['ok', 'approved']);
    expect(await redis.zscore(open, k)).toBeNull();
    expect(await eval_(lua.transition, [key(), open], ['pending', 'x', 0, 'none', 'iso', '0'])).toEqual([
      'missing',
    ]);

    const late = key();
    await eval_(lua.create, [late, open], fields('pending', 1000));
    const expire = (nowMs: number) =>
      eval_(lua.transition, [late, open], ['pending', 'expired', nowMs, 'only-past', 'iso', '1']);
    expect(await expire(999)).toEqual(['moved', 'pending']);
    expect(await expire(1000)).toEqual(['expired']);
    expect(await redis.hget(late, 'state')).toBe(MOVES.expire.to);
  });

  it('approve.lua counts approvals once each and makes the move on the last one needed', async () => {
    const k = key();
    await eval_(lua.create, [k, open], fields('pending', FAR));
    const approve = (user: string, needed: number, nowMs = Date.now()) =>
      eval_(
        lua.approve,
        [k, open],
        [user, nowMs, 'iso', JSON.stringify({ by: user }), '{"kind":"approve"}', needed],
      );
    expect(await approve('U1', 2)).toEqual(['counted']);
    expect(await approve('U1', 2)).toEqual(['duplicate']);
    expect(await approve('U2', 2)).toEqual(['approved']);
    expect(JSON.parse((await redis.hget(k, 'approvals')) as string)).toEqual([{ by: 'U1' }, { by: 'U2' }]);
    expect(await redis.hget(k, 'state')).toBe(MOVES.approve.to);
    expect(await approve('U3', 2)).toEqual(['moved', MOVES.approve.to]);

    const late = key();
    await eval_(lua.create, [late, open], fields('pending', 1000));
    expect(await eval_(lua.approve, [late, open], ['U1', 2000, 'iso', '{}', '{}', 1])).toEqual(['expired']);
  });

  it('breakGlass.lua moves a pending request once and marks it unreviewed', async () => {
    const k = key();
    const unreviewed = `${prefix}:unreviewed`;
    await eval_(lua.create, [k, open], fields('pending', FAR));
    expect(await eval_(lua.breakGlass, [k, open, unreviewed], [Date.now(), 'iso', '{}', 77])).toEqual([
      'approved',
    ]);
    expect(await redis.zscore(unreviewed, k)).toBe('77');
    expect(await eval_(lua.breakGlass, [k, open, unreviewed], [Date.now(), 'iso', '{}', 77])).toEqual([
      'moved',
      MOVES.breakGlass.to,
    ]);
  });

  it('hold.lua marks a request waiting to start, once per freeze', async () => {
    const k = key();
    await eval_(lua.create, [k, open], fields(MOVES.start.from[0] as string, FAR));
    expect(await eval_(lua.hold, [k], ['f1'])).toBe(1);
    expect(await eval_(lua.hold, [k], ['f1'])).toBe(0);
    expect(await eval_(lua.hold, [k], ['f2'])).toBe(1);
    const pending = key();
    await eval_(lua.create, [pending, open], fields('pending', FAR));
    expect(await eval_(lua.hold, [pending], ['f1'])).toBe(0);
    expect(await eval_(lua.hold, [key()], ['f1'])).toBe(0);
  });

  it('review.lua takes the first review of a break-glass change, storing only its revert', async () => {
    const k = key();
    const unreviewed = `${prefix}:unreviewed`;
    const reviewed = placeholders().get('REVIEWED_IN') as string;
    await eval_(lua.create, [k, open], fields(reviewed, FAR, ''));
    expect(await eval_(lua.review, [k, unreviewed], ['{}'])).toBe('not-reviewable');
    await redis.hset(k, 'breakGlass', '{}');
    await redis.zadd(unreviewed, 1, k);
    const revert = key();
    expect(
      await eval_(lua.review, [k, unreviewed, revert, open], ['{"r":1}', ...fields('pending', FAR)]),
    ).toBe('reviewed');
    expect(await redis.zscore(unreviewed, k)).toBeNull();
    expect(await redis.hget(revert, 'state')).toBe('pending');
    const other = key();
    expect(
      await eval_(lua.review, [k, unreviewed, other, open], ['{"r":2}', ...fields('pending', FAR)]),
    ).toBe('already-reviewed');
    expect(await redis.exists(other)).toBe(0);
    expect(await eval_(lua.review, [key(), unreviewed], ['{}'])).toBe('missing');
  });

  it('attachMessage.lua sets the message of a request that exists, and makes none', async () => {
    const k = key();
    await eval_(lua.create, [k, open], fields('pending', FAR));
    expect(await eval_(lua.attachMessage, [k], ['{"ts":"1"}'])).toBe(1);
    expect(await redis.hget(k, 'message')).toBe('{"ts":"1"}');
    const none = key();
    expect(await eval_(lua.attachMessage, [none], ['{}'])).toBe(0);
    expect(await redis.exists(none)).toBe(0);
  });

  it('freeze.lua keeps a freeze in force, replaces one past its end; freezeTake.lua takes one over, or any on a lift', async () => {
    const f = `${prefix}:freeze:lab`;
    const freeze = (nowMs: number, untilMs: number) =>
      eval_(lua.freeze, [f], [nowMs, JSON.stringify({ untilMs })]);
    expect(await freeze(0, 100)).toEqual(['set']);
    expect(await freeze(50, 200)).toEqual(['running', '{"untilMs":100}']);
    expect(await freeze(100, 200)).toEqual(['replaced', '{"untilMs":100}']);
    expect(await eval_(lua.freezeTake, [f], [150, '0'])).toBeNull();
    expect(await eval_(lua.freezeTake, [f], [200, '0'])).toBe('{"untilMs":200}');
    expect(await redis.exists(f)).toBe(0);
    await freeze(0, 1000);
    expect(await eval_(lua.freezeTake, [f], [1, '1'])).toBe('{"untilMs":1000}');
    expect(await eval_(lua.freezeTake, [f], [1, '1'])).toBeNull();
  });
});
