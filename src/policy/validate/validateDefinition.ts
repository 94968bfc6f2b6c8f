import {
  isKnownKey,
  KEYS,
  keySpec,
  MIRRORING_KEYS,
  operatorMaySet,
  scopeFits,
  type ValueRule,
  vetoedKeys,
} from '../keys.ts';
import { patternErrorWords, pcreSyntaxError, regexEngine } from '../pattern/pcreSyntax.ts';
import {
  atLeast,
  type BrokerVersion,
  formatVersion,
  OBJECT_KINDS,
  type ObjectKind,
  type PolicyLayer,
} from '../types.ts';
import type { Problem } from './problem.ts';

/**
 * What is wrong with a proposed definition, key by key, for the broker's version: unknown keys
 * (with the closest known one), values of the wrong type or range, mirroring keys, keys an
 * operator policy may not set, federation conflicts; and a definition every type it reaches vetoes.
 */

/** A value as a person reads it in a refusal. */
export function describeValue(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v);
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'an object';
  return String(v);
}

/**
 * The first number in a value (nested ones included) that JSON, read as JavaScript reads it,
 * cannot carry exactly: beyond 2^53 − 1 the number typed is already rounded (12345678901234567890
 * arrives as 12345678901234567000), and 1e400 is Infinity, which is written as null.
 */
export function inexactNumber(v: unknown): number | undefined {
  if (typeof v === 'number')
    return !Number.isFinite(v) || Math.abs(v) > Number.MAX_SAFE_INTEGER ? v : undefined;
  if (Array.isArray(v)) {
    for (const x of v) {
      const found = inexactNumber(x);
      if (found !== undefined) return found;
    }
  } else if (v !== null && typeof v === 'object') {
    return inexactNumber(Object.values(v));
  }
  return undefined;
}

/** Why `n` is refused, for the definition's keys and the priority alike. */
export function inexactNumberWords(what: string, n: number): string {
  const read = Number.isFinite(n) ? `it would be written as ${n}` : 'it would be written as null';
  return `${what} is a number beyond ${Number.MAX_SAFE_INTEGER} (2^53 − 1), past which JSON numbers are rounded: ${read}, not what was typed. Use a smaller number.`;
}

