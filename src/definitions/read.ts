import { parseAllDocuments } from 'yaml';
import { z } from 'zod';
import type { Policy, PolicyLayer } from '../policy/types.ts';

/**
 * A definitions file read (INTERFACE.md §2a): the policies and operator policies of a broker's
 * export (JSON: whole broker or one vhost) or of the topology operator's `Policy` /
 * `OperatorPolicy` manifests (YAML), and a count of everything else it holds. Pure: text in,
 * policies or the one sentence that says what to fix out. What the broker would refuse of a
 * policy (its definition, pattern, apply-to for the broker's version) and whether a vhost exists
 * need the broker: the planner checks those (src/plan/).
 *
 * Measured on 3.10.8, 4.0.5 and 4.3.6 (test/integration/definitions-read.test.ts): the whole
 * export carries `vhost` on every policy and parameter; a one-vhost export carries it on 3.10
 * and not on 4.x (which writes `original_vhost_name`); operator policies are `parameters` with
 * `component: "operator_policy"`, their fields under `value`.
 */

/** Refused beyond this, before parsing. */
export const MAX_FILE_BYTES = 10 * 1024 * 1024;
export const MAX_POLICIES = 5000;

/** One policy of the file, with its layer and where it was in the file (for the sentences). */
export interface FilePolicy {
  readonly layer: PolicyLayer;
  readonly policy: Policy;
  /** e.g. `policies[3]`, `document 2`. */
  readonly at: string;
}

export interface DefinitionsFile {
  readonly format: 'export' | 'operator-manifests';
  /** In the file's order; only those of the vhost asked for, when one is. */
  readonly policies: readonly FilePolicy[];
  /** The vhosts the file's policies name (or the one asked for), sorted. */
  readonly vhosts: readonly string[];
  /** What the file holds that the bot does not manage, by kind. */
  readonly ignored: Readonly<Record<string, number>>;
}

export type ReadDefinitions =
  | { readonly ok: true; readonly file: DefinitionsFile }
  | { readonly ok: false; readonly problem: string };

export interface ReadOptions {
  /**
   * The vhost given with `--vhost`: it names the policies that carry none (a one-vhost export
   * from 4.x), and only its policies are compared. Without it, a policy without a vhost is the
   * export's `original_vhost_name`'s, else `/` (the topology operator's default).
   */
  readonly vhost?: string | undefined;
}

const LAYER_WORDS: Readonly<Record<PolicyLayer, string>> = { user: 'policy', operator: 'operator policy' };

// --- the shapes, at the boundary -------------------------------------------------------------

const definitionSchema = z.record(z.string(), z.unknown());

/** A policy's fields as an export writes them (`apply-to`); name and pattern checked apart, to say which is missing. */
const exportPolicySchema = z.object({
  vhost: z.string().optional(),
  name: z.unknown().optional(),
  pattern: z.unknown().optional(),
  'apply-to': z.string().optional(),
  priority: z.number().optional(),
  definition: definitionSchema,
});

const parameterSchema = z.object({
  component: z.string(),
  vhost: z.string().optional(),
  name: z.unknown().optional(),
  value: z.unknown().optional(),
});

const exportSchema = z.looseObject({
  policies: z.array(z.unknown()).optional(),
  parameters: z.array(z.unknown()).optional(),
  original_vhost_name: z.string().optional(),
});

/** The topology operator's spec (its CRD's names; defaults: vhost `/`, applyTo `all`, priority 0). */
const operatorSpecSchema = z.object({
  name: z.unknown().optional(),
  vhost: z.string().optional(),
  pattern: z.unknown().optional(),
  applyTo: z.string().optional(),
  priority: z.number().optional(),
  definition: definitionSchema,
});

const manifestSchema = z.looseObject({ kind: z.string(), spec: z.unknown().optional() });

/** The first zod issue as words: which field, and what it should be. */
function issueWords(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return 'it is not valid';
  const path = issue.path.map(String).join('.');
  const field = path === '' ? 'it' : `its ${path}`;
  if (issue.code === 'invalid_type') {
    return `${field} should be ${issue.expected === 'record' ? 'an object' : `a ${issue.expected}`}`;
  }
  return `${field}: ${issue.message}`;
}

