/**
 * The hard cases of a change set, as rows a test sets up, plans and applies: the
 * rename, two policies trading priorities, a broad policy split, an end state that cuts, a loss on
 * the way no order avoids, a policy left out without --prune, operator policies renamed. Shared by
 * test/integration/plan-apply.test.ts (the plan's steps written by hand) and
 * test/integration/plan-differential.test.ts (filed, approved and applied by the bot).
 */
import type { Policy } from '../../src/policy/types.ts';

export type P = Omit<Policy, 'vhost'> & { operator?: boolean };

export const p = (
  name: string,
  pattern: string,
  priority: number,
  definition: Record<string, unknown>,
): P => ({
  name,
  pattern,
  applyTo: 'queues',
  priority,
  definition,
});

export interface Row {
  readonly what: string;
  /** Queues and their messages. */
  readonly queues: Readonly<Record<string, number>>;
  readonly live: readonly P[];
  readonly file: readonly P[];
  readonly prune?: boolean;
  /** The changes' names in the order of writing. */
  readonly order: readonly string[];
  /** The messages each queue holds once the set is written. */
  readonly after: Readonly<Record<string, number>>;
  /** What the plan says the end state removes, and what a state on the way does. */
  readonly lost: number;
  readonly transitional: readonly { name: string; step: number; messages: number }[];
}

const keep = p('keep', '^orders\\.audit$', 10, { 'max-length': 1000 });
const fallback = p('fallback', '^orders\\.', 1, { 'max-length': 5 });

export const ROWS: readonly Row[] = [
  {
    what: 'a rename: the new policy written before the old one is deleted, nothing lost',
    queues: { 'orders.audit': 30 },
    live: [keep, fallback],
    file: [{ ...keep, name: 'keep-audit' }, fallback],
    prune: true,
    order: ['keep-audit', 'keep'],
    after: { 'orders.audit': 30 },
    lost: 0,
    transitional: [],
  },
  {
    what: 'two policies trading priorities: the rising one first',
    queues: { 'orders.audit': 30 },
    live: [
      p('a', '^orders\\.audit$', 10, { 'max-length': 1000 }),
      p('b', '^orders\\.', 1, { 'max-length': 5 }),
    ],
    file: [
      p('a', '^orders\\.audit$', 1, { 'max-length': 1000 }),
      p('b', '^orders\\.', 10, { 'max-length': 2000 }),
    ],
    order: ['b', 'a'],
    after: { 'orders.audit': 30 },
    lost: 0,
    transitional: [],
  },
  {
    what: 'a broad policy split into two narrower ones',
    queues: { 'orders.a': 30, 'orders.b': 30 },
    live: [p('broad', '^orders\\.', 1, { 'max-length': 1000 }), p('floor', '.*', 0, { 'max-length': 5 })],
    file: [
      p('orders-a', '^orders\\.a$', 1, { 'max-length': 1000 }),
      p('orders-b', '^orders\\.b$', 1, { 'max-length': 500 }),
      p('floor', '.*', 0, { 'max-length': 5 }),
    ],
    prune: true,
    order: ['orders-a', 'orders-b', 'broad'],
    after: { 'orders.a': 30, 'orders.b': 30 },
    lost: 0,
    transitional: [],
  },
  {
    what: 'an end state that cuts: counted in the end state, nothing more on the way',
    queues: { 'orders.audit': 30 },
    live: [keep, fallback],
    file: [{ ...keep, definition: { 'max-length': 10 } }, fallback],
    order: ['keep'],
    after: { 'orders.audit': 10 },
    lost: 20,
    transitional: [],
  },
  {
    what: 'a loss on the way that no order avoids: said, with the step and the messages',
    queues: { x: 30, y: 30 },
    live: [
      p('f', '.*', 0, { 'max-length': 5 }),
      p('p1', '^x$', 1, { 'max-length': 1000 }),
      p('p2', '^y$', 1, { 'max-length': 1000 }),
    ],
    file: [
      p('f', '.*', 0, { 'max-length': 5 }),
      p('p1', '^y$', 1, { 'max-length': 1000 }),
      p('p2', '^x$', 1, { 'max-length': 1000 }),
    ],
    order: ['p1', 'p2'],
    // p1 first: x is left to f for a step, cut to 5; y keeps its 30.
    after: { x: 5, y: 30 },
    lost: 0,
    transitional: [{ name: 'x', step: 0, messages: 25 }],
  },
  {
    what: 'without --prune a policy the file leaves out stays',
    queues: { 'orders.audit': 30 },
    live: [keep, fallback],
    file: [{ ...keep, name: 'keep-audit' }, fallback],
    order: ['keep-audit'],
    after: { 'orders.audit': 30 },
    lost: 0,
    transitional: [],
  },
  {
    what: 'operator policies renamed: the new one before the old one is deleted, over a stricter one',
    queues: { 'orders.audit': 30 },
    live: [
      keep,
      { ...p('cap', '^orders\\.', 0, { 'max-length': 50 }), operator: true },
      { ...p('wide', '.*', -1, { 'max-length': 5 }), operator: true },
    ],
    file: [
      keep,
      { ...p('cap-orders', '^orders\\.', 0, { 'max-length': 50 }), operator: true },
      { ...p('wide', '.*', -1, { 'max-length': 5 }), operator: true },
    ],
    prune: true,
    order: ['cap-orders', 'cap'],
    after: { 'orders.audit': 30 },
    lost: 0,
    transitional: [],
  },
];

/** Policies as a one-vhost export of 3.10 writes them (vhost on each). */
export function exportOf(vhost: string, policies: readonly P[]): string {
  const fields = (x: P) => ({
    pattern: x.pattern,
    'apply-to': x.applyTo,
    priority: x.priority,
    definition: x.definition,
  });
  return JSON.stringify({
    policies: policies.filter((x) => !x.operator).map((x) => ({ vhost, name: x.name, ...fields(x) })),
    parameters: policies
      .filter((x) => x.operator)
      .map((x) => ({ vhost, component: 'operator_policy', name: x.name, value: fields(x) })),
    queues: [],
  });
}

/** The max-length a queue has now: each layer's winner (the highest priority match), the lower of the two. */
export function capNow(policies: readonly P[], queue: string): number {
  const winner = (operator: boolean) =>
    policies
      .filter((x) => (x.operator === true) === operator && new RegExp(x.pattern).test(queue))
      .sort((a, b) => b.priority - a.priority)[0];
  const cap = (x: P | undefined) => Number(x?.definition['max-length'] ?? Number.POSITIVE_INFINITY);
  return Math.min(cap(winner(false)), cap(winner(true)));
}
