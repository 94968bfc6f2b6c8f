/**
 * `rmq links` through the package's `bin/rmq.js`, on an upstream that accepts the connection and
 * never answers the AMQP handshake: the broker reports the link `starting` at each try with a new
 * timestamp (then `error` for a moment), so no one reading shows it starting for a minute. The
 * bot's real links watch (src/watch/links.ts, reading through the bot's own reader, on its timer)
 * records it in a Redis of this suite's own under the CLI's prefix `rmq:`; `links` reads that
 * record and says the link `stuck` once the watch has seen it not running for more than a minute,
 * with since when and the broker's last error, exit 1 (`--fail-on stopped`: 4). Before the watch
 * reads, and with Redis unreachable, the answer is as one reading gives it, `starting`, exit 0,
 * and the text says once why one reading cannot tell. The upstream's password is never printed.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { linksSources } from '../../src/bot/botLinks.ts';
import { STARTING_RETRIES_WORDS } from '../../src/links/index.ts';
import { createLogger } from '../../src/log/log.ts';
import { ManagementClient } from '../../src/rabbit/client.ts';
import { LinksWatch } from '../../src/watch/links.ts';
import { LinksStore } from '../../src/watch/linksStore.ts';
import { brokerCredentials, waitFor } from '../support/broker.ts';
import { brokersUp, inVhostOn } from '../support/brokers.ts';
import { type Built, built } from '../support/built.ts';
import { type CliRun, runBuiltRmq } from '../support/cli.ts';
import { freePort, type RedisServer, startRedisServer } from '../support/redisServer.ts';
import { federateFromSilent, startSilentUpstream } from '../support/silentUpstream.ts';
import { testEnvironment } from '../support/watch.ts';

const { up } = await brokersUp();
const chroot = up.filter((b) => b.label === 'rabbitmq-4' || b.label === 'rabbitmq-4.3');

const cwd = mkdtempSync(join(tmpdir(), 'rmq-links-stuck-'));
/** The upstream's password: in no output. */
const SECRET = 'Never-answers-cli-secret';
let pkg: Built;
let server: RedisServer;
let redis: Redis;

beforeAll(async () => {
  if (chroot.length === 0) return;
  [pkg, server] = await Promise.all([built(), startRedisServer()]);
  redis = new Redis(server.url, { maxRetriesPerRequest: 1 });
});

afterAll(async () => {
  redis?.disconnect();
  await server?.stop();
  rmSync(cwd, { recursive: true, force: true });
});

interface Row {
  readonly object: string;
  readonly upstream: string | null;
  readonly state: string;
  readonly reason: string | null;
}