interface Raw {
  readonly layer: PolicyLayer;
  readonly at: string;
  readonly vhost: string | undefined;
  readonly name: unknown;
  readonly pattern: unknown;
  readonly applyTo: string | undefined;
  readonly priority: number | undefined;
  readonly definition: Record<string, unknown>;
}

class Refusal extends Error {}

const refuse = (sentence: string): never => {
  throw new Refusal(sentence);
};

function count(ignored: Record<string, number>, kind: string, n = 1): void {
  if (n > 0) ignored[kind] = (ignored[kind] ?? 0) + n;
}

function fromExport(doc: unknown): { raws: Raw[]; ignored: Record<string, number>; vhost?: string } {
  const top = exportSchema.safeParse(doc);
  if (!top.success) {
    return refuse(`The file is JSON but not a definitions export: ${issueWords(top.error)}.`);
  }
  const ignored: Record<string, number> = {};
  const raws: Raw[] = [];
  for (const [key, value] of Object.entries(top.data)) {
    if (key === 'policies' || key === 'parameters') continue;
    if (Array.isArray(value)) count(ignored, key, value.length);
  }
  (top.data.policies ?? []).forEach((entry, i) => {
    const at = `policies[${i}]`;
    const p = exportPolicySchema.safeParse(entry);
    if (!p.success) refuse(`The policy at ${at} cannot be read: ${issueWords(p.error)}.`);
    const d = p.data as z.infer<typeof exportPolicySchema>;
    raws.push({
      layer: 'user',
      at,
      vhost: d.vhost,
      name: d.name,
      pattern: d.pattern,
      applyTo: d['apply-to'],
      priority: d.priority,
      definition: d.definition,
    });
  });
  (top.data.parameters ?? []).forEach((entry, i) => {
    const at = `parameters[${i}]`;
    const p = parameterSchema.safeParse(entry);
    if (!p.success) refuse(`The parameter at ${at} cannot be read: ${issueWords(p.error)}.`);
    const d = p.data as z.infer<typeof parameterSchema>;
    if (d.component !== 'operator_policy') {
      count(ignored, `parameters (${d.component})`);
      return;
    }
    const v = exportPolicySchema.omit({ vhost: true, name: true }).safeParse(d.value);
    if (!v.success)
      refuse(`The operator policy at ${at} cannot be read: ${issueWords(v.error)} (under value).`);
    const value = v.data as Omit<z.infer<typeof exportPolicySchema>, 'vhost' | 'name'>;
    raws.push({
      layer: 'operator',
      at,
      vhost: d.vhost,
      name: d.name,
      pattern: value.pattern,
      applyTo: value['apply-to'],
      priority: value.priority,
      definition: value.definition,
    });
  });
  return { raws, ignored, ...(top.data.original_vhost_name ? { vhost: top.data.original_vhost_name } : {}) };
}

/** A Kubernetes `List` holds its manifests under `items`. */
function fromManifests(docs: readonly unknown[]): { raws: Raw[]; ignored: Record<string, number> } {
  const ignored: Record<string, number> = {};
  const raws: Raw[] = [];
  const one = (doc: unknown, at: string): void => {
    if (doc === null || doc === undefined) return;
    const m = manifestSchema.safeParse(doc);
    if (!m.success) {
      refuse(
        `The YAML ${at} is not a manifest of the topology operator (kind: Policy or OperatorPolicy): ${issueWords(m.error)}.`,
      );
    }
    const { kind, spec } = m.data as z.infer<typeof manifestSchema>;
    if (kind === 'List' && Array.isArray((doc as { items?: unknown }).items)) {
      for (const [i, item] of (doc as { items: unknown[] }).items.entries())
        one(item, `${at}, item ${i + 1}`);
      return;
    }
    if (kind !== 'Policy' && kind !== 'OperatorPolicy') {
      count(ignored, kind);
      return;
    }
    const s = operatorSpecSchema.safeParse(spec);
    if (!s.success) refuse(`The ${kind} at ${at} cannot be read: ${issueWords(s.error)} (under spec).`);
    const d = s.data as z.infer<typeof operatorSpecSchema>;
    raws.push({
      layer: kind === 'Policy' ? 'user' : 'operator',
      at,
      vhost: d.vhost ?? '/',
      name: d.name,
      pattern: d.pattern,
      applyTo: d.applyTo ?? 'all',
      priority: d.priority ?? 0,
      definition: d.definition,
    });
  };
  for (const [i, doc] of docs.entries()) one(doc, `document ${i + 1}`);
  return { raws, ignored };
}