export function checkDefinition(
  definition: Record<string, unknown>,
  layer: PolicyLayer,
  version: BrokerVersion,
  plugins: ReadonlySet<string> | undefined,
  refuse: (p: Problem) => void,
  warn: (p: Problem) => void,
): void {
  const v = formatVersion(version);
  const keys = Object.keys(definition);
  const mirroring = keys.filter((k) => MIRRORING_KEYS.has(k));
  if (mirroring.length > 0) {
    if (atLeast(version, 4)) {
      refuse({
        code: 'mirroring-removed',
        field: 'definition',
        key: mirroring[0],
        message: `${mirroring.join(', ')}: classic queue mirroring was removed in RabbitMQ 4.0, and this broker runs ${v}. Such a policy would configure nothing while looking as if replication had been arranged; use quorum queues for replication.`,
      });
    } else {
      warn({
        code: 'mirroring-deprecated',
        field: 'definition',
        key: mirroring[0],
        message: `${mirroring.join(', ')}: classic queue mirroring is deprecated and removed in RabbitMQ 4.0; remove these keys before upgrading, and prefer quorum queues.`,
      });
      if (!keys.includes('ha-mode')) {
        refuse({
          code: 'mirroring-incomplete',
          field: 'definition',
          key: mirroring[0],
          message: `${mirroring.join(', ')} need ha-mode in the same definition.`,
        });
      }
    }
  }
  const federation = keys.filter((k) => keySpec(k)?.plugin === 'federation');
  if (federation.length > 1) {
    refuse({
      code: 'federation-conflict',
      field: 'definition',
      key: federation[1],
      message: `${federation.join(' and ')}: a definition takes at most one of federation-upstream, federation-upstream-set and federation-upstream-pattern.`,
    });
  }

  for (const key of keys) {
    const value = definition[key];
    const inexact = inexactNumber(value);
    if (inexact !== undefined) {
      refuse({ code: 'number-inexact', field: 'definition', key, message: inexactNumberWords(key, inexact) });
      continue;
    }
    if (MIRRORING_KEYS.has(key) && atLeast(version, 4)) continue;
    const spec = keySpec(key);
    const plugin = spec?.plugin;
    // Known to this version, the plugin aside (said apart below).
    if (!spec || !isKnownKey(key, version, new Set(plugin === undefined ? [] : [plugin]))) {
      const hint = closestKey(key, version);
      refuse({
        code: 'unknown-key',
        field: 'definition',
        key,
        message: `${key} is not a policy key RabbitMQ ${v} recognises${spec ? ' (it exists in other versions)' : ''}${hint ? `; did you mean ${hint}?` : '.'}`,
      });
      continue;
    }
    if (plugin !== undefined && !plugins?.has(plugin)) {
      // Off: the broker answers 400 "not recognised policy settings". Not known: said beside.
      if (plugins === undefined) {
        warn({
          code: 'federation-plugin',
          field: 'definition',
          key,
          message: `${pluginKeyWords(key, plugin)}.`,
        });
      } else {
        refuse({
          code: 'plugin-disabled',
          field: 'definition',
          key,
          message: `${pluginKeyWords(key, plugin)}, and RabbitMQ ${v} here has not enabled it: the broker refuses the definition. Enable rabbitmq_${plugin} there, or leave ${key} out.`,
        });
        continue;
      }
    }
    const problem = valueProblem(key, value, spec.value(version)) ?? compiles(key, value, version);
    if (problem) refuse({ field: 'definition', key, ...problem });
    if (layer === 'operator' && !operatorMaySet(key, version)) {
      const allowed = KEYS.filter((k) => operatorMaySet(k.key, version)).map((k) => k.key);
      refuse({
        code: 'operator-key',
        field: 'definition',
        key,
        message: `${key} cannot be set by an operator policy on RabbitMQ ${v}; operator policies may set ${allowed.join(', ')}.`,
      });
    }
    const deprecated = spec.deprecated;
    if (deprecated && atLeast(version, ...deprecated.since)) {
      const denied = atLeast(version, ...deprecated.deniedSince);
      (denied ? refuse : warn)({
        code: 'deprecated-key',
        field: 'definition',
        key,
        message: denied
          ? `${key} is a deprecated feature that RabbitMQ ${v} refuses unless its configuration permits it; use ${deprecated.instead} instead.`
          : `${key} is deprecated, and RabbitMQ ${deprecated.deniedSince.slice(0, 2).join('.')} and later refuse it by default; use ${deprecated.instead} instead.`,
      });
    }
  }
  if (isKnownKey('delayed-retry-type', version, new Set())) checkDelayedRetry(definition, refuse);
  if (atLeast(version, 4) || !keys.includes('ha-mode')) return;
  // Classic mirroring's own rules (rabbit_mirror_queue_misc validate_policy).
  const mode = definition['ha-mode'];
  const params = definition['ha-params'];
  if (mode === 'all' && params !== undefined) {
    refuse({
      code: 'bad-value',
      field: 'definition',
      key: 'ha-params',
      message: 'ha-mode "all" takes no ha-params.',
    });
  } else if (mode === 'exactly' && !(typeof params === 'number' && Number.isInteger(params) && params > 0)) {
    refuse({
      code: 'bad-value',
      field: 'definition',
      key: 'ha-params',
      message: `ha-mode "exactly" needs ha-params, a whole number of replicas above 0; got ${describeValue(params)}.`,
    });
  } else if (
    mode === 'nodes' &&
    !(Array.isArray(params) && params.length > 0 && params.every((p) => typeof p === 'string'))
  ) {
    refuse({
      code: 'bad-value',
      field: 'definition',
      key: 'ha-params',
      message: `ha-mode "nodes" needs ha-params, a list of node names; got ${describeValue(params)}.`,
    });
  }
}

/**
 * The quorum queue's delayed-retry keys (4.3.1+) depend on each other: a retry type other than
 * "disabled" needs a minimum delay, and the maximum is not below the minimum (measured on 4.3.6).
 */
function checkDelayedRetry(definition: Record<string, unknown>, refuse: (p: Problem) => void): void {
  const type = definition['delayed-retry-type'];
  const min = definition['delayed-retry-min'];
  const max = definition['delayed-retry-max'];
  if (typeof type === 'string' && ['all', 'failed', 'returned'].includes(type) && min === undefined) {
    refuse({
      code: 'bad-value',
      field: 'definition',
      key: 'delayed-retry-type',
      message: `delayed-retry-type ${JSON.stringify(type)} needs delayed-retry-min (the shortest delay before a retry, in milliseconds) in the same definition.`,
    });
  }
  if (typeof min === 'number' && typeof max === 'number' && max < min) {
    refuse({
      code: 'bad-value',
      field: 'definition',
      key: 'delayed-retry-max',
      message: `delayed-retry-max (${max}) must not be smaller than delayed-retry-min (${min}).`,
    });
  }
}

