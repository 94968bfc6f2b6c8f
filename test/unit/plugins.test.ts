import { describe, expect, it } from 'vitest';
import { enabledPlugins } from '../../src/policy/plugins.ts';
import type { BrokerVersion } from '../../src/policy/types.ts';

/**
 * src/policy/plugins.ts: which plugins with policy keys a broker has enabled, from what it
 * reports (the brokers' own answers: test/integration/pattern-rules.test.ts).
 */

const V310: BrokerVersion = { major: 3, minor: 10, patch: 8 };
const V43: BrokerVersion = { major: 4, minor: 3, patch: 6 };
const PLAIN = ['direct', 'fanout', 'headers', 'topic'];
const plugins = (s: ReadonlySet<string> | undefined) => (s ? [...s] : 'unknown');

describe('enabledPlugins', () => {
  it('before 4.2 the exchange type settles it: the one plugin registers it with the keys', () => {
    expect(plugins(enabledPlugins({ version: V310, exchangeTypes: PLAIN }))).toEqual([]);
    expect(
      plugins(enabledPlugins({ version: V310, exchangeTypes: [...PLAIN, 'x-federation-upstream'] })),
    ).toEqual(['federation']);
    expect(plugins(enabledPlugins({ version: V310, exchangeTypes: undefined }))).toBe('unknown');
  });

  it("from 4.2, without the exchange type, the nodes' applications: every node, none, or not known", () => {
    const signs = (applications?: string[][]) =>
      enabledPlugins({ version: V43, exchangeTypes: PLAIN, applications });
    expect(plugins(signs())).toBe('unknown');
    expect(plugins(signs([['rabbit'], ['rabbit']]))).toEqual([]);
    expect(plugins(signs([['rabbitmq_federation_common'], ['rabbitmq_federation_common']]))).toEqual([
      'federation',
    ]);
    expect(plugins(signs([['rabbitmq_federation_common'], ['rabbit']]))).toBe('unknown');
  });
});