describe.skipIf(chroot.length === 0).each(chroot)('links on $label, an upstream that never answers', (b) => {
  it("is stuck once the bot's watch saw it not running for a minute; starting, exit 0, without the watch's record", async () => {
    const silent = await startSilentUpstream();
    const { port } = silent;
    const { user, password } = brokerCredentials();
    const client = new ManagementClient({ url: b.url, user, password });
    const closed = await freePort();
    const runs: CliRun[] = [];
    // The suite's own Redis, one broker's watch at a time.
    await redis.flushdb();
    try {
      await inVhostOn(b, 'links-stuck-cli', async (vhost, lab) => {
        await federateFromSilent(lab, vhost, port, SECRET);
        const rmq = async (args: readonly string[], redisUrl = server.url) => {
          const run = await runBuiltRmq(
            pkg.bin,
            ['links', '--vhost', vhost, ...args],
            { RMQ_URL: b.url, RMQ_USER: user, RMQ_PASSWORD: password, REDIS_URL: redisUrl },
            cwd,
          );
          runs.push(run);
          return run;
        };
        const rowOf = (run: CliRun): Row | undefined =>
          (JSON.parse(run.out) as { links: Row[] }).links.find((l) => l.object === 'fed.x');
        const once = (text: string, words: string) => text.split(words).length - 1;
        /** `links ARGS` run until its answer is `ok` (the broker's tries come and go), by a deadline. */
        const until = (
          args: readonly string[],
          ok: (run: CliRun) => boolean,
          what: string,
          { redisUrl = server.url, deadlineMs = 60_000 } = {},
        ) =>
          waitFor(
            async () => {
              const run = await rmq(args, redisUrl);
              return ok(run) ? run : undefined;
            },
            { deadlineMs, intervalMs: 1_000, what },
          );

        // No watch has read the links: one reading's answer, starting, and why it cannot tell.
        const before = await until([], (run) => run.out.includes('STARTING'), 'the link starting');
        expect(before.code).toBe(0);
        expect(once(before.out, STARTING_RETRIES_WORDS)).toBe(1);
        expect(before.out).toContain(
          "Not asked of the bot's watch: the bot's watch has not read the links of this environment lately.",
        );

        // The bot's watch, on its timer, reading through the bot's reader; the CLI's environment is `default`.
        const env = { ...testEnvironment(b), name: 'default', vhosts: [vhost] };
        const sources = linksSources(new Map([[env.name, client]]));
        const store = new LinksStore(redis, 'rmq', env.name);
        const watch = new LinksWatch({
          env,
          read: () => sources.readLinks(env),
          nodes: async () => [],
          store,
          logger: createLogger('silent'),
          intervalMs: 2_000,
          settleMs: 200,
          went: async () => undefined,
        });
        try {
          await watch.start();
          const early = await rmq(['--json']);
          const earlyDoc = JSON.parse(early.out) as { watch: { read: boolean; from?: string } };
          expect(earlyDoc.watch.read).toBe(true);
          expect(rowOf(early)?.state).not.toBe('stuck');

          // Stuck, from the watch's record, at a moment the broker says starting (the reason is the bot's).
          const seen: string[] = [];
          const stuck = await waitFor(
            async () => {
              const run = await rmq(['--json']);
              const row = rowOf(run);
              const [record] = (await store.read()).down.values();
              seen.push(`${row?.state}: ${row?.reason} / recorded ${JSON.stringify(record)}`);
              return row?.state === 'stuck' && row.reason?.includes("as the bot's watch saw it")
                ? { run, row, record }
                : undefined;
            },
            {
              deadlineMs: 170_000,
              intervalMs: 3_000,
              what: "links to say the link stuck from the watch's record",
            },
          ).catch((err: unknown) => {
            throw new Error(`${String(err)}; seen: ${seen.slice(-8).join('\n')}`);
          });
          expect(stuck.run.code).toBe(1);
          const since = Date.parse(/since (\S+)/.exec(stuck.row.reason ?? '')?.[1] ?? '');
          expect(Date.now() - since).toBeGreaterThan(60_000);
          // The record is the watch's own: down since then, with the broker's last error when it saw one.
          expect(stuck.record).toMatchObject({
            object: 'fed.x',
            upstream: 'silent',
            since: new Date(since).toISOString(),
          });
          expect(stuck.row.reason).toBe(
            `starting again at each try, not running since ${new Date(since).toISOString()} as the bot's watch saw it${stuck.record?.error ? `; the broker's last error: ${stuck.record.error}` : ''}`,
          );
          // The text says it stuck with the watch's words (not as the broker's), and once no sentence on starting.
          const text = await until([], (run) => run.out.includes('STUCK'), 'the text to say STUCK');
          expect(text.code).toBe(1);
          expect(text.out).toMatch(/STUCK +exchange "fed\.x" <- upstream "silent"/);
          expect(text.out).toContain("as the bot's watch saw it");
          expect(text.out).not.toContain('the broker: starting again');
          expect(text.out).not.toContain(STARTING_RETRIES_WORDS);
          const cron = await until(
            ['--fail-on', 'stopped', '--json'],
            (run) => rowOf(run)?.state === 'stuck',
            'links --fail-on stopped on a stuck link',
          );
          expect(cron.code).toBe(4);

          // Redis unreachable: as one reading gives it; starting is exit 0, said once, and why.
          const noTrail = await until(
            [],
            (run) => run.out.includes('STARTING'),
            'starting without the trail',
            {
              redisUrl: `redis://127.0.0.1:${closed}`,
              deadlineMs: 90_000,
            },
          );
          expect(noTrail.code).toBe(0);
          expect(once(noTrail.out, STARTING_RETRIES_WORDS)).toBe(1);
          expect(noTrail.out).toContain(
            "Not asked of the bot's watch: the bot's watch's record could not be read (Redis (REDIS_URL) cannot be reached",
          );
        } finally {
          await watch.stop();
        }
      });
    } finally {
      await client.close();
      await silent.close();
      for (const run of runs) expect(run.out + run.err).not.toContain(SECRET);
    }
  }, 420_000);
});
