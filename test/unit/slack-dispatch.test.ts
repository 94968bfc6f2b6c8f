import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.ts';
import { createLogger } from '../../src/log/log.ts';
import type { Policy } from '../../src/policy/types.ts';
import type { QueueListing } from '../../src/rabbit/responses.ts';
import { dispatch } from '../../src/slack/dispatch.ts';
import { environmentDirectory } from '../../src/slack/environments.ts';
import type { SlackBroker, SlackCommand } from '../../src/slack/handlers/index.ts';
import { COMMANDS } from '../../src/slack/handlers/index.ts';
import { checkMessage } from '../support/fakeSlack.ts';

/** The dispatcher on its own: whatever the words, an answer Slack takes, never a stack trace. */

const logLines: string[] = [];
const logger = createLogger('info', { write: (l: string) => void logLines.push(l) });
const config = loadConfig({});

async function* listing<T>(items: readonly T[]): AsyncGenerator<T> {
  yield* items;
}

function broker(overrides: Partial<SlackBroker> = {}): SlackBroker {
  return {
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
    ...overrides,
  };
}

function ctx(b: SlackBroker = broker()) {
  return {
    prefix: '/rmq',
    environments: environmentDirectory(config, new Map([['default', b]])),
    logger,
    requestId: 'req123',
  };
}

function shown(m: { text: string; blocks: unknown[] }): string {
  return `${m.text}\n${JSON.stringify(m.blocks)}`;
}

