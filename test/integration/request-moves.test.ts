/**
 * Every move of the request's life (src/workflow/moves.ts) made by the store on Redis from every
 * state: it moves the request from the move's from-states only, to the move's state, with the
 * deadline as the table says; a name outside the table moves nothing.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MOVES, type MoveName } from '../../src/workflow/moves.ts';
import { newRequestId, RequestStore, type TransitionInput } from '../../src/workflow/store.ts';
import {
  type ChangeRequest,
  OPEN_STATES,
  REQUEST_STATES,
  type RequestState,
} from '../../src/workflow/types.ts';
import { changeRequest } from '../support/changeRequest.ts';

const prefix = `rmq:test-moves-${randomBytes(5).toString('hex')}`;
let redis: Redis;
let store: RequestStore;

beforeAll(() => {
  redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
  store = new RequestStore(redis, prefix);
});

afterAll(async () => {
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length > 0) await redis.del(...keys);
  redis.disconnect();
});

/** A request stored in `state`, its deadline an hour ahead (`due`: an hour past). */
async function stored(state: RequestState, due = false): Promise<ChangeRequest> {
  const now = Date.now();
  const r = changeRequest({
    id: newRequestId(),
    state,
    createdAt: new Date(now - 7_200_000).toISOString(),
    expiresAt: new Date(now + (due ? -3_600_000 : 3_600_000)).toISOString(),
    updatedAt: new Date(now).toISOString(),
  });
  expect(await store.create(r)).toBe(true);
  return r;
}

const approval = { by: 'U0BOB', reason: 'ok', at: new Date().toISOString() };
const glass = { by: 'U0ALICE', reason: 'INC-1', at: approval.at, reviewBy: approval.at };

/** Makes `name` on `r` through the store's call for it: its own script, or `transition`. */
async function make(name: MoveName, r: ChangeRequest): Promise<{ kind: string; state?: RequestState }> {
  const outcome =
    name === 'approve'
      ? await store.approve(r, approval)
      : name === 'breakGlass'
        ? await store.breakGlass(r.id, glass)
        : await store.transition(r.id, { move: name });
  return { kind: outcome.kind, ...('request' in outcome ? { state: outcome.request.state } : {}) };
}

describe('the store makes the moves of the table, and only those', () => {
  for (const [name, move] of Object.entries(MOVES) as [MoveName, (typeof MOVES)[MoveName]][]) {
    it(`${name}: ${move.from.join(', ')} -> ${move.to}, from those states only`, async () => {
      for (const state of REQUEST_STATES) {
        const r = await stored(state);
        const leaves = (move.from as readonly RequestState[]).includes(state);
        const done = move.deadline !== 'only-past' && leaves;
        expect({ from: state, ...(await make(name, r)) }).toEqual({
          from: state,
          kind: done ? (name === 'approve' || name === 'breakGlass' ? 'approved' : 'ok') : 'moved',
          state: done ? move.to : state,
        });
        expect((await store.get(r.id))?.state).toBe(done ? move.to : state);
      }
    });

    it(`${name}: past the deadline, as the table says (${move.deadline})`, async () => {
      for (const state of move.from) {
        const r = await stored(state, true);
        const outcome = await make(name, r);
        if (move.deadline === 'none') expect(outcome).toMatchObject({ state: move.to });
        else expect(outcome).toEqual({ kind: 'expired', state: MOVES.expire.to });
        // Expired, it has left the open requests; moved on, it is listed while its state is open.
        const open = (await store.listOpen()).some((o) => o.id === r.id);
        expect(open).toBe(OPEN_STATES.some((s) => s === outcome.state));
      }
    });
  }

  it('refuses a move not named in the table, and the moves that have a script of their own, moving nothing', async () => {
    const r = await stored('pending');
    for (const move of ['teleport', 'toString', 'approve', 'breakGlass']) {
      await expect(store.transition(r.id, { move } as unknown as TransitionInput)).rejects.toThrow(
        /no move named/,
      );
    }
    // The old shape, a caller's own (from, to), is no move either.
    await expect(
      store.transition(r.id, { from: ['pending'], to: 'applied' } as unknown as TransitionInput),
    ).rejects.toThrow(/no move named/);
    expect((await store.get(r.id))?.state).toBe('pending');
  });
});
