import { type FederationNames, type FileParameter, secretWords } from '../definitions/index.ts';
import {
  COMPONENT_WORDS,
  PARAMETER_COMPONENTS,
  type Parameter,
  type ParameterComponent,
  type ParameterTransition,
  sameParameterValue,
} from '../policy/index.ts';
import { pluginKeyWords } from '../policy/validate/index.ts';
import { quoted } from '../text/index.ts';

/**
 * A file's federation upstreams, upstream sets and shovels of one vhost against the broker's
 * (docs/plan.md): created, edited, unchanged; deleted with `prune`, but only of a component the
 * file holds for the vhost (a file of policies alone never deletes the parameters its links
 * run on). And their place among the policies' steps, so that no state on the way stops a link
 * the end state keeps: every upstream, upstream set and shovel created or edited before the first
 * policy (an upstream there before the policy that names it; a set after the upstreams it names),
 * every one deleted after the last (a policy's federation key gone before the upstream it names).
 */

/** What the planner reads of the broker's parameters (ManagementClient.parameters). */
export interface ParameterLister {
  parameters(
    component: ParameterComponent,
    vhost: string,
  ): Promise<readonly { readonly name: string; readonly value: unknown }[]>;
}

export interface ParameterChanges {
  readonly changes: readonly ParameterTransition[];
  readonly unchanged: number;
  /** What the plan says beside them: a manifest's URIs taken from the broker, or a manifest not planned for want of them. */
  readonly notes: readonly string[];
}

/** The URI keys of a parameter's value (`uri`, `src-uri`, `dest-uri`), which a manifest's value lacks. */
const URI_KEY = /(^|-)uris?$/i;

/** The vhost's federation upstreams, upstream sets and shovels on the broker. */
export async function readParameters(broker: ParameterLister, vhost: string): Promise<Parameter[]> {
  const lists = await Promise.all(
    PARAMETER_COMPONENTS.map(async (component) =>
      (await broker.parameters(component, vhost)).map((p) => ({
        component,
        vhost,
        name: p.name,
        value: p.value,
      })),
    ),
  );
  return lists.flat();
}

const keyOf = (p: Pick<Parameter, 'component' | 'name'>) => JSON.stringify([p.component, p.name]);

export function parameterChangesOf(
  mine: readonly FileParameter[],
  live: readonly Parameter[],
  prune: boolean,
): ParameterChanges {
  const byKey = new Map(live.map((p) => [keyOf(p), p]));
  const changes: ParameterTransition[] = [];
  const notes: string[] = [];
  let unchanged = 0;
  for (const { at, uriSecret, ...parameter } of mine) {
    const current = byKey.get(keyOf(parameter)) ?? null;
    let after = parameter;
    if (uriSecret !== undefined) {
      const which = `The ${COMPONENT_WORDS[parameter.component]} ${quoted(parameter.name)} of vhost ${quoted(parameter.vhost)} (${at})`;
      if (!current) {
        notes.push(
          `${which} is not planned: ${secretWords(uriSecret)}, and the broker has none to keep. Create it with the topology operator, or plan a definitions export that holds it.`,
        );
        continue;
      }
      notes.push(`${which}: ${secretWords(uriSecret)}; compared and written with the URIs the broker has.`);
      after = { ...parameter, value: { ...uriKeys(current.value), ...(parameter.value as object) } };
    }
    if (current && sameParameterValue(current.value, after.value)) {
      unchanged++;
      continue;
    }
    changes.push({ ...keyFields(parameter), before: current, after });
  }
  if (prune) {
    const named = new Set(mine.map(keyOf));
    const held = new Set(mine.map((p) => p.component));
    for (const p of live)
      if (held.has(p.component) && !named.has(keyOf(p)))
        changes.push({ ...keyFields(p), before: p, after: null });
  }
  return { changes, unchanged, notes };
}

const keyFields = (p: Parameter) => ({ component: p.component, vhost: p.vhost, name: p.name });

/** The value's URI keys alone (a manifest's parameter keeps the broker's). */
function uriKeys(value: unknown): Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return {};
  return Object.fromEntries(Object.entries(value).filter(([k]) => URI_KEY.test(k)));
}

/**
 * What the broker would refuse of the changes at once: a federation upstream or set written where
 * the federation plugin is known not to be enabled (the policies' federation keys are refused so,
 * src/policy/validate/). A shovel's plugin is not known from what the broker reports: one refused
 * is refused when it is written, and the set rolled back.
 */
export function parameterRefusals(
  changes: readonly ParameterTransition[],
  mine: readonly FileParameter[],
  plugins: ReadonlySet<string> | undefined,
  version: string,
): string[] {
  if (plugins === undefined || plugins.has('federation')) return [];
  return changes.flatMap((c) => {
    if (c.after === null || c.component === 'shovel') return [];
    const at = mine.find((p) => p.component === c.component && p.name === c.name)?.at;
    return [
      `The ${COMPONENT_WORDS[c.component]} ${quoted(c.name)} of vhost ${quoted(c.vhost)}${at ? ` (${at})` : ''}: ${pluginKeyWords(c.component, 'federation')}, and RabbitMQ ${version} here has not enabled it: the broker refuses it. Enable rabbitmq_federation there, or leave it out.`,
    ];
  });
}

const WRITE_ORDER: Readonly<Record<ParameterComponent, number>> = {
  'federation-upstream': 0,
  'federation-upstream-set': 1,
  shovel: 2,
};

/**
 * The parameter changes around the policies' steps: `first` (created or edited: upstreams, then
 * sets, then shovels) go before every policy step, `last` (deleted: the reverse) after them.
 */
export function parameterOrder(changes: readonly ParameterTransition[]): {
  first: ParameterTransition[];
  last: ParameterTransition[];
} {
  const byComponent = (a: ParameterTransition, b: ParameterTransition) =>
    WRITE_ORDER[a.component] - WRITE_ORDER[b.component];
  return {
    first: changes.filter((c) => c.after !== null).sort(byComponent),
    last: changes.filter((c) => c.after === null).sort((a, b) => byComponent(b, a)),
  };
}

/**
 * What the vhost holds once the set is written, for the targets a policy names: the upstreams and
 * sets the changes delete taken out (those it creates are the file's, added by `withDeclared`).
 */
export function withoutDeleted<T extends FederationNames>(
  names: T,
  changes: readonly ParameterTransition[],
): T {
  const gone = (c: ParameterComponent) =>
    new Set(changes.filter((t) => t.component === c && t.after === null).map((t) => t.name));
  const drop = (read: ReadonlySet<string> | null, deleted: ReadonlySet<string>) =>
    read === null || deleted.size === 0 ? read : new Set([...read].filter((n) => !deleted.has(n)));
  return {
    ...names,
    upstreams: drop(names.upstreams, gone('federation-upstream')),
    upstreamSets: drop(names.upstreamSets, gone('federation-upstream-set')),
  };
}
