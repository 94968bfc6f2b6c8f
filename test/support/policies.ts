/** Policy fixtures for the pure tests: the two broker versions proven here, and a short policy maker. */
import type { BrokerVersion, Policy } from '../../src/policy/types.ts';

export const V310: BrokerVersion = { major: 3, minor: 10, patch: 8 };
export const V40: BrokerVersion = { major: 4, minor: 0, patch: 5 };

/** `pol(name, pattern, priority, definition, applyTo = 'all')`, in the given vhost. */
export function policyIn(vhost: string) {
  return (
    name: string,
    pattern: string,
    priority: number,
    definition: Record<string, unknown>,
    applyTo = 'all',
  ): Policy => ({
    vhost,
    name,
    pattern,
    applyTo,
    priority,
    definition,
  });
}
