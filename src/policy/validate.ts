import {
  acceptedApplyTo,
  isKnownKey,
  KEYS,
  keySpec,
  MIRRORING_KEYS,
  operatorMaySet,
  scopeFits,
  type ValueRule,
  vetoedKeys,
} from './keys.ts';
import { compilePattern, isAnchored, MAX_PATTERN_BYTES } from './pattern.ts';
import type { ChangeAction } from './simulate.ts';
import {
  atLeast,
  type BrokerVersion,
  formatVersion,
  OBJECT_KINDS,
  type ObjectKind,
  type Policy,
  type PolicyLayer,
} from './types.ts';

/**
 * What is wrong with a proposed policy, said before anything is filed: the broker's own checks
 * (reference section 4 and 7, for the broker's version) plus the bot's rules about names and
 * layers. The broker reports only its first failing check; this reports all of them, each with
 * the field or key it is about. Pure.
 */

export type ProblemCode =
  | 'name-empty'
  | 'name-taken'
  | 'no-such-policy'
  | 'wrong-layer'
  | 'nothing-to-change'
  | 'definition-not-object'
  | 'definition-empty'
  | 'unknown-key'
  | 'bad-value'
  | 'negative-limit'
  | 'apply-to-unsupported'
  | 'priority-not-number'
  | 'mirroring-removed'
  | 'mirroring-deprecated'
  | 'mirroring-incomplete'
  | 'operator-key'
  | 'federation-conflict'
  | 'federation-plugin'
  | 'pattern-invalid'
  | 'pattern-too-long'
  | 'pattern-unreadable'
  | 'pattern-unanchored'
  | 'vetoed-everywhere'
  | 'deprecated-key'
  | 'same-name-other-layer';

export interface Problem {
  readonly code: ProblemCode;
  readonly message: string;
  readonly field?: 'name' | 'pattern' | 'apply-to' | 'priority' | 'definition';
  readonly key?: string;
}

export interface ProposedFields {
  readonly pattern: unknown;
  readonly applyTo: unknown;
  readonly priority: unknown;
  readonly definition: unknown;
}

export interface ValidationInput {
  readonly action: ChangeAction;
  readonly layer: PolicyLayer;
  readonly vhost: string;
  readonly name: string;
  /** create: every field; edit: only the fields given (the rest keep their value); delete: none. */
  readonly fields: Partial<ProposedFields>;
  readonly existing: { readonly user: readonly Policy[]; readonly operator: readonly Policy[] };
  readonly version: BrokerVersion;
  /** Enabled plugins, when known (federation keys exist only with the federation plugin). */
  readonly plugins?: ReadonlySet<string>;
}

export interface Validation {
  readonly ok: boolean;
  /** Any of these and nothing is filed. */
  readonly refusals: Problem[];
  /** Filed all the same; said beside the preview. */
  readonly warnings: Problem[];
  /** The policy as it stands now (edit, delete). */
  readonly current: Policy | null;
  /** The policy as it would be (create, edit), when the fields are well-formed. */
  readonly proposed: Policy | null;
}

const LAYER_WORDS: Readonly<Record<PolicyLayer, string>> = { user: 'policy', operator: 'operator policy' };