function parse(text: string): {
  raws: Raw[];
  ignored: Record<string, number>;
  vhost?: string;
  json: boolean;
} {
  if (/^\s*[[{]/.test(text)) {
    let doc: unknown;
    try {
      doc = JSON.parse(text);
    } catch (err) {
      return refuse(
        `The file is not valid JSON: ${(err as Error).message}. Export it again, or fix it there.`,
      );
    }
    return { ...fromExport(doc), json: true };
  }
  const docs = parseAllDocuments(text);
  const list = Array.isArray(docs) ? docs : [docs];
  for (const [i, d] of list.entries()) {
    const error = d.errors[0];
    if (error) {
      return refuse(
        `The file is neither JSON nor valid YAML (document ${i + 1}: ${error.message.split('\n')[0]}). Give a definitions export or the topology operator's Policy manifests.`,
      );
    }
  }
  const values = list.map((d) => d.toJS({ maxAliasCount: 100 }) as unknown);
  if (values.every((v) => v === null || v === undefined)) {
    return refuse(
      'The file is empty. Give a definitions export or the topology operator’s Policy manifests.',
    );
  }
  return { ...fromManifests(values), json: false };
}

/** Reads the file; refused whole, with the sentence that says what to fix, at the first thing wrong. */
export function readDefinitions(input: string | Uint8Array, options: ReadOptions = {}): ReadDefinitions {
  const bytes = typeof input === 'string' ? Buffer.byteLength(input, 'utf8') : input.byteLength;
  if (bytes > MAX_FILE_BYTES) {
    return {
      ok: false,
      problem: `The file is ${(bytes / 1024 / 1024).toFixed(1)} MB, over the 10 MB the bot reads: give it only the vhosts to compare (one vhost's export: GET /api/definitions/VHOST).`,
    };
  }
  const text = typeof input === 'string' ? input : Buffer.from(input).toString('utf8');
  try {
    const { raws, ignored, vhost: exported, json } = parse(text);
    if (raws.length > MAX_POLICIES) {
      refuse(
        `The file holds ${raws.length} policies, over the ${MAX_POLICIES} the bot plans at once: split it by vhost.`,
      );
    }
    const fallback = options.vhost ?? exported ?? '/';
    const seen = new Map<string, string>();
    const policies: FilePolicy[] = [];
    for (const r of raws) {
      const words = LAYER_WORDS[r.layer];
      if (typeof r.name !== 'string' || r.name === '') {
        refuse(`The ${words} at ${r.at} has no name: give it one.`);
      }
      const name = r.name as string;
      if (typeof r.pattern !== 'string') {
        refuse(
          `The ${words} ${JSON.stringify(name)} (${r.at}) has no pattern: give it one (a regular expression).`,
        );
      }
      const vhost = r.vhost ?? fallback;
      if (options.vhost !== undefined && vhost !== options.vhost) {
        count(ignored, r.layer === 'user' ? 'policies of other vhosts' : 'operator policies of other vhosts');
        continue;
      }
      const key = JSON.stringify([r.layer, vhost, name]);
      const first = seen.get(key);
      if (first !== undefined) {
        refuse(
          `The ${words} ${JSON.stringify(name)} of vhost ${JSON.stringify(vhost)} is in the file twice (${first} and ${r.at}): keep one.`,
        );
      }
      seen.set(key, r.at);
      policies.push({
        layer: r.layer,
        at: r.at,
        policy: {
          vhost,
          name,
          pattern: r.pattern as string,
          applyTo: r.applyTo ?? 'all',
          priority: r.priority ?? 0,
          definition: r.definition,
        },
      });
    }
    const vhosts = [
      ...new Set([...policies.map((p) => p.policy.vhost), ...(options.vhost ? [options.vhost] : [])]),
    ];
    return {
      ok: true,
      file: {
        format: json ? 'export' : 'operator-manifests',
        policies,
        vhosts: vhosts.sort(),
        ignored,
      },
    };
  } catch (err) {
    if (err instanceof Refusal) return { ok: false, problem: err.message };
    throw err;
  }
}
