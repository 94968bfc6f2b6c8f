// Over 400 lines: exports, manifests and folders of them share one set of limits and refusal sentences.
import { parseAllDocuments } from 'yaml';
import * as z from 'zod';
import {
  COMPONENT_WORDS,
  isParameterComponent,
  type Parameter,
  type ParameterComponent,
  type Policy,
  type PolicyLayer,
} from '../policy/index.ts';
import { quoted } from '../text/index.ts';
import { jsonErrorWords } from './jsonSyntax.ts';
import { fromManifestSpec, valueProblem } from './manifestParameters.ts';

/**
 * A definitions file read (docs/plan.md): the policies and operator policies of a broker's
 * export (JSON: whole broker or one vhost) or of the topology operator's `Policy` /
 * `OperatorPolicy` manifests (YAML), its federation upstreams, upstream sets and shovels
 * (`parameters`; the operator's `Federation` and `Shovel`: ./manifestParameters.ts), and a count of
 * everything else it holds. A folder is its files, each read on its own (a manifest without a
 * leading `---` does not run into the next file's), read as one set. Pure: text in, policies or
 * the one sentence that says what to fix out. What the broker would refuse of a policy (its
 * definition, pattern, apply-to for the broker's version) and whether a vhost exists need the
 * broker: the planner checks those (src/plan/).
 *
 * Measured on 3.10.8, 4.0.5 and 4.3.6 (test/integration/definitions-read.test.ts): the whole
 * export carries `vhost` on every policy and parameter; a one-vhost export carries it on 3.10
 * and not on 4.x (which writes `original_vhost_name`); operator policies are `parameters` with
 * `component: "operator_policy"`, their fields under `value`.
 */

/** Refused beyond this, before parsing (a folder: its files together). */
export const MAX_FILE_BYTES = 10 * 1024 * 1024;
export const MAX_POLICIES = 5000;
/**
 * Refused deeper than this: an export's definition values sit at depth 5, a manifest's in a
 * `List` at 6. Every reader after this one (zod, the checks, JSON.stringify) walks the values by
 * recursion, and a file nested thousands deep would overflow their stack.
 */
export const MAX_DEPTH = 64;

/** One policy of the file, with its layer and where it was in the file (for the sentences). */
export interface FilePolicy {
  readonly layer: PolicyLayer;
  readonly policy: Policy;
  /** e.g. `policies[3]`, `document 2`; in a folder, the file's name first. */
  readonly at: string;
}

/**
 * A federation upstream, upstream set or shovel of the file (the parameters that ask for links),
 * and where it was in the file: its value as the broker takes it, URIs with their passwords (shown
 * only masked); a manifest's without its URIs (`uriSecret`).
 */
export interface FileParameter extends Parameter {
  readonly at: string;
  /**
   * The topology operator's manifest keeps its URIs in this Kubernetes Secret, which a file does
   * not hold: the planner compares and writes it with the URIs the broker has, or does not plan it.
   */
  readonly uriSecret?: string;
}

/** A federation upstream (or upstream set) the file declares, which a policy of it may name. */
export interface DeclaredTarget {
  readonly key: 'federation-upstream' | 'federation-upstream-set';
  readonly vhost: string;
  readonly name: string;
}

/**
 * Why a vhost is compared, for the sentence that refuses one the broker does not have: a policy
 * names it, it is the export's `original_vhost_name`, it is `/` for the policies that name none,
 * `--vhost` gave it, or `--vhost-map FROM=TO` made the file's `from` into it.
 */
export type VhostOrigin =
  | { readonly by: 'file' | 'export' | 'default' | '--vhost' }
  | { readonly by: '--vhost-map'; readonly from: string };

export interface DefinitionsFile {
  readonly format: 'export' | 'operator-manifests' | 'folder';
  /** In the file's order; only those of the vhost asked for, when one is. */
  readonly policies: readonly FilePolicy[];
  /** The vhosts the file's policies name (or the one asked for), sorted. */
  readonly vhosts: readonly string[];
  /** Why each of `vhosts` is compared. */
  readonly origins: Readonly<Record<string, VhostOrigin>>;
  /** The federation upstreams and sets the file declares, of the vhosts compared. */
  readonly declared: readonly DeclaredTarget[];
  /** Its federation upstreams, upstream sets and shovels, of the vhosts compared, in the file's order. */
  readonly parameters: readonly FileParameter[];
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
  /** `--vhost-map FROM=TO`: the file's vhost FROM read as TO (a staging file against production). */
  readonly vhostMap?: ReadonlyMap<string, string> | undefined;
}

