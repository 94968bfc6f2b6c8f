/**
 * The checkpoint snapshot, on what users run: the compiled bot (`dist/main.js`) watching a vhost of
 * this file's own on the test broker (events followed, compared every 2 s), with a Redis of its own
 * (the production prefix `rmq:`; the server, and so every key, is removed after) and the fake of
 * Slack's Web API. Once it watches, CHECKPOINT_EVERY edits of one policy are made outside the bot
 * (through the management API, one after another): the watcher seals a snapshot `why: checkpoint`
 * right after the records of those edits, not before, holding the broker's policies (and what the
 * trail replays from the first snapshot to its instant). A few edits more, and `which --at` past
 * the checkpoint, before them and after them, is replayed from it; `history --verify` says the
 * chain is intact.
 */
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { replay } from '../../src/audit/replay.ts';
import { AuditTrail } from '../../src/audit/trail.ts';
import type { AuditRecord, SnapshotRecord } from '../../src/audit/types.ts';
import { CHECKPOINT_EVERY } from '../../src/watch/watcher.ts';
import { type BotProcess, labBotEnv, labEnvironmentYaml, spawnBot } from '../support/botProcess.ts';
import { adminClient, brokerUrl, managementCall, uniqueName, waitFor } from '../support/broker.ts';
import { type Built, built } from '../support/built.ts';
import { runBuiltRmq } from '../support/cli.ts';
import { type FakeSlack, startFakeSlack } from '../support/fakeSlack.ts';
import { type RedisServer, startRedisServer } from '../support/redisServer.ts';

const vhost = uniqueName('checkpoint');
const admin = adminClient();
const api = managementCall(brokerUrl());
const cwd = mkdtempSync(join(tmpdir(), 'rmq-checkpoint-'));
const QUEUE = 'orders.q';
const POLICY = 'cap';
/** The edits in all: the threshold's, then a few after the checkpoint. */
const CHANGES = CHECKPOINT_EVERY + 5;
const fields = (maxLength: number) => ({
  pattern: '^orders\\.',
  'apply-to': 'queues',
  priority: 0,
  definition: { 'max-length': maxLength },
});
let pkg: Built;
let slack: FakeSlack;
let server: RedisServer;
let redis: Redis;
let trail: AuditTrail;
let bot: BotProcess;
let env: Record<string, string>;

beforeAll(async () => {
  [pkg, slack, server] = await Promise.all([built(), startFakeSlack(), startRedisServer()]);
  redis = new Redis(server.url, { maxRetriesPerRequest: 1 });
  trail = new AuditTrail(redis, 'rmq');
  await admin.putVhost(vhost);
  await admin.putQueue(vhost, QUEUE, { kind: 'classic' });
  await api('PUT', `policies/${encodeURIComponent(vhost)}/${POLICY}`, fields(0));
  env = {
    ...labBotEnv({
      cwd,
      environmentsYaml: labEnvironmentYaml([vhost]),
      slack,
      redisUrl: server.url,
      signingSecret: 'watch-checkpoint-signing-secret',
    }),
    RMQ_WATCH_INTERVAL: '2s',
  };
  bot = spawnBot(realpathSync(join(pkg.outdir, 'main.js')), env, cwd);
  await bot.listening();
}, 120_000);

afterAll(async () => {
  if (bot && bot.child.exitCode === null) {
    bot.child.kill('SIGTERM');
    const cut = setTimeout(() => bot.child.kill('SIGKILL'), 15_000);
    await bot.exited;
    clearTimeout(cut);
  }
  redis?.disconnect();
  await Promise.allSettled([slack?.close(), server?.stop(), admin.deleteVhost(vhost)]);
  await admin.close();
  rmSync(cwd, { recursive: true, force: true });
});

/** The whole trail, oldest first. */
const chain = async (): Promise<AuditRecord[]> => (await trail.list()).reverse();

const snapshotsOf = (records: readonly AuditRecord[]) =>
  records.flatMap((r, i) => (r.action === 'snapshot' ? [{ i, record: r as SnapshotRecord }] : []));

const held = (policies: readonly { vhost: string; name: string; definition: unknown }[]) =>
  policies.map(({ vhost: v, name, definition }) => ({ v, name, definition }));

