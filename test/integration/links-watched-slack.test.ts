/**
 * `/rmq links` (src/slack/handlers/links.ts, called directly as Slack's handler is) with the bot's
 * records (`records.linksWatched`, as src/bot/bot.ts wires it) on 4.3.6 and a real Redis: a link
 * whose upstream never answers the handshake, reported `starting`, is stuck in the message once
 * the real links watch has recorded it not running for over a minute (the watch's clock set 70 s
 * back for its first reading, so the test need not wait out the minute the CLI's e2e waits:
 * test/e2e/links-stuck-watched.test.ts). Without the records, `starting` and the sentence said once.
 * The upstream's password is in no message. And the watch's run of readings as LinksStore keeps it
 * in Redis: going on while readings come in time, begun again after a gap.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { linksSources } from '../../src/bot/botLinks.ts';
import { createLogger } from '../../src/log/log.ts';
import { ManagementClient } from '../../src/rabbit/client.ts';
import { linksCommand } from '../../src/slack/handlers/links.ts';
import type { CommandContext, Records } from '../../src/slack/handlers/types.ts';
import { LinksWatch } from '../../src/watch/links.ts';
import { LinksStore } from '../../src/watch/linksStore.ts';
import { brokerCredentials } from '../support/broker.ts';
import { brokersUp, inVhostOn } from '../support/brokers.ts';
import { renderedText } from '../support/harness.ts';
import { federateFromSilent, startSilentUpstream } from '../support/silentUpstream.ts';
import { testEnvironment } from '../support/watch.ts';

const { up } = await brokersUp();
const broker = up.find((b) => b.label === 'rabbitmq-4.3');
const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { maxRetriesPerRequest: 1 });
const prefix = `test-links-watched-slack-${randomBytes(4).toString('hex')}`;
const SECRET = 'Never-answers-slack-secret';

afterAll(async () => {
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length > 0) await redis.del(...keys);
  redis.disconnect();
});

describe.skipIf(!broker)('/rmq links with the links watch’s record', () => {
  it('says stuck a link starting that the watch saw not running for over a minute; without the record, starting', async () => {
    if (!broker) return;
    const silent = await startSilentUpstream();
    const { user, password } = brokerCredentials();
    const client = new ManagementClient({ url: broker.url, user, password });
    try {
      await inVhostOn(broker, 'links-watched-slack', async (vhost, lab) => {
        await federateFromSilent(lab, vhost, silent.port, SECRET);
        const env = { ...testEnvironment(broker), vhosts: [vhost] };
        const store = new LinksStore(redis, prefix, env.name);
        const ask = async (records?: Pick<Records, 'linksWatched'>) => {
          const ctx = {
            prefix: '/rmq',
            environments: { pick: () => ({ name: env.name, broker: client }) },
            logger: createLogger('silent'),
            requestId: 'r1',
            available: new Set(['links']),
            ...(records ? { records: records as Records } : {}),
          } as unknown as CommandContext;
          const answer = await linksCommand.run(['--vhost', vhost], ctx);
          return renderedText({ ...answer.message });
        };

        // The real watch, through the bot's reader; its first reading 70 s back on its clock.
        const sources = linksSources(new Map([[env.name, client]]));
        let skew = 70_000;
        const watch = new LinksWatch({
          env,
          read: () => sources.readLinks(env),
          nodes: async () => [],
          store,
          logger: createLogger('silent'),
          intervalMs: 60_000,
          settleMs: 200,
          went: async () => undefined,
          now: () => new Date(Date.now() - skew),
        });
        try {
          await watch.read('interval');
          skew = 0;
          await watch.read('interval');
          expect([...(await store.read()).down.values()].map((l) => [l.object, l.state])).toEqual([
            ['fed.x', 'stuck'],
          ]);
          const withRecord = await ask({
            linksWatched: (name) => new LinksStore(redis, prefix, name).watched(),
          });
          expect(withRecord).toContain('*stuck*');
          expect(withRecord).toContain("as the bot's watch saw it");
          expect(withRecord).not.toContain('one reading cannot tell it stuck');
          const without = await ask();
          expect(without).toContain('*starting*');
          expect(without.split('one reading cannot tell it stuck').length - 1).toBe(1);
          for (const shown of [withRecord, without]) expect(shown).not.toContain(SECRET);
        } finally {
          await watch.stop();
        }
      });
    } finally {
      await client.close();
      await silent.close();
    }
  }, 60_000);
});

describe("LinksStore: the watch's run of readings, in Redis", () => {
  it('goes on while readings come within two intervals and 10 s, begins again after a gap; an older reading changes nothing', async () => {
    const store = new LinksStore(redis, prefix, 'runs');
    const t0 = Date.now();
    const from = async () => (await store.watched())?.from;
    expect(await store.watched()).toBeUndefined();
    await store.readAt(new Date(t0), 2_000);
    await store.readAt(new Date(t0 + 14_000), 2_000);
    expect(await from()).toBe(new Date(t0).toISOString());
    await store.readAt(new Date(t0 + 5_000), 2_000);
    expect(await from()).toBe(new Date(t0).toISOString());
    await store.readAt(new Date(t0 + 28_001), 2_000);
    expect(await from()).toBe(new Date(t0 + 28_001).toISOString());
    expect(await redis.pttl(`${prefix}:links:runs:read`)).toBeGreaterThan(10_000);
  });
});