/** One file of a folder: its name as the sentences say it, and its bytes. */
export interface DefinitionsSource {
  readonly name: string;
  readonly bytes: string | Uint8Array;
}

const LAYER_WORDS: Readonly<Record<PolicyLayer, string>> = { user: 'policy', operator: 'operator policy' };

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

// --- the shapes, at the boundary -------------------------------------------------------------

/**
 * A JSON object of keys and values, kept as it was read. Not `z.record`: it copies the keys into a
 * new object, and assigning `__proto__` there sets the copy's prototype, so `{"__proto__": {…}}`
 * would vanish from a definition instead of being refused as the key no broker knows.
 */
export const definitionSchema = z.unknown().transform((v, ctx) => {
  if (isObject(v)) return v;
  ctx.addIssue({
    code: 'custom',
    message: `expected record, received ${v === undefined ? 'undefined' : typeof v}`,
  });
  return z.NEVER;
});

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

/**
 * The topology operator's spec (its CRDs' names; defaults: vhost `/`, priority 0, applyTo `all`
 * for a Policy and `queues` for an OperatorPolicy, `api/v1beta1/operatorpolicy_types.go`).
 */
const operatorSpecSchema = z.object({
  name: z.unknown().optional(),
  vhost: z.string().optional(),
  pattern: z.unknown().optional(),
  applyTo: z.string().optional(),
  priority: z.number().optional(),
  definition: definitionSchema,
});

/** The operator's OperatorPolicy takes only these (its CRD's enum): no `all`, no `exchanges`. */
const OPERATOR_POLICY_APPLY_TO = ['queues', 'classic_queues', 'quorum_queues', 'streams'] as const;

const manifestSchema = z.looseObject({ kind: z.string(), spec: z.unknown().optional() });

