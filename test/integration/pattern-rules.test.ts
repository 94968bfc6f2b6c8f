/**
 * What the broker refuses at PUT, and what the bot's one validation refuses, side by side on the
 * real brokers (3.10.8 on OTP 25, 4.0.5 on OTP 27, 4.3.6 on OTP 29; the cluster too; and
 * scripts/broker-plain, 4.0.5 where the federation plugin is off, so it refuses the federation
 * keys as a plugin's): each pattern and definition below is PUT to a vhost of the test's own,
 * and `validate` for that broker (its version and Erlang from the overview, its plugins as the
 * client reads them) must refuse exactly what the broker answered 400 to. The patterns are the rules
 * PCRE 8 and PCRE2 differ on (a recursion that could loop, a lookbehind of bounded length, `(?^)`),
 * those both share (two groups of one name, `(?J)`, branch resets), and tricky patterns the
 * broker takes and nothing may refuse.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validate } from '../../src/policy/validate/validate.ts';
import { RabbitError } from '../../src/rabbit/errors.ts';
import { uniqueName } from '../support/broker.ts';
import { brokersUp, clientFor, PLAIN } from '../support/brokers.ts';

const { up } = await brokersUp({ cluster: true, plain: true });

const PATTERNS = [
  // refused by both engines
  '(?<n>a)(?<n>b)',
  '(?<n>a)|(?<n>b)',
  '(?P<n>a)(?P<n>b)',
  '(?J:(?<n>a))(?<n>b)',
  '(?|(?<n>a)|(?<m>b))',
  '(?|(?<n>a)|(?<n>b))(?<n>c)',
  // refused by PCRE 8 alone
  '(?R)',
  'a|(?R)',
  '(a|(?R))',
  '(?:(?R))',
  '((?1))',
  '(?<n>(?&n))',
  '(\\g<1>)',
  'a?(?R)',
  '(?=(?R))',
  '(?1)((?R))',
  '(?<=a{1,3})c',
  '(?^)a',
  // taken by both: tricky, and nothing may refuse them
  '(?J)(?<n>a)(?<n>b)',
  '(?<n>a)(?J:(?<n>b))',
  '(?|(?<n>a)|(?<n>b))',
  '(?|(a)(?<x>c)|(?<y>b)(d))',
  'a(?R)?b',
  '^orders\\.(?<kind>audit|billing)(?:\\.(?&kind))*$',
  '(a(?1)?b)',
  '(?(R)a|(?R)b)',
  '(a)(?(1)b|(?R))',
  '(?+1)(a)',
  '(?<=ab|c)d',
  '(?<=\\g<1>)(a)',
  '^(?!amq\\.)[\\w.-]+$',
];

const DEFINITIONS: Record<string, unknown>[] = [
  { 'federation-upstream': 'origin' },
  { 'federation-upstream-set': 'all' },
  { 'federation-upstream-pattern': '^dc-' },
  { 'federation-upstream-pattern': '(?<n>a)(?<n>b)' },
  { 'federation-upstream-pattern': '(?R)' },
];

describe.each(up)('the broker refuses at PUT exactly what the validation refuses: $label', (broker) => {
  const client = clientFor(broker);
  const vhost = uniqueName('pattern-rules');
  beforeAll(async () => {
    await client.putVhost(vhost);
  });
  afterAll(async () => {
    await client.deleteVhost(vhost);
    await client.close();
  });

  /** The broker's answer to the policy: null when taken (and then removed), else its reason. */
  async function put(pattern: string, definition: Record<string, unknown>): Promise<string | null> {
    try {
      await client.putPolicy('user', { vhost, name: 'p', pattern, applyTo: 'all', priority: 0, definition });
    } catch (e) {
      if (!(e instanceof RabbitError) || e.code !== 'refused-by-broker') throw e;
      return e.reason ?? e.message;
    }
    await client.deletePolicy('user', vhost, 'p');
    return null;
  }

  async function ours(pattern: string, definition: Record<string, unknown>) {
    const [{ version }, plugins] = await Promise.all([client.overview(), client.plugins()]);
    return validate({
      action: 'create',
      layer: 'user',
      vhost,
      name: 'p',
      existing: { user: [], operator: [] },
      version,
      ...(plugins ? { plugins } : {}),
      fields: { pattern, applyTo: 'all', priority: 0, definition },
    });
  }

  it('the overview gives the Erlang release and the plugins are known', async () => {
    const [{ version }, plugins] = await Promise.all([client.overview(), client.plugins()]);
    expect(version.erlang).toBeGreaterThanOrEqual(25);
    expect(plugins).toBeDefined();
  });

  it.each(PATTERNS)('pattern %s', async (pattern) => {
    const refusal = await put(pattern, { 'max-length': 1 });
    const v = await ours(pattern, { 'max-length': 1 });
    expect(v.refusals.map((r) => r.message)).toEqual(
      refusal === null ? [] : [expect.stringMatching(/^The broker would refuse this pattern: /)],
    );
  });

  it.each(DEFINITIONS.map((d) => [JSON.stringify(d), d] as const))('definition %s', async (_, definition) => {
    const refusal = await put('^fed\\.', definition);
    const v = await ours('^fed\\.', definition);
    expect(v.ok).toBe(refusal === null);
    // Every broker runs federation but the plain one, which refuses every federation key as unknown.
    expect(/not recognised policy settings/.test(refusal ?? ''), String(refusal)).toBe(broker === PLAIN);
    if (refusal && /not recognised policy settings/.test(refusal)) {
      // A plugin's key where the plugin is off: the refusal names the plugin.
      expect(v.refusals.map((r) => r.code)).toEqual(['plugin-disabled']);
      expect(v.refusals[0]?.message).toMatch(
        /is accepted only while the federation plugin is enabled on the broker, and RabbitMQ .* here has not enabled it/,
      );
    }
  });
});
