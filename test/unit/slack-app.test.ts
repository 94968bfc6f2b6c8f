import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMetrics } from '../../src/bot/metrics/metrics.ts';
import { loadConfig } from '../../src/config/config.ts';
import { createLogger } from '../../src/log/log.ts';
import { createApp, missingSlackMessage, missingSlackSettings } from '../../src/slack/app.ts';
import { createBoltLogger, secretMasker } from '../../src/slack/boltLogger.ts';
import { createDelivery } from '../../src/slack/delivery.ts';
import { environmentDirectory } from '../../src/slack/environments.ts';
import type { SlackBroker } from '../../src/slack/handlers/index.ts';
import { InFlight } from '../../src/slack/inflight.ts';
import { redisEventDedupe, type SlackRedis } from '../../src/slack/redis.ts';
import { waitFor } from '../support/broker.ts';
import { type FakeSlack, startFakeSlack } from '../support/fakeSlack.ts';

/** The app's parts that need no broker: credentials, Socket Mode, log masking, health, dedupe. */

const never = () => new Promise<never>(() => {});
async function* listing<T>(items: readonly T[]): AsyncGenerator<T> {
  yield* items;
}

function memoryRedis(): SlackRedis & { keys: Map<string, string> } {
  const keys = new Map<string, string>();
  return {
    keys,
    set: async (key: string, value: string, ...nx: unknown[]) => {
      if (nx.includes('NX') && keys.has(key)) return null;
      keys.set(key, value);
      return 'OK';
    },
    get: async (key) => keys.get(key) ?? null,
    del: async (key) => (keys.delete(key) ? 1 : 0),
    ping: async () => 'PONG',
  };
}

const broker: SlackBroker = {
  overview: async () => ({ version: { major: 3, minor: 13, patch: 0 } }),
  getQueue: async () => null,
  getExchange: async () => null,
  listPolicies: async () => [],
  listOperatorPolicies: async () => [],
  streamQueues: () => listing([]),
  streamExchanges: () => listing([]),
  streamQueueStats: () => listing([]),
  federation: async () => ({ upstreams: new Set(), upstreamSets: new Set(), links: null }),
  parameters: async () => [],
  federationLinkList: async () => null,
  shovelList: async () => null,
  whoami: async () => ({ name: 'guest', tags: ['administrator'] }),
  queueBindings: async () => null,
  exchangeBindings: async () => null,
  publishingChannels: async () => ({ channels: 0, confirming: 0 }),
  vhostUnroutable: async () => ({}),
  nodeCount: async () => 1,
  streamQueuesLive: () => listing([]),
  streamConsumers: () => listing([]),
  streamBindings: () => listing([]),
};

describe('Slack credentials', () => {
  it.each([
    [{}, ['SLACK_BOT_TOKEN', 'SLACK_SIGNING_SECRET']],
    [{ SLACK_BOT_TOKEN: 'xoxb-1' }, ['SLACK_SIGNING_SECRET']],
    [{ SLACK_SIGNING_SECRET: 's' }, ['SLACK_BOT_TOKEN']],
    [{ SLACK_BOT_TOKEN: 'xoxb-1', SLACK_SIGNING_SECRET: 's' }, []],
    // Socket Mode needs no signing secret.
    [{ SLACK_BOT_TOKEN: 'xoxb-1', SLACK_APP_TOKEN: 'xapp-1' }, []],
  ])('%j misses %j', (env, missing) => {
    expect(missingSlackSettings(loadConfig(env))).toEqual(missing);
  });

  it('says where to get them', () => {
    const message = missingSlackMessage(['SLACK_BOT_TOKEN']);
    expect(message).toMatch(/SLACK_BOT_TOKEN is not set/);
    expect(message).toContain('slack/manifest.yml');
    expect(message).toContain('.env.example');
  });
});