/** The first zod issue as words: which field, and what it should be (or that it is missing). */
function issueWords(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return 'it is not valid';
  const path = issue.path.map(String).join('.');
  const field = path === '' ? 'it' : `its ${path}`;
  if (issue.code === 'invalid_type' || issue.code === 'custom') {
    if (/received undefined$/.test(issue.message) && path !== '') return `it has no ${path}`;
    const expected = /expected (\w+)/.exec(issue.message)?.[1] ?? 'something else';
    return `${field} should be ${expected === 'record' || expected === 'object' ? 'an object' : `a ${expected}`}`;
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

/** A parameter as the file has it (vhost as written). */
interface RawParameter {
  readonly component: ParameterComponent;
  readonly at: string;
  readonly vhost: string | undefined;
  readonly name: unknown;
  readonly value: unknown;
  readonly uriSecret?: string;
}

/** What one file holds. */
interface Parsed {
  readonly raws: Raw[];
  readonly params: RawParameter[];
  readonly ignored: Record<string, number>;
  /** The export's `original_vhost_name`: the vhost of what names none. */
  readonly vhost?: string;
  readonly json: boolean;
}

class Refusal extends Error {}

const refuse = (sentence: string): never => {
  throw new Refusal(sentence);
};

function count(ignored: Record<string, number>, kind: string, n = 1): void {
  if (n > 0) ignored[kind] = (ignored[kind] ?? 0) + n;
}

/** `file`: "The file" (or "The file "a.json"" in a folder); `prefix`: what starts each place in it ("" or `"a.json" `). */
function fromExport(doc: unknown, file: string, prefix: string): Omit<Parsed, 'json'> {
  const top = exportSchema.safeParse(doc);
  if (!top.success) {
    return refuse(`${file} is JSON but not a definitions export: ${issueWords(top.error)}.`);
  }
  const ignored: Record<string, number> = {};
  const raws: Raw[] = [];
  const params: RawParameter[] = [];
  for (const [key, value] of Object.entries(top.data)) {
    if (key === 'policies' || key === 'parameters') continue;
    if (Array.isArray(value)) count(ignored, key, value.length);
  }
  (top.data.policies ?? []).forEach((entry, i) => {
    const at = `${prefix}policies[${i}]`;
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
    const at = `${prefix}parameters[${i}]`;
    const p = parameterSchema.safeParse(entry);
    if (!p.success) refuse(`The parameter at ${at} cannot be read: ${issueWords(p.error)}.`);
    const d = p.data as z.infer<typeof parameterSchema>;
    if (isParameterComponent(d.component)) {
      params.push({ component: d.component, at, vhost: d.vhost, name: d.name, value: d.value });
      return;
    }
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
  return {
    raws,
    params,
    ignored,
    ...(top.data.original_vhost_name ? { vhost: top.data.original_vhost_name } : {}),
  };
}

/** The operator's Policy or OperatorPolicy at `at`, its defaults given (the CRD's). */
function fromSpec(kind: 'Policy' | 'OperatorPolicy', spec: unknown, at: string): Raw {
  if (!isObject(spec) || Object.keys(spec).length === 0) {
    return refuse(
      `The ${kind} at ${at} has an empty spec: a ${kind} needs its name, pattern and definition under spec (and may give vhost, applyTo and priority).`,
    );
  }
  const s = operatorSpecSchema.safeParse(spec);
  if (!s.success) refuse(`The ${kind} at ${at} cannot be read: ${issueWords(s.error)} (under spec).`);
  const d = s.data as z.infer<typeof operatorSpecSchema>;
  const operator = kind === 'OperatorPolicy';
  if (
    operator &&
    d.applyTo !== undefined &&
    !(OPERATOR_POLICY_APPLY_TO as readonly string[]).includes(d.applyTo)
  ) {
    refuse(
      `The OperatorPolicy at ${at} has applyTo ${quoted(d.applyTo)}: the topology operator takes ${OPERATOR_POLICY_APPLY_TO.join(', ')} for an OperatorPolicy (queues when left out), not all or exchanges, as operator policies govern queues only.`,
    );
  }
  return {
    layer: operator ? 'operator' : 'user',
    at,
    vhost: d.vhost ?? '/',
    name: d.name,
    pattern: d.pattern,
    applyTo: d.applyTo ?? (operator ? 'queues' : 'all'),
    priority: d.priority ?? 0,
    definition: d.definition,
  };
}

/** A Kubernetes `List` holds its manifests under `items`. */
function fromManifests(docs: readonly unknown[], prefix: string): Omit<Parsed, 'json'> {
  const ignored: Record<string, number> = {};
  const raws: Raw[] = [];
  const params: RawParameter[] = [];
  const one = (doc: unknown, at: string): void => {
    if (doc === null || doc === undefined) return;
    const m = manifestSchema.safeParse(doc);
    if (!m.success) {
      refuse(
        `The YAML ${at} is not a manifest of the topology operator (kind: Policy, OperatorPolicy, Federation or Shovel): ${issueWords(m.error)}.`,
      );
    }
    const { kind, spec } = m.data as z.infer<typeof manifestSchema>;
    if (kind === 'List' && Array.isArray((doc as { items?: unknown }).items)) {
      for (const [i, item] of (doc as { items: unknown[] }).items.entries())
        one(item, `${at}, item ${i + 1}`);
      return;
    }
    if (kind === 'Policy' || kind === 'OperatorPolicy') {
      raws.push(fromSpec(kind, spec, at));
      return;
    }
    if (kind === 'Federation' || kind === 'Shovel') {
      const p = fromManifestSpec(kind, spec, at);
      if (typeof p === 'string') refuse(`${p}.`);
      else params.push(p);
      return;
    }
    count(ignored, kind);
  };
  for (const [i, doc] of docs.entries()) one(doc, `${prefix}document ${i + 1}`);
  return { raws, params, ignored };
}

/** `empty`: what a file without a document is (in a folder, one file of comments is nothing). */
function parse(text: string, file: string, prefix: string, empty: 'refused' | 'nothing'): Parsed {
  if (/^\s*[[{]/.test(text)) {
    let doc: unknown;
    try {
      doc = JSON.parse(text);
    } catch (err) {
      return refuse(
        `${file} is not valid JSON: ${jsonErrorWords(text, err as Error)}. Export it again, or fix it there.`,
      );
    }
    tooDeep(doc, file);
    return { ...fromExport(doc, file, prefix), json: true };
  }
  const docs = parseAllDocuments(text);
  const list = Array.isArray(docs) ? docs : [docs];
  for (const [i, d] of list.entries()) {
    const error = d.errors[0];
    if (error) {
      // The YAML parser reads nesting by recursion and reports running out of stack as its error.
      if (/Maximum call stack size exceeded/.test(error.message))
        return refuse(nestedWords(file, `in document ${i + 1}`));
      return refuse(
        `${file} is neither JSON nor valid YAML (document ${i + 1}: ${error.message.split('\n')[0]}). Give a definitions export or the topology operator's Policy manifests.`,
      );
    }
  }
  const values = list.map((d, i) => {
    try {
      return d.toJS({ maxAliasCount: 100 }) as unknown;
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      return refuse(
        /alias/i.test(why)
          ? `${file}'s YAML document ${i + 1} expands its aliases (*name) into more than the bot reads (a YAML "billion laughs"): write the values out, or use fewer aliases.`
          : `${file}'s YAML document ${i + 1} cannot be read: ${why}.`,
      );
    }
  });
  for (const v of values) tooDeep(v, file);
  if (values.every((v) => v === null || v === undefined)) {
    if (empty === 'nothing') return { raws: [], params: [], ignored: {}, json: false };
    return refuse(`${file} is empty. Give a definitions export or the topology operator’s Policy manifests.`);
  }
  return { ...fromManifests(values, prefix), json: false };
}

const nestedWords = (file: string, where: string) =>
  `${file} is nested more than ${MAX_DEPTH} levels deep (${where}): no definitions export or manifest is; is it the right file?`;

/** Refuses a value nested deeper than MAX_DEPTH, saying under which of its top fields. Walked without recursion. */
function tooDeep(value: unknown, file: string): void {
  const stack: { value: unknown; depth: number; where: string }[] = [{ value, depth: 0, where: '' }];
  for (let top = stack.pop(); top !== undefined; top = stack.pop()) {
    if (typeof top.value !== 'object' || top.value === null) continue;
    const depth = top.depth + 1;
    if (depth > MAX_DEPTH) refuse(nestedWords(file, top.where ? `under ${top.where}` : 'from its top'));
    const node = top.value as Record<string, unknown>;
    const list = Array.isArray(node);
    for (const key in node) {
      const child = node[key];
      if (typeof child !== 'object' || child === null) continue;
      // The first two steps name the place (`policies[3]`); below that, the same place.
      const where =
        depth > 2 ? top.where : `${top.where}${list ? `[${key}]` : `${top.where ? '.' : ''}${key}`}`;
      stack.push({ value: child, depth, where });
    }
  }
}

/** The vhost a policy (or an upstream) of the file is compared in, and why. */
function placed(
  written: string | undefined,
  exported: string | undefined,
  options: ReadOptions,
): { vhost: string; origin: VhostOrigin; named: string | undefined } {
  if (written === undefined && options.vhost !== undefined)
    return { vhost: options.vhost, origin: { by: '--vhost' }, named: undefined };
  const named = written ?? exported ?? '/';
  const to = options.vhostMap?.get(named);
  if (to !== undefined) return { vhost: to, origin: { by: '--vhost-map', from: named }, named };
  return {
    vhost: named,
    origin: { by: written !== undefined ? 'file' : exported !== undefined ? 'export' : 'default' },
    named,
  };
}

const byteLength = (b: string | Uint8Array) =>
  typeof b === 'string' ? Buffer.byteLength(b, 'utf8') : b.byteLength;
const textOf = (b: string | Uint8Array) =>
  (typeof b === 'string' ? b : Buffer.from(b).toString('utf8')).replace(/^\uFEFF/, '');

/** Reads the file; refused whole, with the sentence that says what to fix, at the first thing wrong. */
export function readDefinitions(input: string | Uint8Array, options: ReadOptions = {}): ReadDefinitions {
  const bytes = byteLength(input);
  if (bytes > MAX_FILE_BYTES) {
    return {
      ok: false,
      problem: `The file is ${(bytes / 1024 / 1024).toFixed(1)} MB, over the 10 MB the bot reads: give it only the vhosts to compare (one vhost's export: GET /api/definitions/VHOST).`,
    };
  }
  return readAll([{ text: textOf(input), file: 'The file', prefix: '' }], options, undefined);
}

/**
 * Reads a folder's files (`name`: as the sentences say it), each on its own, as one set: the same
 * policy in two files is the same policy twice. Refused whole when one of them is.
 */
export function readDefinitionsFolder(
  folder: string,
  sources: readonly DefinitionsSource[],
  options: ReadOptions = {},
): ReadDefinitions {
  if (sources.length === 0) {
    return {
      ok: false,
      problem: `The folder ${quoted(folder)} holds no .json, .yaml or .yml file: give the folder of the definitions, or a file.`,
    };
  }
  const bytes = sources.reduce((n, s) => n + byteLength(s.bytes), 0);
  if (bytes > MAX_FILE_BYTES) {
    return {
      ok: false,
      problem: `The files of ${quoted(folder)} are ${(bytes / 1024 / 1024).toFixed(1)} MB together, over the 10 MB the bot reads at once: plan them in parts.`,
    };
  }
  return readAll(
    sources.map((s) => ({
      text: textOf(s.bytes),
      file: `The file ${quoted(s.name)}`,
      prefix: `${quoted(s.name)} `,
    })),
    options,
    folder,
  );
}

function readAll(
  files: readonly { text: string; file: string; prefix: string }[],
  options: ReadOptions,
  folder: string | undefined,
): ReadDefinitions {
  try {
    // Each with its file's original_vhost_name: the vhost of what names none.
    const raws: (Raw & { exported: string | undefined })[] = [];
    const params: (RawParameter & { exported: string | undefined })[] = [];
    const ignored: Record<string, number> = {};
    let json = false;
    for (const f of files) {
      const parsed = parse(f.text, f.file, f.prefix, folder === undefined ? 'refused' : 'nothing');
      json ||= parsed.json;
      for (const r of parsed.raws) raws.push({ ...r, exported: parsed.vhost });
      for (const p of parsed.params) params.push({ ...p, exported: parsed.vhost });
      for (const [kind, n] of Object.entries(parsed.ignored)) count(ignored, kind, n);
    }
    if (raws.length > MAX_POLICIES) {
      refuse(
        `The ${folder === undefined ? 'file holds' : 'folder holds'} ${raws.length} policies, over the ${MAX_POLICIES} the bot plans at once: split it by vhost.`,
      );
    }
    const named = new Set<string>();
    const origins: Record<string, VhostOrigin> = {};
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
      const where = placed(r.vhost, r.exported, options);
      if (where.named !== undefined) named.add(where.named);
      const vhost = where.vhost;
      if (options.vhost !== undefined && vhost !== options.vhost) {
        count(ignored, r.layer === 'user' ? 'policies of other vhosts' : 'operator policies of other vhosts');
        continue;
      }
      origins[vhost] ??= where.origin;
      const key = JSON.stringify([r.layer, vhost, name]);
      const first = seen.get(key);
      if (first !== undefined) {
        refuse(
          `The ${words} ${JSON.stringify(name)} of vhost ${JSON.stringify(vhost)} is in the ${folder === undefined ? 'file' : 'folder'} twice (${first} and ${r.at}): keep one.`,
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
    const parameters: FileParameter[] = [];
    const seenParameters = new Map<string, string>();
    for (const p of params) {
      const words = COMPONENT_WORDS[p.component];
      if (typeof p.name !== 'string' || p.name === '')
        refuse(`The ${words} at ${p.at} has no name: give it one.`);
      const name = p.name as string;
      const where = placed(p.vhost, p.exported, options);
      if (where.named !== undefined) named.add(where.named);
      if (options.vhost !== undefined && where.vhost !== options.vhost) {
        count(ignored, `parameters (${p.component}) of other vhosts`);
        continue;
      }
      origins[where.vhost] ??= where.origin;
      const key = JSON.stringify([p.component, where.vhost, name]);
      const first = seenParameters.get(key);
      if (first !== undefined) {
        refuse(
          `The ${words} ${JSON.stringify(name)} of vhost ${JSON.stringify(where.vhost)} is in the ${folder === undefined ? 'file' : 'folder'} twice (${first} and ${p.at}): keep one.`,
        );
      }
      seenParameters.set(key, p.at);
      const problem = valueProblem(p.component, p.value);
      if (problem) refuse(`The ${words} ${JSON.stringify(name)} (${p.at}) ${problem}.`);
      parameters.push({
        component: p.component,
        vhost: where.vhost,
        name,
        value: p.value,
        at: p.at,
        ...(p.uriSecret !== undefined ? { uriSecret: p.uriSecret } : {}),
      });
    }
    const declared: DeclaredTarget[] = parameters.flatMap((p) =>
      p.component === 'shovel' ? [] : [{ key: p.component, vhost: p.vhost, name: p.name }],
    );
    for (const from of options.vhostMap?.keys() ?? []) {
      if (!named.has(from)) {
        const names = [...named].sort().map(quoted).join(', ');
        refuse(
          `--vhost-map ${from}=${options.vhostMap?.get(from)}: the ${folder === undefined ? 'file' : 'folder'} names no vhost ${quoted(from)}${names ? ` (it names ${names})` : ''}.`,
        );
      }
    }
    if (options.vhost !== undefined) origins[options.vhost] = { by: '--vhost' };
    const vhosts = [
      ...new Set([
        ...policies.map((p) => p.policy.vhost),
        ...parameters.map((p) => p.vhost),
        ...(options.vhost ? [options.vhost] : []),
      ]),
    ];
    return {
      ok: true,
      file: {
        format: folder !== undefined ? 'folder' : json ? 'export' : 'operator-manifests',
        policies,
        vhosts: vhosts.sort(),
        origins,
        declared,
        parameters,
        ignored,
      },
    };
  } catch (err) {
    if (err instanceof Refusal) return { ok: false, problem: err.message };
    throw err;
  }
}

/**
 * The sentence refusing a vhost of the file the broker does not have (`missing`: the broker's
 * side of it, src/core/vhosts.ts), saying where the vhost came from and what to give instead.
 */
export function missingVhostWords(file: DefinitionsFile, vhost: string, missing: string): string {
  const origin = file.origins[vhost] ?? { by: 'file' };
  const said = /[?.]$/.test(missing) ? missing : `${missing}.`;
  const v = quoted(vhost);
  switch (origin.by) {
    case '--vhost':
      return `--vhost ${v}: ${said} Give --vhost a vhost the broker has, or leave it out to take every vhost the file names; --vhost-map FROM=TO reads the file's vhost FROM as another.`;
    case '--vhost-map':
      return `--vhost-map ${origin.from}=${vhost}: ${said} Give --vhost-map a vhost the broker has after the =.`;
    case 'export':
      return `The file is an export of vhost ${v} (its original_vhost_name): ${said} Create it first, or read the file as another vhost's with --vhost VHOST (or --vhost-map ${vhost}=VHOST).`;
    case 'default':
      return `The file's policies that name no vhost are vhost ${v}'s: ${said} Give them one with --vhost VHOST (or --vhost-map /=VHOST).`;
    case 'file':
      return `The file names vhost ${v}: ${said} Create it first, read its policies as another vhost's with --vhost-map ${vhost}=VHOST, or leave them out.`;
  }
}

/** Federation upstreams and sets as the broker lists them: `null` when they could not be read. */
export interface FederationNames {
  readonly upstreams: ReadonlySet<string> | null;
  readonly upstreamSets: ReadonlySet<string> | null;
}

/**
 * `names` with the upstreams and sets the file declares in `vhost` added: they are there once the
 * file is applied whole, so a policy of it naming one is not missing its target. What was not
 * read stays unknown.
 */
export function withDeclared<T extends FederationNames>(file: DefinitionsFile, vhost: string, names: T): T {
  const mine = file.declared.filter((d) => d.vhost === vhost);
  if (mine.length === 0) return names;
  const add = (read: ReadonlySet<string> | null, key: DeclaredTarget['key']) => {
    const more = mine.filter((d) => d.key === key).map((d) => d.name);
    return read === null || more.length === 0 ? read : new Set([...read, ...more]);
  };
  return {
    ...names,
    upstreams: add(names.upstreams, 'federation-upstream'),
    upstreamSets: add(names.upstreamSets, 'federation-upstream-set'),
  };
}
