import type { FilePolicy } from '../definitions/index.ts';
import type { BrokerVersion, Policy, PolicyLayer } from '../policy/index.ts';
import { actionOf, samePolicy, type Transition } from '../policy/index.ts';
import { validate } from '../policy/validate/index.ts';

/**
 * A file's policies of one vhost against the broker's: the changes, or what the broker would
 * refuse of them, each with the policy and where the file has it. The one validation of a file,
 * as `preview` validates one change: `plan`, `import` (the bot's and Slack's) and `lint FILE` refuse
 * a file by it, with the same sentences.
 */

const LAYER_WORDS: Readonly<Record<PolicyLayer, string>> = { user: 'policy', operator: 'operator policy' };

/** The broker's policies of the vhost, and the plugins it has enabled when known. */
export interface LivePolicies {
  readonly user: readonly Policy[];
  readonly operator: readonly Policy[];
  readonly plugins?: ReadonlySet<string> | undefined;
}

export interface FileChanges {
  readonly changes: Transition[];
  readonly unchanged: number;
  /** What the broker would refuse: any of these and nothing is planned. */
  readonly problems: string[];
  /** What may be refused, said beside the plan (a plugin's key where the plugins are not known). */
  readonly notes?: readonly string[];
}

export function changesOf(
  mine: readonly FilePolicy[],
  live: LivePolicies,
  version: BrokerVersion,
  vhost: string,
  prune: boolean,
): FileChanges {
  const changes: Transition[] = [];
  const problems: string[] = [];
  const notes: string[] = [];
  let unchanged = 0;
  const named = new Set<string>();
  for (const { layer, policy, at } of mine) {
    named.add(JSON.stringify([layer, policy.name]));
    const current =
      (layer === 'user' ? live.user : live.operator).find((p) => p.name === policy.name) ?? null;
    if (current && samePolicy(current, policy)) {
      unchanged++;
      continue;
    }
    const v = validate({
      action: actionOf({ before: current, after: policy }),
      layer,
      vhost,
      name: policy.name,
      fields: {
        pattern: policy.pattern,
        applyTo: policy.applyTo,
        priority: policy.priority,
        definition: policy.definition,
      },
      existing: live,
      version,
      ...(live.plugins ? { plugins: live.plugins } : {}),
    });
    const which = `The ${LAYER_WORDS[layer]} ${JSON.stringify(policy.name)} of vhost ${JSON.stringify(vhost)} (${at})`;
    for (const w of v.warnings) if (w.code === 'federation-plugin') notes.push(`${which}: ${w.message}`);
    if (!v.ok) {
      for (const r of v.refusals) problems.push(`${which}: ${r.message}`);
      continue;
    }
    changes.push({ layer, vhost, name: policy.name, before: current, after: v.proposed ?? policy });
  }
  if (prune) {
    for (const layer of ['user', 'operator'] as const) {
      for (const p of layer === 'user' ? live.user : live.operator) {
        if (!named.has(JSON.stringify([layer, p.name])))
          changes.push({ layer, vhost, name: p.name, before: p, after: null });
      }
    }
  }
  return { changes, unchanged, problems, ...(notes.length ? { notes } : {}) };
}
