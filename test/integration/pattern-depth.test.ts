/**
 * Patterns nested deep: the broker refuses them ("regular expression is too complicated", or on
 * 4.2.8+/4.3.2+ "pattern must not exceed 1024 bytes" first), so the validation must too. Each shape is PUT on the real brokers and read by pcreSyntaxError;
 * whatever the broker refuses, the validation refuses (the one over-refusal is documented at
 * MAX_GROUP_DEPTH and asserted here as such).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pcreSyntaxError } from '../../src/policy/pattern/pcreSyntax.ts';
import { validate } from '../../src/policy/validate/validate.ts';
import { RabbitError } from '../../src/rabbit/errors.ts';
import { uniqueName } from '../support/broker.ts';
import { brokersUp, clientFor } from '../support/brokers.ts';

const { up } = await brokersUp();

const nest = (open: string, inner: string, close: string, n: number) =>
  open.repeat(n) + inner + close.repeat(n);

const SHAPES: readonly [string, string][] = [
  ['797 capturing', nest('(', 'a', ')', 797)],
  ['799 capturing', nest('(', 'a', ')', 799)],
  ['798 capturing around an alternation', nest('(', 'abc|d', ')', 798)],
  ['400 pairs (a(?:b|', nest('(a(?:b|', 'c', '))', 400)],
  ['2,000 non-capturing', nest('(?:', 'a', ')', 2000)],
  ['1,331 lookaheads', nest('(?=', 'a', ')', 1331)],
  ['700 non-capturing', nest('(?:', 'a', ')', 700)],
];

describe.each(up)('deeply nested patterns on $label', (broker) => {
  const client = clientFor(broker);
  const vhost = uniqueName('depth');
  beforeAll(async () => {
    await client.putVhost(vhost);
  });
  afterAll(async () => {
    await client.deleteVhost(vhost);
    await client.close();
  });

  it.each(SHAPES)('%s: refused by the validation whenever the broker refuses it', async (_what, pattern) => {
    let brokerRefusal: string | undefined;
    try {
      await client.putPolicy('user', {
        vhost,
        name: 'deep',
        pattern,
        applyTo: 'queues',
        priority: 0,
        definition: { 'max-length': 1 },
      });
      await client.deletePolicy('user', vhost, 'deep');
    } catch (e) {
      if (!(e instanceof RabbitError) || e.code !== 'refused-by-broker') throw e;
      brokerRefusal = e.reason;
    }
    // The bot's validation for this broker's version: 4.2.8+ and 4.3.2+ refuse a pattern over
    // 1024 bytes before compiling it, older brokers compile it and find it too deep.
    const { version } = await client.overview();
    const validation = validate({
      action: 'create',
      layer: 'user',
      vhost,
      name: 'deep',
      existing: { user: [], operator: [] },
      version,
      fields: { pattern, applyTo: 'queues', priority: 0, definition: { 'max-length': 1 } },
    });
    const ours = validation.refusals.find((p) => p.field === 'pattern');
    if (brokerRefusal === undefined) {
      expect(ours).toBeUndefined();
    } else if (/must not exceed 1024 bytes/.test(brokerRefusal)) {
      expect(ours?.code).toBe('pattern-too-long');
    } else {
      expect(brokerRefusal).toMatch(/regular expression is too complicated/);
      expect(ours?.code).toBe('pattern-invalid');
      expect(pcreSyntaxError(pattern)?.message).toBe('regular expression is too complicated');
    }
  });
});