/** Edits the policy to each value in turn, one after another; when the last was answered. */
async function edit(values: readonly number[]): Promise<number> {
  for (const value of values)
    await api('PUT', `policies/${encodeURIComponent(vhost)}/${POLICY}`, fields(value));
  return Date.now();
}

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe('the compiled bot seals a checkpoint', () => {
  it(`once ${CHECKPOINT_EVERY} records follow its first snapshot: the broker's policies, the chain intact, --at past it replayed from it`, async () => {
    const began = Date.now();
    // Watching: the first snapshot sealed, and the event exchange followed (else the edits are
    // found by comparing, many of one policy as one).
    await waitFor(
      async () =>
        snapshotsOf(await chain()).length > 0 &&
        bot.stdout().includes('changes outside the bot: following the event exchange'),
      { deadlineMs: 30_000, what: 'the bot watching the vhost (first snapshot, events followed)' },
    );
    const [first] = snapshotsOf(await chain());
    expect(first?.record).toMatchObject({ why: 'first', vhosts: [vhost] });

    await edit(range(1, CHECKPOINT_EVERY));
    const records = await waitFor(
      async () => {
        const all = await chain();
        return snapshotsOf(all).some((s) => s.record.why === 'checkpoint') && all;
      },
      { deadlineMs: 45_000, intervalMs: 500, what: 'a checkpoint snapshot in the trail' },
    );
    const snapshots = snapshotsOf(records);
    expect(snapshots.map((s) => s.record.why)).toEqual(['first', 'checkpoint']);
    const [start, checkpoint] = snapshots as [(typeof snapshots)[0], (typeof snapshots)[0]];
    // Not before the count reached the threshold, and at it: each edit one record, caught by its
    // event (none also by a comparison that read the broker while the events were behind).
    const between = records.slice(start.i + 1, checkpoint.i);
    expect(between).toHaveLength(CHECKPOINT_EVERY);
    expect(
      between.every((r) => r.action === 'outside' && r.policy === POLICY && r.detectedBy === 'events'),
    ).toBe(true);
    expect(records.slice(checkpoint.i + 1)).toEqual([]);
    expect(checkpoint.record).toMatchObject({ env: 'lab', vhosts: [vhost], version: expect.any(String) });

    // No change followed it: its policies are the broker's, and what the trail replays from the
    // first snapshot to its instant.
    const atMs = Date.parse(checkpoint.record.at);
    const broker = (await api('GET', `policies/${encodeURIComponent(vhost)}`))
      .json as SnapshotRecord['policies'];
    expect(held(checkpoint.record.policies)).toEqual(held(broker));
    expect(checkpoint.record.policies[0]?.definition).toEqual({ 'max-length': CHECKPOINT_EVERY });
    const replayed = replay(start.record, records.slice(start.i + 1), vhost, atMs);
    expect(held(replayed.user)).toEqual(held(checkpoint.record.policies));

    // A few more edits, after it: `which --at` past the checkpoint is replayed from it, before
    // the edits and after them.
    const beforeEdits = Date.now() - 1;
    expect(beforeEdits).toBeGreaterThan(atMs);
    const lastEdited = await edit(range(CHECKPOINT_EVERY + 1, CHANGES));
    await waitFor(async () => (await chain()).filter((r) => r.action === 'outside').length === CHANGES, {
      deadlineMs: 15_000,
      what: 'the edits after the checkpoint recorded',
    });
    const rmq = (argv: readonly string[]) => runBuiltRmq(pkg.bin, argv, env, cwd);
    const whichAt = async (ms: number) => {
      const run = await rmq(['which', QUEUE, '--vhost', vhost, '--at', new Date(ms).toISOString(), '--json']);
      expect(run.code, run.err).toBe(0);
      return JSON.parse(run.out) as unknown;
    };
    const answer = (maxLength: number) => ({
      source: 'trail',
      known: true,
      gap: null,
      replayedFrom: checkpoint.record.at,
      object: { vhost, name: QUEUE },
      inForce: { name: POLICY, definition: { 'max-length': maxLength } },
      effective: { 'max-length': { value: maxLength, from: 'policy' } },
    });
    expect(await whichAt(beforeEdits)).toMatchObject(answer(CHECKPOINT_EVERY));
    expect(await whichAt(lastEdited + 1)).toMatchObject(answer(CHANGES));

    const verified = await rmq(['history', '--verify']);
    expect(verified.code, verified.out + verified.err).toBe(0);
    expect(slack.rejections()).toEqual([]);
    console.log(`checkpoint after ${between.length} records; the whole case ${Date.now() - began} ms`);
  }, 120_000);
});