/** Why a plugin's key depends on the broker: the words of the warning and of the refusal. */
export function pluginKeyWords(key: string, plugin: string): string {
  return `${key} is accepted only while the ${plugin} plugin is enabled on the broker`;
}

/** A key whose value the broker compiles as a pattern (rabbit_federation_parameters: `re:compile`). */
function compiles(
  key: string,
  value: unknown,
  version: BrokerVersion,
): Omit<Problem, 'field' | 'key'> | null {
  if (key !== 'federation-upstream-pattern' || typeof value !== 'string') return null;
  const error = pcreSyntaxError(value, regexEngine(version));
  return error
    ? {
        code: 'bad-value',
        message: `${key}: the broker would refuse this pattern: ${patternErrorWords(value, error)}.`,
      }
    : null;
}

const LIMIT_WORDS = (rule: { min?: number; max?: number }) =>
  rule.max !== undefined
    ? `between ${rule.min ?? 0} and ${rule.max}`
    : rule.min === 1
      ? '1 or more'
      : `${rule.min ?? 0} or more`;

function valueProblem(key: string, value: unknown, rule: ValueRule): Omit<Problem, 'field' | 'key'> | null {
  switch (rule.type) {
    case 'any':
      return null;
    case 'string':
      return typeof value === 'string'
        ? null
        : { code: 'bad-value', message: `${key} must be text, got ${describeValue(value)}.` };
    case 'integer': {
      if (typeof value !== 'number' || !Number.isInteger(value)) {
        return { code: 'bad-value', message: `${key} must be a whole number, got ${describeValue(value)}.` };
      }
      if (rule.min !== undefined && value < rule.min) {
        return {
          code: value < 0 ? 'negative-limit' : 'bad-value',
          message: `${key} must be ${LIMIT_WORDS(rule)}, got ${value}.`,
        };
      }
      if (rule.max !== undefined && value > rule.max) {
        return { code: 'bad-value', message: `${key} must be ${LIMIT_WORDS(rule)}, got ${value}.` };
      }
      return null;
    }
    case 'enum':
      return rule.values.includes(value as string | number)
        ? null
        : {
            code: 'bad-value',
            message: `${key} must be one of ${rule.values.map((x) => JSON.stringify(x)).join(', ')}, got ${describeValue(value)}.`,
          };
    case 'duration':
      return typeof value === 'string' && /^[0-9]+[YMDhms]$/.test(value) && !/^0+[YMDhms]$/.test(value)
        ? null
        : {
            code: 'bad-value',
            message: `${key} must be a positive whole number followed by a unit (Y, M, D, h, m or s), like "7D"; got ${describeValue(value)}.`,
          };
  }
}

/** A known key a typo is one or two letters away from. */
function closestKey(key: string, version: BrokerVersion): string | undefined {
  let best: string | undefined;
  let bestDistance = 3;
  for (const spec of KEYS) {
    if (!isKnownKey(spec.key, version, new Set(['federation']))) continue;
    const d = distance(key, spec.key);
    if (d < bestDistance) {
      bestDistance = d;
      best = spec.key;
    }
  }
  return best;
}

function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0] as number;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = row[j] as number;
      row[j] = Math.min(
        (row[j] as number) + 1,
        (row[j - 1] as number) + 1,
        prev + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
      prev = tmp;
    }
  }
  return row[b.length] as number;
}

/** A definition whose keys veto every object type its apply-to reaches governs nothing. */
export function checkScope(
  definition: Record<string, unknown>,
  applyTo: string,
  version: BrokerVersion,
  warn: (p: Problem) => void,
): void {
  const reached = OBJECT_KINDS.filter((k) => scopeFits(applyTo, k));
  const vetoedFor = (kind: ObjectKind) =>
    Object.keys(definition).filter((k) => vetoedKeys(kind, version).has(k));
  const blocked = reached.filter((k) => vetoedFor(k).length > 0);
  if (reached.length > 0 && blocked.length === reached.length) {
    const why = blocked
      .map(
        (k) =>
          `${k === 'exchange' ? 'exchanges' : k === 'stream' ? 'streams' : `${k} queues`} refuse ${vetoedFor(k).join(', ')}`,
      )
      .join('; ');
    warn({
      code: 'vetoed-everywhere',
      field: 'definition',
      message: `This policy can govern nothing it applies to: ${why}. A policy with any key a queue type refuses is skipped for that type.`,
    });
  }
}