function describe(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v);
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'an object';
  return String(v);
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function validate(input: ValidationInput): Validation {
  const refusals: Problem[] = [];
  const warnings: Problem[] = [];
  const refuse = (p: Problem) => refusals.push(p);
  const warn = (p: Problem) => warnings.push(p);
  const { action, layer, name, version } = input;
  const words = LAYER_WORDS[layer];
  const mine = layer === 'user' ? input.existing.user : input.existing.operator;
  const theirs = layer === 'user' ? input.existing.operator : input.existing.user;
  const current = mine.find((p) => p.name === name) ?? null;
  const inOther = theirs.find((p) => p.name === name);

  if (name === '') refuse({ code: 'name-empty', field: 'name', message: `A ${words} needs a name.` });
  if (action === 'create' && current) {
    refuse({
      code: 'name-taken',
      field: 'name',
      message: `A ${words} named ${JSON.stringify(name)} already exists in vhost ${JSON.stringify(input.vhost)}; use edit to change it, or pick another name.`,
    });
  }
  if (action === 'create' && !current && inOther) {
    warn({
      code: 'same-name-other-layer',
      field: 'name',
      message: `An ${layer === 'user' ? 'operator policy' : 'ordinary policy'} is also named ${JSON.stringify(name)}; the two are separate.`,
    });
  }
  if ((action === 'edit' || action === 'delete') && !current && name !== '') {
    refuse(
      inOther
        ? {
            code: 'wrong-layer',
            field: 'name',
            message:
              layer === 'operator'
                ? `${JSON.stringify(name)} is a policy, not an operator policy. A policy cannot move between the two: ${action === 'edit' ? 'delete it and create an operator policy instead' : 'leave out --operator to delete it'}.`
                : `${JSON.stringify(name)} is an operator policy. A policy cannot move between the two: ${action === 'edit' ? 'delete it and create a policy instead' : 'add --operator to delete it'}.`,
          }
        : {
            code: 'no-such-policy',
            field: 'name',
            message: `No ${words} named ${JSON.stringify(name)} in vhost ${JSON.stringify(input.vhost)}.`,
          },
    );
  }
  if (action === 'delete' || (action === 'edit' && !current)) {
    return { ok: refusals.length === 0, refusals, warnings, current, proposed: null };
  }

  const f = input.fields;
  if (
    action === 'edit' &&
    f.pattern === undefined &&
    f.applyTo === undefined &&
    f.priority === undefined &&
    f.definition === undefined
  ) {
    refuse({
      code: 'nothing-to-change',
      message: 'An edit needs at least one of --pattern, --apply-to, --priority or --definition.',
    });
  }
  // An edit keeps what it does not name; a create takes the broker's defaults (apply-to all, priority 0).
  const pattern = f.pattern ?? current?.pattern;
  const applyTo = f.applyTo ?? current?.applyTo ?? 'all';
  const priority = f.priority ?? current?.priority ?? 0;
  const definition = f.definition ?? current?.definition;

  if (typeof pattern !== 'string') {
    refuse({
      code: 'pattern-invalid',
      field: 'pattern',
      message: `The pattern must be text, got ${describe(pattern)}.`,
    });
  } else {
    checkPattern(pattern, version, refuse, warn);
  }

  if (typeof applyTo !== 'string' || !(acceptedApplyTo(version) as readonly string[]).includes(applyTo)) {
    const accepted = acceptedApplyTo(version);
    refuse({
      code: 'apply-to-unsupported',
      field: 'apply-to',
      message: `apply-to ${describe(applyTo)} is not accepted by RabbitMQ ${formatVersion(version)}; it takes ${accepted.join(', ')}${atLeast(version, 3, 12) ? '' : ' (classic_queues, quorum_queues and streams arrived in 3.12)'}.`,
    });
  }

  if (typeof priority !== 'number' || !Number.isFinite(priority)) {
    refuse({
      code: 'priority-not-number',
      field: 'priority',
      message: `The priority must be a number, got ${describe(priority)}.`,
    });
  } else if (Math.abs(priority) > Number.MAX_SAFE_INTEGER) {
    // Past 2^53 a typed number is already rounded: what would be stored is not what was typed.
    refuse({
      code: 'priority-not-number',
      field: 'priority',
      message: `The priority ${describe(priority)} is beyond ${Number.MAX_SAFE_INTEGER}, past which numbers are rounded; use a smaller one.`,
    });
  }

  let cleanDefinition: Record<string, unknown> | null = null;
  if (!isPlainObject(definition)) {
    refuse({
      code: 'definition-not-object',
      field: 'definition',
      message: `The definition must be a JSON object of keys and values, got ${describe(definition)}.`,
    });
  } else if (Object.keys(definition).length === 0) {
    refuse({
      code: 'definition-empty',
      field: 'definition',
      message: 'The definition sets no key: the broker refuses an empty policy.',
    });
  } else {
    cleanDefinition = definition;
    checkDefinition(definition, layer, version, input.plugins, refuse, warn);
    if (typeof applyTo === 'string') checkScope(definition, applyTo, version, warn);
  }

  const ok = refusals.length === 0;
  const proposed =
    ok &&
    typeof pattern === 'string' &&
    typeof applyTo === 'string' &&
    typeof priority === 'number' &&
    cleanDefinition
      ? { vhost: input.vhost, name, pattern, applyTo, priority, definition: cleanDefinition }
      : null;
  return { ok, refusals, warnings, current, proposed };
}

