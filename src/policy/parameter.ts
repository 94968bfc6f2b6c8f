import { sorted } from './compare.ts';

/**
 * The broker's runtime parameters that make federation links and shovels run: a federation
 * upstream (where a link connects: its URIs and settings), an upstream set (a list of upstreams by
 * name) and a dynamic shovel. A definitions file declares them beside its policies, and a set
 * writes them with its policies (`PUT /api/parameters/{component}/{vhost}/{name}`, body
 * `{ "value": … }`). Their values carry URIs with passwords: they are shown only masked
 * (src/core `maskUris`).
 */

export const PARAMETER_COMPONENTS = ['federation-upstream', 'federation-upstream-set', 'shovel'] as const;
export type ParameterComponent = (typeof PARAMETER_COMPONENTS)[number];

export const isParameterComponent = (c: string): c is ParameterComponent =>
  (PARAMETER_COMPONENTS as readonly string[]).includes(c);

/** One parameter: its value as the broker takes it (an object; an upstream set's, a list). */
export interface Parameter {
  readonly component: ParameterComponent;
  readonly vhost: string;
  readonly name: string;
  readonly value: unknown;
}

/** A parameter's change: before and after (null when absent). */
export interface ParameterTransition {
  readonly component: ParameterComponent;
  readonly vhost: string;
  readonly name: string;
  readonly before: Parameter | null;
  readonly after: Parameter | null;
}

/** The value as a string equal for equal values (keys in any order); '' for none. */
export function canonicalValue(value: unknown | null): string {
  return value === null || value === undefined ? '' : JSON.stringify(sorted(value));
}

export function sameParameterValue(a: unknown | null, b: unknown | null): boolean {
  return canonicalValue(a) === canonicalValue(b);
}

/** The component in words: "federation upstream", "federation upstream set", "shovel". */
export const COMPONENT_WORDS: Readonly<Record<ParameterComponent, string>> = {
  'federation-upstream': 'federation upstream',
  'federation-upstream-set': 'federation upstream set',
  shovel: 'shovel',
};

/** The upstreams an upstream set's value names (`[{ "upstream": name, … }]`), in order. */
export function setUpstreams(value: unknown): string[] {
  if (!Array.isArray(value)) return [];
  return value.flatMap((e) =>
    e !== null && typeof e === 'object' && typeof (e as { upstream?: unknown }).upstream === 'string'
      ? [(e as { upstream: string }).upstream]
      : [],
  );
}