describe('dispatch', () => {
  it.each([
    ['', 'usage', 'usage', /Ask which RabbitMQ policy governs/],
    ['help', 'help', 'answered', /\/rmq which NAME/],
    ['HELP', 'help', 'answered', /\/rmq which NAME/],
    ['frobnicate <!channel>', 'unknown', 'usage', /I don't know the command `frobnicate`/],
    ['which', 'which', 'refused', /which needs the name of a queue or exchange/],
    ['which a b', 'which', 'refused', /which takes one name, got 2/],
    ['which "unclosed', 'usage', 'refused', /quote is not closed/],
    ['which x --kind topic', 'which', 'refused', /--kind/],
    ['which x --bogus', 'which', 'refused', /Unknown flag --bogus/],
    ['which x --env nowhere', 'which', 'refused', /Unknown environment "nowhere"/],
    [`which ${'é'.repeat(128)}`, 'which', 'refused', /256 bytes/],
    ['which nothing.here', 'which', 'answered', /did not report/],
  ])('%j -> %s, %s', async (text, command, outcome, shows) => {
    const a = await dispatch(text, ctx());
    expect(a.command).toBe(command);
    expect(a.outcome).toBe(outcome);
    expect(shown(a.message)).toMatch(shows);
    expect(checkMessage({ ...a.message })).toBeNull();
    expect(a.audience).toBe(outcome === 'answered' && command === 'which' ? 'channel' : 'asker');
  });

  it('answers a broker that cannot be asked as "not asked", for the channel', async () => {
    const down = broker({
      overview: async () => {
        throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'unreachable' });
      },
    });
    const a = await dispatch('which orders.audit', ctx(down));
    expect(a.outcome).toBe('not-asked');
    expect(a.audience).toBe('channel');
    expect(shown(a.message)).toMatch(/Could not ask the broker/);
    expect(shown(a.message)).not.toMatch(/ECONNREFUSED/);
  });

  it('turns an unexpected error into a sentence and a reference, never a stack trace', async () => {
    const boom = broker({
      listPolicies: async () => {
        throw new TypeError("Cannot read properties of undefined (reading 'x')");
      },
    });
    const a = await dispatch('which orders.audit', ctx(boom));
    expect(a.outcome).toBe('failed');
    expect(a.audience).toBe('asker');
    const text = shown(a.message);
    expect(text).toMatch(/Something went wrong on the bot's side/);
    expect(text).toContain('req123');
    expect(text).not.toMatch(/TypeError|Cannot read|at .*\.ts/);
    expect(logLines.join('')).toMatch(/Cannot read properties/);
  });

  it.each(['constructor', 'toString', 'no-such-code'])(
    'tells a failure coded %s, which has no sentence of its own, as the internal one',
    async (code) => {
      const coded = broker({
        listPolicies: async () => {
          throw Object.assign(new Error('boom'), { code });
        },
      });
      const a = await dispatch('which orders.audit', ctx(coded));
      expect(a.outcome).toBe('failed');
      expect(shown(a.message)).toMatch(/Something went wrong on the bot's side/);
      expect(checkMessage({ ...a.message })).toBeNull();
    },
  );

  it('help shows the usage lines, and a table given to dispatch is the one it answers from', async () => {
    const help = shown((await dispatch('help', ctx())).message);
    expect(help).toMatch(/\/rmq which NAME/);
    expect(help).toMatch(/\/rmq policies \[--vhost V\]/);
    expect(help).toMatch(/\/rmq delete POLICY --reason TEXT/);
    expect(help).toMatch(/\/rmq create NAME/);
    expect(help).toMatch(/\/rmq edit POLICY/);
    expect(help).toMatch(/\/rmq preview delete\|create\|edit POLICY/);
    expect(help).toMatch(/\/rmq requests \[--env E\]/);
    expect(help).toMatch(/\/rmq history \[POLICY or NAME\]/);
    const extra: SlackCommand = {
      run: async () => ({ message: { text: 'h', blocks: [] }, audience: 'asker', outcome: 'answered' }),
    };
    const table = new Map([...COMMANDS, ['use', extra]]);
    expect((await dispatch('use x', ctx(), table)).command).toBe('use');
  });
});

describe('dispatch of preview', () => {
  const pol = (
    name: string,
    pattern: string,
    priority: number,
    definition: Record<string, unknown>,
  ): Policy => ({
    vhost: '/',
    name,
    pattern,
    applyTo: 'queues',
    priority,
    definition,
  });
  const queue = (name: string, policy: string | null): QueueListing => ({
    name,
    vhost: '/',
    kind: 'classic',
    type: 'classic',
    arguments: {},
    policy,
  });
  const policies = [
    pol('audit-retention', '^orders\\.audit$', 10, { 'dead-letter-exchange': 'audit.dlx' }),
    pol('audit-fallback', '^orders\\.', 1, { 'message-ttl': 3_600_000 }),
  ];
  const fleet = Array.from({ length: 40 }, (_, i) => `fleet.${String(i).padStart(2, '0')}`);
  const lab = broker({
    listPolicies: async () => policies,
    streamQueues: () =>
      listing([queue('orders.audit', 'audit-retention'), ...fleet.map((n) => queue(n, null))]),
  });
  const failing = (code: string) =>
    broker({
      overview: async () => {
        throw Object.assign(new Error(`connect ECONNREFUSED (${code})`), { code });
      },
    });

  it.each([
    ['preview', 'refused', /preview needs an action: delete, create or edit/],
    ['preview drop audit-retention', 'refused', /Unknown action "drop"/],
    [`preview create p --pattern ^a --definition '{bad'`, 'refused', /--definition is not valid JSON/],
    [
      `preview create p --pattern ^orders --definition '{"max-lenght": 5}'`,
      'refused',
      /max-lenght is not a policy key.*did you mean max-length\?/,
    ],
    [
      `preview create ${'p'.repeat(256)} --pattern ^a --definition '{"max-length": 5}'`,
      'refused',
      /The policy name is 256 bytes; names are at most 255 bytes/,
    ],
    ['preview delete nope', 'refused', /No policy named "nope"/],
    ['preview delete audit-retention --env nowhere', 'refused', /Unknown environment "nowhere"/],
  ])('%j is refused to the asker with what to fix', async (text, outcome, shows) => {
    const a = await dispatch(text, ctx(lab));
    expect(a.command).toBe('preview');
    expect(a.outcome).toBe(outcome);
    expect(a.audience).toBe('asker');
    expect(a.file).toBeUndefined();
    expect(shown(a.message)).toMatch(shows);
    expect(checkMessage({ ...a.message })).toBeNull();
  });

  it('answers a delete in the channel, naming what each object loses and what governs after', async () => {
    const a = await dispatch('preview delete audit-retention', ctx(lab));
    expect(a).toMatchObject({ command: 'preview', outcome: 'answered', audience: 'channel' });
    expect(a.file).toBeUndefined();
    const text = shown(a.message);
    expect(text).toMatch(/`orders.audit`/);
    expect(text).toMatch(/`dead-letter-exchange`/);
    expect(text).toMatch(/→ `audit-fallback`/);
    expect(checkMessage({ ...a.message })).toBeNull();
    expect(logLines.join('\n')).toMatch(
      /"policy":"audit-retention","action":"delete".*"msg":"preview answered"/,
    );
  });

  it('carries the full list as a file when it is longer than a message allows', async () => {
    const a = await dispatch(
      `preview create fleet-ttl --pattern '^fleet\\.' --definition '{"message-ttl": 60000}'`,
      ctx(lab),
    );
    expect(a).toMatchObject({ outcome: 'answered', audience: 'channel' });
    expect(a.file?.filename).toBe('preview-create-fleet-ttl.csv');
    const rows = a.file?.content.trim().split('\n') ?? [];
    expect(rows).toHaveLength(1 + fleet.length);
    for (const name of fleet) expect(rows.some((r) => r.startsWith(`${name},`))).toBe(true);
    expect(shown(a.message)).toMatch(/the full list of objects is in the attached file/);
    expect('file' in a.message).toBe(false);
    expect(checkMessage({ ...a.message })).toBeNull();
  });

  it('says a broker that cannot be asked could not be asked, for the channel, claiming nothing', async () => {
    const a = await dispatch('preview delete audit-retention', ctx(failing('unreachable')));
    expect(a).toMatchObject({ outcome: 'not-asked', audience: 'channel' });
    expect(shown(a.message)).toMatch(
      /Could not preview\* delete of `audit-retention`: the broker could not be reached/,
    );
    expect(shown(a.message)).toMatch(/Nothing is claimed/);
  });

  it('tells the asker alone that the vhost does not exist', async () => {
    const missing = broker({
      listPolicies: async () => {
        throw Object.assign(new Error('Not Found'), { code: 'not-found' });
      },
    });
    const a = await dispatch('preview delete audit-retention --vhost gone', ctx(missing));
    expect(a).toMatchObject({ outcome: 'refused', audience: 'asker' });
    expect(shown(a.message)).toMatch(/vhost `gone` does not exist/);
  });
});