// --- definition -------------------------------------------------------------------------------

function checkDefinition(
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
    if (MIRRORING_KEYS.has(key) && atLeast(version, 4)) continue;
    const spec = keySpec(key);
    const plugin = spec?.plugin;
    const known =
      plugin !== undefined && plugins === undefined
        ? spec !== undefined
        : isKnownKey(key, version, plugins ?? new Set());
    if (!spec || !known) {
      const hint = closestKey(key, version);
      refuse({
        code: 'unknown-key',
        field: 'definition',
        key,
        message: `${key} is not a policy key RabbitMQ ${v} recognises${spec && plugin ? ` without the ${plugin} plugin` : spec ? ' (it exists in other versions)' : ''}${hint ? `; did you mean ${hint}?` : '.'}`,
      });
      continue;
    }
    if (plugin !== undefined && plugins === undefined) {
      warn({
        code: 'federation-plugin',
        field: 'definition',
        key,
        message: `${key} is accepted only while the ${plugin} plugin is enabled on the broker.`,
      });
    }
    const problem = valueProblem(key, value, spec.value(version));
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
    if (key === 'queue-master-locator' && atLeast(version, 4)) {
      warn({
        code: 'deprecated-key',
        field: 'definition',
        key,
        message:
          'queue-master-locator is deprecated in RabbitMQ 4.x (refused by default from 4.3); use queue-leader-locator.',
      });
    }
  }
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
      message: `ha-mode "exactly" needs ha-params, a whole number of replicas above 0; got ${describe(params)}.`,
    });
  } else if (
    mode === 'nodes' &&
    !(Array.isArray(params) && params.length > 0 && params.every((p) => typeof p === 'string'))
  ) {
    refuse({
      code: 'bad-value',
      field: 'definition',
      key: 'ha-params',
      message: `ha-mode "nodes" needs ha-params, a list of node names; got ${describe(params)}.`,
    });
  }
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
        : { code: 'bad-value', message: `${key} must be text, got ${describe(value)}.` };
    case 'integer': {
      if (typeof value !== 'number' || !Number.isInteger(value)) {
        return { code: 'bad-value', message: `${key} must be a whole number, got ${describe(value)}.` };
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
            message: `${key} must be one of ${rule.values.map((x) => JSON.stringify(x)).join(', ')}, got ${describe(value)}.`,
          };
    case 'duration':
      return typeof value === 'string' && /^[0-9]+[YMDhms]$/.test(value) && !/^0+[YMDhms]$/.test(value)
        ? null
        : {
            code: 'bad-value',
            message: `${key} must be a positive whole number followed by a unit (Y, M, D, h, m or s), like "7D"; got ${describe(value)}.`,
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
function checkScope(
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

// --- pattern ----------------------------------------------------------------------------------

function checkPattern(
  pattern: string,
  version: BrokerVersion,
  refuse: (p: Problem) => void,
  warn: (p: Problem) => void,
): void {
  const bytes = Buffer.byteLength(pattern, 'utf8');
  const capped = atLeast(version, 4, 3, 2) || (atLeast(version, 4, 2, 8) && !atLeast(version, 4, 3));
  if (capped && bytes > MAX_PATTERN_BYTES) {
    refuse({
      code: 'pattern-too-long',
      field: 'pattern',
      message: `The pattern is ${bytes} bytes; RabbitMQ ${formatVersion(version)} refuses patterns over ${MAX_PATTERN_BYTES} bytes.`,
    });
    return;
  }
  const error = pcreSyntaxError(pattern);
  if (error) {
    refuse({
      code: 'pattern-invalid',
      field: 'pattern',
      message: `The broker would refuse this pattern: ${error.message} (near ${JSON.stringify(pattern.slice(error.offset, error.offset + 12) || 'the end')}).`,
    });
    return;
  }
  const compiled = compilePattern(pattern);
  if (!compiled.readable) {
    warn({
      code: 'pattern-unreadable',
      field: 'pattern',
      message: `The broker accepts this pattern, but this bot cannot read it (${compiled.why}): objects it may reach are listed as unpredictable, never guessed.`,
    });
  }
  if (!isAnchored(pattern)) {
    warn({
      code: 'pattern-unanchored',
      field: 'pattern',
      message: 'The pattern does not start with ^: it matches every name that merely contains it.',
    });
  }
}

export interface PatternError {
  readonly message: string;
  readonly offset: number;
}

const POSIX_CLASSES = new Set([
  'alpha',
  'digit',
  'alnum',
  'ascii',
  'blank',
  'cntrl',
  'graph',
  'lower',
  'print',
  'punct',
  'space',
  'upper',
  'word',
  'xdigit',
]);

/** Property names PCRE 8.x knows after \\p / \\P: general categories, specials, scripts. */
const UNICODE_PROPERTIES = new Set(
  [
    'C Cc Cf Cn Co Cs L L& Ll Lm Lo Lt Lu M Mc Me Mn N Nd Nl No P Pc Pd Pe Pf Pi Po Ps S Sc Sk Sm So Z Zl Zp Zs',
    'Any Xan Xps Xsp Xwd Xuc',
    'Adlam Ahom Anatolian_Hieroglyphs Arabic Armenian Avestan Balinese Bamum Bassa_Vah Batak Bengali Bhaiksuki',
    'Bopomofo Brahmi Braille Buginese Buhid Canadian_Aboriginal Carian Caucasian_Albanian Chakma Cham Cherokee',
    'Common Coptic Cuneiform Cypriot Cyrillic Deseret Devanagari Dogra Duployan Egyptian_Hieroglyphs Elbasan',
    'Ethiopic Georgian Glagolitic Gothic Grantha Greek Gujarati Gunjala_Gondi Gurmukhi Han Hangul Hanifi_Rohingya',
    'Hanunoo Hatran Hebrew Hiragana Imperial_Aramaic Inherited Inscriptional_Pahlavi Inscriptional_Parthian',
    'Javanese Kaithi Kannada Katakana Kayah_Li Kharoshthi Khmer Khojki Khudawadi Lao Latin Lepcha Limbu Linear_A',
    'Linear_B Lisu Lycian Lydian Mahajani Makasar Malayalam Mandaic Manichaean Marchen Masaram_Gondi Medefaidrin',
    'Meetei_Mayek Mende_Kikakui Meroitic_Cursive Meroitic_Hieroglyphs Miao Modi Mongolian Mro Multani Myanmar',
    'Nabataean New_Tai_Lue Newa Nko Nushu Ogham Ol_Chiki Old_Hungarian Old_Italic Old_North_Arabian Old_Permic',
    'Old_Persian Old_Sogdian Old_South_Arabian Old_Turkic Oriya Osage Osmanya Pahawh_Hmong Palmyrene Pau_Cin_Hau',
    'Phags_Pa Phoenician Psalter_Pahlavi Rejang Runic Samaritan Saurashtra Sharada Shavian Siddham SignWriting',
    'Sinhala Sogdian Sora_Sompeng Soyombo Sundanese Syloti_Nagri Syriac Tagalog Tagbanwa Tai_Le Tai_Tham Tai_Viet',
    'Takri Tamil Tangut Telugu Thaana Thai Tibetan Tifinagh Tirhuta Ugaritic Vai Warang_Citi Yi Zanabazar_Square',
  ]
    .join(' ')
    .split(' '),
);

/**
 * Groups nested deeper than this are refused, as the broker refuses them ("regular expression is
 * too complicated"). Measured on 3.10.8 and 4.0.5 (both alike): 798 nested capturing groups pass
 * and 799 do not, but 798 with an alternation inside fail, as do 400 pairs of `(a(?:b|`; plain
 * non-capturing groups and lookaheads pass up to 1,330. PCRE's compile stack sets the limit, so
 * no simple count matches every shape: this one refuses everything seen refused, and only
 * non-capturing nests of 798–1,330 groups that the broker would take.
 */
export const MAX_GROUP_DEPTH = 797;

const START_VERBS =
  /^\(\*(?:UTF8|UTF|UCP|CR|LF|CRLF|ANYCRLF|ANY|BSR_ANYCRLF|BSR_UNICODE|NO_START_OPT|NO_AUTO_POSSESS|LIMIT_MATCH=\d+|LIMIT_RECURSION=\d+)\)/;
const VERB = /^\(\*(?:ACCEPT|FAIL|F|COMMIT|PRUNE|SKIP|THEN)(?::[^)]*)?\)|^\(\*(?:MARK)?:[^)]+\)/;

/**
 * The compile errors PCRE (the broker's `re:compile`, PCRE 8.x) gives for a pattern, as far as a
 * structural read can tell: unbalanced parentheses and brackets, a quantifier with nothing to
 * repeat, bad ranges and counts, unknown group syntax, a backslash at the end, references to
 * groups that do not exist. Null when none of those is found, which is not a promise: the
 * broker may still refuse it (a variable-length lookbehind, say). Patterns in extended mode
 * (`(?x)`) are not read.
 */
export function pcreSyntaxError(pattern: string): PatternError | null {
  const err = (message: string, offset: number): PatternError => ({ message, offset });
  let i = 0;
  for (let m = START_VERBS.exec(pattern); m; m = START_VERBS.exec(pattern.slice(i))) i += m[0].length;
  const utf = /^(?:\(\*[A-Z_=0-9]+\))*\(\*UTF8?\)/.test(pattern);
  /** Open groups: where each starts, and whether it is a lookbehind (whose length must be fixed). */
  const stack: { at: number; lookbehind: boolean }[] = [];
  let lookbehinds = 0;
  let groups = 0;
  let maxRef = 0;
  let maxRefAt = 0;
  const groupNames = new Set<string>();
  const nameRefs: { name: string; at: number }[] = [];
  let canRepeat = false;
  /** After a quantifier: one `+` or `?` may follow, then nothing. */
  let afterQuantifier = false;
  const n = pattern.length;

  const quantifier = (at: number, fixed: boolean): PatternError | null => {
    if (!canRepeat) return err('nothing to repeat', at);
    if (lookbehinds > 0 && !fixed) return err('lookbehind assertion is not fixed length', at);
    canRepeat = false;
    afterQuantifier = true;
    return null;
  };

  while (i < n) {
    const c = pattern[i] as string;
    if (afterQuantifier && (c === '+' || c === '?')) {
      afterQuantifier = false;
      i++;
      continue;
    }
    afterQuantifier = false;
    switch (c) {
      case '\\': {
        const r = readEscape(pattern, i, utf);
        if ('message' in r) return r;
        if (r.ref !== undefined && r.ref > maxRef) {
          maxRef = r.ref;
          maxRefAt = i;
        }
        if (r.name !== undefined) nameRefs.push({ name: r.name, at: i });
        if (lookbehinds > 0 && r.variable) return err('lookbehind assertion is not fixed length', i);
        canRepeat = r.atom;
        i = r.end;
        break;
      }
      case '[': {
        const r = readClass(pattern, i, utf);
        if ('message' in r) return r;
        canRepeat = true;
        i = r.end;
        break;
      }
      case '(': {
        if (pattern.startsWith('(*', i)) {
          const m = VERB.exec(pattern.slice(i));
          if (!m) return err('(*VERB) not recognized or malformed', i);
          i += m[0].length;
          canRepeat = false;
          break;
        }
        if (stack.length >= MAX_GROUP_DEPTH) return err('regular expression is too complicated', i);
        if (pattern[i + 1] !== '?') {
          groups++;
          stack.push({ at: i, lookbehind: false });
          canRepeat = false;
          i++;
          break;
        }
        const r = readGroupStart(pattern, i);
        if ('message' in r) return r;
        if (r.extended) return null;
        if (r.capturing) groups++;
        if (r.name !== undefined) groupNames.add(r.name);
        if (r.ref !== undefined && r.ref > maxRef) {
          maxRef = r.ref;
          maxRefAt = i;
        }
        if (r.refName !== undefined) nameRefs.push({ name: r.refName, at: i });
        if (r.opens) {
          stack.push({ at: i, lookbehind: r.lookbehind === true });
          if (r.lookbehind) lookbehinds++;
        }
        canRepeat = r.atom;
        i = r.end;
        break;
      }
      case ')':
        if (stack.length === 0) return err('unmatched parentheses', i);
        if (stack.pop()?.lookbehind) lookbehinds--;
        canRepeat = true;
        i++;
        break;
      case '|':
        canRepeat = false;
        i++;
        break;
      case '*':
      case '+':
      case '?': {
        const e = quantifier(i, false);
        if (e) return e;
        i++;
        break;
      }
      case '{': {
        const m = /^\{(\d+)(?:(,)(\d*))?\}/.exec(pattern.slice(i));
        if (!m) {
          canRepeat = true;
          i++;
          break;
        }
        const min = Number(m[1]);
        const max = m[3] ? Number(m[3]) : undefined;
        if (min > 65535 || (max !== undefined && max > 65535))
          return err('number too big in {} quantifier', i);
        if (max !== undefined && max < min) return err('numbers out of order in {} quantifier', i);
        const e = quantifier(i, m[2] === undefined || max === min);
        if (e) return e;
        i += m[0].length;
        break;
      }
      case '^':
      case '$':
        // Unlike an assertion group, a bare assertion cannot be repeated.
        canRepeat = false;
        i++;
        break;
      default:
        canRepeat = true;
        i++;
    }
  }
  if (stack.length > 0) return err('missing )', n);
  if (maxRef > groups) return err('reference to non-existent subpattern', maxRefAt);
  const unknown = nameRefs.find((r) => !groupNames.has(r.name));
  if (unknown) return err('reference to non-existent subpattern', unknown.at);
  return null;
}

type Read = { end: number; atom: boolean; ref?: number; name?: string; variable?: boolean } | PatternError;

function readEscape(p: string, at: number, utf: boolean): Read {
  const next = p[at + 1];
  if (next === undefined) return { message: '\\ at end of pattern', offset: at };
  if (next === 'Q') {
    const close = p.indexOf('\\E', at + 2);
    return { end: close < 0 ? p.length : close + 2, atom: close !== at + 2 };
  }
  if (next === 'E') return { end: at + 2, atom: false };
  if ('LlNUu'.includes(next) && !(next === 'N' && p[at + 2] !== '{')) {
    return { message: 'PCRE does not support \\L, \\l, \\N{name}, \\U, or \\u', offset: at };
  }
  if (next === 'c') {
    if (at + 2 >= p.length) return { message: '\\c at end of pattern', offset: at };
    return { end: at + 3, atom: true };
  }
  if (next === 'x' && p[at + 2] === '{') {
    const m = /^\{([0-9a-fA-F]*)\}/.exec(p.slice(at + 2));
    if (!m) return { end: at + 2, atom: true };
    const code = Number.parseInt(m[1] || '0', 16);
    if (code > (utf ? 0x10ffff : 0xff))
      return { message: 'character value in \\x{} or \\o{} is too large', offset: at };
    return { end: at + 2 + m[0].length, atom: true };
  }
  if (next === 'g' || next === 'k') {
    const m = /^\\[gk](?:\{([^}]+)\}|<([^>]+)>|'([^']+)'|([+-]?\d+))/.exec(p.slice(at));
    if (!m)
      return {
        message: `\\${next} is not followed by a braced, angle-bracketed, or quoted name/number`,
        offset: at,
      };
    const target = m[1] ?? m[2] ?? m[3] ?? m[4] ?? '';
    const end = at + m[0].length;
    if (/^\d+$/.test(target)) return { end, atom: true, ref: Number(target), variable: true };
    if (/^[+-]\d+$/.test(target)) return { end, atom: true, variable: true };
    return { end, atom: true, name: target, variable: true };
  }
  if (next >= '1' && next <= '9') {
    const m = /^\d+/.exec(p.slice(at + 1)) as RegExpExecArray;
    const value = Number(m[0]);
    // \1–\7 always refer to a group (\8 and \9 are the digits when no such group exists);
    // longer numbers are octal unless that many groups could exist.
    if (value < 8) return { end: at + 1 + m[0].length, atom: true, ref: value, variable: true };
    return { end: at + 1 + m[0].length, atom: true };
  }
  if ('bBAZzGK'.includes(next)) return { end: at + 2, atom: false };
  if (next === 'R' || next === 'X') return { end: at + 2, atom: true, variable: true };
  if (next === 'p' || next === 'P') {
    const m = /^\\[pP](?:\{\^?([^}]*)\}|([A-Za-z]))/.exec(p.slice(at));
    if (!m) return { message: 'malformed \\P or \\p sequence', offset: at };
    if (!UNICODE_PROPERTIES.has(m[1] ?? m[2] ?? '')) {
      return { message: 'unknown property name after \\P or \\p', offset: at };
    }
    return { end: at + m[0].length, atom: true };
  }
  return { end: at + 2, atom: true };
}