describe('createApp', () => {
  let slack: FakeSlack;
  beforeAll(async () => {
    slack = await startFakeSlack();
  });
  afterAll(async () => {
    await slack.close();
  });

  // The parts src/bot/bot.ts builds and hands the app, as bare as the app takes them.
  const deps = (env: Record<string, string>) => {
    const config = loadConfig({ SLACK_API_URL: slack.apiUrl, ...env });
    const logger = createLogger('silent');
    const metrics = createMetrics({ defaultMetrics: false });
    const stopping = new AbortController();
    return {
      config,
      logger,
      environments: environmentDirectory(config, new Map([['default', broker]])),
      redis: memoryRedis(),
      metrics,
      delivery: createDelivery({
        token: config.slack.botToken ?? '',
        metrics,
        logger,
        signal: stopping.signal,
      }),
      stopping,
      health: { start() {}, drain() {}, stop() {} },
      // One route at least: in Socket Mode, the receiver listens on PORT only for the routes.
      routes: [
        { path: '/livez', method: ['GET'], handler: (_req: unknown, res: { end(): void }) => res.end() },
      ],
    };
  };

  it('refuses to build without credentials, naming them', async () => {
    await expect(createApp(deps({}))).rejects.toThrow(/SLACK_BOT_TOKEN and SLACK_SIGNING_SECRET are not set/);
  });

  it('checks the token with auth.test before serving', async () => {
    await expect(
      createApp(deps({ SLACK_BOT_TOKEN: 'xoxb-wrong', SLACK_SIGNING_SECRET: 's' })),
    ).rejects.toMatchObject({
      data: { error: 'invalid_auth' },
    });
    const app = await createApp(deps({ SLACK_BOT_TOKEN: slack.botToken, SLACK_SIGNING_SECRET: 's' }));
    expect(app.mode).toBe('http');
  });

  it('uses Socket Mode when SLACK_APP_TOKEN is set', async () => {
    const app = await createApp(deps({ SLACK_BOT_TOKEN: slack.botToken, SLACK_APP_TOKEN: 'xapp-1-test' }));
    expect(app.mode).toBe('socket');
  });

  it('in Socket Mode, fails start() on an app-level token Slack refuses', async () => {
    const app = await createApp(
      deps({ SLACK_BOT_TOKEN: slack.botToken, SLACK_APP_TOKEN: 'xapp-1-wrong', PORT: '0' }),
    );
    await expect(app.start()).rejects.toMatchObject({ data: { error: 'invalid_auth' } });
    await app.stop(100);
  });

  it('in Socket Mode, fails start() on a PORT it cannot listen on', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, resolve));
    const port = (taken.address() as AddressInfo).port;
    try {
      const app = await createApp(
        deps({ SLACK_BOT_TOKEN: slack.botToken, SLACK_APP_TOKEN: slack.appToken, PORT: String(port) }),
      );
      await expect(app.start()).rejects.toMatchObject({ code: 'EADDRINUSE' });
      // It still connects to Slack meanwhile; stopped once it has, it leaves nothing open.
      const connection = await slack.socket.waitForConnection();
      await app.stop(100);
      await waitFor(() => connection.closed, { intervalMs: 10, what: 'the close' });
    } finally {
      taken.close();
    }
  });
});

describe('logs through Bolt', () => {
  it('mask every secret value and anything shaped like a Slack token', () => {
    const mask = secretMasker(['s3cret-value', undefined, 'pw']);
    expect(mask('secret s3cret-value and xoxb-123-abc and xapp-1-A-b, pw')).toBe(
      'secret [redacted] and [redacted] and [redacted], pw',
    );
  });

  it('write pino JSON with the secrets masked, also in errors', () => {
    const lines: string[] = [];
    const logger = createLogger('debug', { write: (l: string) => void lines.push(l) });
    const bolt = createBoltLogger(logger, ['the-signing-secret']);
    bolt.debug('request body', { token: 'the-signing-secret' });
    bolt.error(new Error('failed with the-signing-secret'));
    expect(lines).toHaveLength(2);
    expect(lines.join('')).not.toContain('the-signing-secret');
    expect(JSON.parse(lines[0] ?? '{}')).toMatchObject({ component: 'bolt', level: 20 });
  });
});

describe('event dedupe', () => {
  it('is true once per event id, under the key prefix', async () => {
    const redis = memoryRedis();
    const dedupe = redisEventDedupe(redis, 'rmq:t1');
    expect(await dedupe.firstDelivery('Ev1')).toBe(true);
    expect(await dedupe.firstDelivery('Ev1')).toBe(false);
    expect(await dedupe.firstDelivery('Ev2')).toBe(true);
    expect([...redis.keys.keys()]).toEqual(['rmq:t1:event:Ev1', 'rmq:t1:event:Ev2']);
  });
});

describe('work in flight', () => {
  it('drains what finishes, and gives up on what does not', async () => {
    const inFlight = new InFlight();
    let done = false;
    inFlight.track(
      new Promise<void>((resolve) => setTimeout(() => resolve(), 20)).then(() => {
        done = true;
      }),
    );
    expect(await inFlight.drain(5000)).toBe(true);
    expect(done).toBe(true);
    inFlight.track(never());
    expect(await inFlight.drain(20)).toBe(false);
  });
});
