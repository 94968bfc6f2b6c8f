import { describe, expect, it } from 'vitest';
import type { WhichBroker } from '../../commands/which.ts';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/log.ts';
import type { SlackBroker, SlackCommand } from '../../src/slack/commands/index.ts';
import { COMMANDS } from '../../src/slack/commands/index.ts';
import { dispatch } from '../../src/slack/dispatch.ts';
import { environmentDirectory } from '../../src/slack/environments.ts';
import { checkMessage } from '../support/fakeSlack.ts';

/** The dispatcher on its own: whatever the words, an answer Slack takes, never a stack trace. */

const logLines: string[] = [];
const logger = createLogger('info', { write: (l: string) => void logLines.push(l) });
const config = loadConfig({});

function broker(overrides: Partial<WhichBroker> = {}): SlackBroker {
  return {
    overview: async () => ({ version: { major: 3, minor: 13, patch: 0 } }),
    getQueue: async () => null,
    getExchange: async () => null,
    listPolicies: async () => [],
    listOperatorPolicies: async () => [],
    whoami: async () => ({}),
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

  it('has one table of commands, where preview is to be added', () => {
    expect([...COMMANDS.keys()].sort()).toEqual(['help', 'which']);
    const extra: SlackCommand = {
      name: 'preview',
      run: async () => ({ message: { text: 'p', blocks: [] }, audience: 'asker', outcome: 'answered' }),
    };
    const table = new Map([...COMMANDS, ['preview', extra]]);
    return dispatch('preview delete x', ctx(), table).then((a) => expect(a.command).toBe('preview'));
  });
});