function readClass(p: string, at: number, utf: boolean): Read {
  let i = at + 1;
  if (p[i] === '^') i++;
  let first = true;
  let prev: number | undefined;
  let rangeFrom: number | undefined;
  let rangeAt = 0;
  while (i < p.length) {
    const c = p[i] as string;
    if (c === ']' && !first) return { end: i + 1, atom: true };
    first = false;
    let code: number | undefined;
    if (c === '[' && p[i + 1] === ':') {
      const m = /^\[:(\^?)([a-z]*):\]/.exec(p.slice(i));
      if (m) {
        if (!POSIX_CLASSES.has(m[2] ?? '')) return { message: 'unknown POSIX class name', offset: i };
        i += m[0].length;
        prev = undefined;
        rangeFrom = undefined;
        continue;
      }
    }
    if (c === '\\') {
      const next = p[i + 1];
      if (next === undefined) return { message: '\\ at end of pattern', offset: i };
      if (next === 'x' && p[i + 2] === '{') {
        const m = /^\{([0-9a-fA-F]*)\}/.exec(p.slice(i + 2));
        if (m) {
          code = Number.parseInt(m[1] || '0', 16);
          if (code > (utf ? 0x10ffff : 0xff))
            return { message: 'character value in \\x{} or \\o{} is too large', offset: i };
          i += 2 + m[0].length;
        } else {
          i += 2;
        }
      } else if (next === 'Q') {
        const close = p.indexOf('\\E', i + 2);
        i = close < 0 ? p.length : close + 2;
      } else if (/[dDsSwWhHvVpPbB]/.test(next) || /[A-Za-z0-9]/.test(next)) {
        // classes and named escapes: not a single character a range can use
        i += next === 'p' || next === 'P' ? (/^\\[pP](?:\{[^}]*\}|.)/.exec(p.slice(i))?.[0].length ?? 2) : 2;
        if (/[dDsSwWhHvVpP]/.test(next) && rangeFrom !== undefined) {
          return { message: 'invalid range in character class', offset: i };
        }
        prev = undefined;
        continue;
      } else {
        code = next.charCodeAt(0);
        i += 2;
      }
    } else {
      code = c.charCodeAt(0);
      i++;
    }
    if (rangeFrom !== undefined) {
      if (code !== undefined && code < rangeFrom)
        return { message: 'range out of order in character class', offset: rangeAt };
      rangeFrom = undefined;
      prev = undefined;
      continue;
    }
    if (code === 0x2d && prev !== undefined && p[i] !== ']') {
      rangeFrom = prev;
      rangeAt = i - 1;
      prev = undefined;
      continue;
    }
    prev = code;
  }
  return { message: 'missing terminating ] for character class', offset: p.length };
}

