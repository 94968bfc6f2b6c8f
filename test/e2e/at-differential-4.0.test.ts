/**
 * `which --at` and `policies --at` against what the broker said at the time, on the BROKERS[1]
 * broker (test/support/atDifferential.ts says how): the bot running and watching a vhost, changes
 * through the bot, outside it, and while it is stopped; every answer replayed from the trail agrees
 * with the broker's at that instant, and "unknown" exactly before the first snapshot and in the gap.
 * One file per broker, so each stays short.
 */
import { describe, it } from 'vitest';
import { runAtDifferential } from '../support/atDifferential.ts';
import { BROKERS, brokersUp } from '../support/brokers.ts';

const broker = BROKERS[1];
const { up } = await brokersUp();
const seed = Number(process.env.AT_SEED ?? Date.now() % 100_000);

describe.runIf(broker && up.includes(broker))(`--at replayed from the trail, on ${broker?.label}`, () => {
  it(`agrees with what the broker said at each instant (seed ${seed})`, async () => {
    if (broker) await runAtDifferential(broker, { seed, steps: 4 });
  }, 180_000);
});
