import { COMPONENT_WORDS, type ParameterComponent } from '../policy/index.ts';
import { quoted } from '../text/index.ts';

/**
 * The topology operator's `Federation` and `Shovel` manifests as the parameters the operator
 * writes for them (its `internal/federation_definition.go` and `internal/shovel_definition.go`):
 * each spec field under the broker's name for it (`ackMode` -> `ack-mode`, `destQueue` ->
 * `dest-queue`, `messageTTL` -> `message-ttl`), the fields the operator leaves out when empty (0,
 * "", false, {}) left out too. Their URIs are in the Kubernetes Secret `uriSecret` names, which a
 * file does not hold: the parameter is read without them, and the Secret's name kept to say so.
 */

/** The spec fields that address the parameter or the cluster, not its value. */
const NOT_VALUE = new Set(['name', 'vhost', 'uriSecret', 'rabbitmqClusterReference', 'deletionPolicy']);

/** The broker's names the camelCase rule would spell otherwise. */
const BROKER_NAME: Readonly<Record<string, string>> = { messageTTL: 'message-ttl' };

const brokerName = (field: string) =>
  BROKER_NAME[field] ?? field.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** What the operator leaves out of the value it writes (Go's `omitempty`). */
const isEmpty = (v: unknown) =>
  v === null ||
  v === undefined ||
  v === 0 ||
  v === '' ||
  v === false ||
  (isObject(v) && Object.keys(v).length === 0);

export interface ManifestParameter {
  readonly component: ParameterComponent;
  readonly at: string;
  readonly vhost: string;
  readonly name: unknown;
  readonly value: Record<string, unknown>;
  readonly uriSecret: string;
}

/** The operator's Federation or Shovel at `at` as its parameter, or the sentence refusing it. */
export function fromManifestSpec(
  kind: 'Federation' | 'Shovel',
  spec: unknown,
  at: string,
): ManifestParameter | string {
  if (!isObject(spec))
    return `The ${kind} at ${at} has no spec: a ${kind} needs its name and uriSecret under spec`;
  const secret = isObject(spec.uriSecret) ? spec.uriSecret.name : undefined;
  if (typeof secret !== 'string' || secret === '')
    return `The ${kind} at ${at} has no uriSecret (the Kubernetes Secret holding its URIs): the topology operator requires one`;
  if (spec.vhost !== undefined && typeof spec.vhost !== 'string')
    return `The ${kind} at ${at} cannot be read: its vhost should be a string (under spec)`;
  const value: Record<string, unknown> = {};
  for (const [field, v] of Object.entries(spec))
    if (!NOT_VALUE.has(field) && !isEmpty(v)) value[brokerName(field)] = v;
  return {
    component: kind === 'Federation' ? 'federation-upstream' : 'shovel',
    at,
    vhost: (spec.vhost as string | undefined) ?? '/',
    name: spec.name,
    value,
    uriSecret: secret,
  };
}

/** What the broker would refuse of a parameter's value at once (its shape), as words; null when none. */
export function valueProblem(component: ParameterComponent, value: unknown): string | null {
  if (component === 'federation-upstream-set') {
    const ok =
      Array.isArray(value) &&
      value.every((e) => isObject(e) && typeof e.upstream === 'string' && e.upstream !== '');
    return ok
      ? null
      : 'has a value that is not a list of upstreams: a federation upstream set is [{"upstream": NAME}, …]';
  }
  return isObject(value) ? null : `has a value that is not an object: a ${COMPONENT_WORDS[component]} is one`;
}

/** The sentence of a note on a manifest's parameter the planner compares with the broker's URIs. */
export const secretWords = (secret: string) =>
  `its URIs are in the Kubernetes Secret ${quoted(secret)} (uriSecret), which the bot cannot read from a file`;