interface GroupStart {
  end: number;
  atom: boolean;
  opens: boolean;
  capturing: boolean;
  lookbehind?: boolean;
  extended?: boolean;
  /** The group's own name. */
  name?: string;
  /** A group referred to by number or name. */
  ref?: number;
  refName?: string;
}

function readGroupStart(p: string, at: number): GroupStart | PatternError {
  const rest = p.slice(at + 2);
  const open = (len: number, extra: Partial<GroupStart> = {}): GroupStart => ({
    end: at + 2 + len,
    atom: false,
    opens: true,
    capturing: false,
    ...extra,
  });
  const call = (len: number, extra: Partial<GroupStart> = {}): GroupStart => ({
    end: at + 2 + len,
    atom: true,
    opens: false,
    capturing: false,
    ...extra,
  });
  if (/^[:|>=!]/.test(rest)) return open(1);
  if (/^<[=!]/.test(rest)) return open(2, { lookbehind: true });
  const named = /^(?:P?<|')([A-Za-z_][A-Za-z0-9_]*)([>'])/.exec(rest);
  if (named) return open(named[0].length, { capturing: true, name: named[1] as string });
  if (/^P?<|^'/.test(rest))
    return { message: 'syntax error in subpattern name (missing terminator)', offset: at };
  const byName = /^(?:P=|P>|&)([A-Za-z_][A-Za-z0-9_]*)\)/.exec(rest);
  if (byName) return call(byName[0].length, { refName: byName[1] as string });
  const ref = /^(?:R|[+-]?\d+)\)/.exec(rest);
  if (ref) return call(ref[0].length);
  // A condition: (?(1)…), (?(<name>)…), (?('name')…), (?(R)…), or an assertion.
  const condition = /^\((?:(\d+)|<([A-Za-z_]\w*)>|'([A-Za-z_]\w*)'|R\d*|R&\w+|DEFINE|([A-Za-z_]\w*))\)/.exec(
    rest,
  );
  if (condition) {
    const extra: Partial<GroupStart> = {};
    if (condition[1] !== undefined) extra.ref = Number(condition[1]);
    const refName = condition[2] ?? condition[3];
    if (refName !== undefined) extra.refName = refName;
    return open(condition[0].length, extra);
  }
  if (rest.startsWith('#')) {
    const close = p.indexOf(')', at);
    if (close < 0) return { message: 'missing ) after comment', offset: at };
    return { end: close + 1, atom: false, opens: false, capturing: false };
  }
  if (rest.startsWith('(')) return open(0);
  const callout = /^C\d*\)/.exec(rest);
  if (callout) return { end: at + 2 + callout[0].length, atom: false, opens: false, capturing: false };
  const flags = /^([imsxXUJ]*)(?:-([imsxXUJ]*))?([:)])/.exec(rest);
  if (flags) {
    if (flags[1]?.includes('x'))
      return { end: at, atom: false, opens: false, capturing: false, extended: true };
    return flags[3] === ':'
      ? open(flags[0].length)
      : { end: at + 2 + flags[0].length, atom: false, opens: false, capturing: false };
  }
  return { message: 'unrecognized character after (? or (?-', offset: at + 2 };
}
