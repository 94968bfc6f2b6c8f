// Over 400 lines: every variable beside its sentence of what to fix, so a misspelt key is named against all.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import * as z from 'zod';
import {
  ConfigError,
  closeNames,
  isSlackGroupId,
  isSlackUserId,
  onFirstUse,
  parseDuration,
} from '../core/index.ts';
import { count } from '../text/index.ts';
import { parseSentinels, sentinelUrl } from './redisAddress.ts';

/**
 * Configuration from the environment (and an optional environments file), validated once at
 * start. A wrong value fails fast, naming the variable and how to fix it.
 *
 * The bot reads every variable (`loadConfig`); the terminal reads those it uses (`loadTerminalConfig`:
 * the broker, the environments file, Redis, the bot's address), so its start neither builds nor
 * checks the Slack, the watch and the approval settings it never reads (bench/cli). Each variable's
 * schema has one home below, shared by both.
 */

export const MODES = ['read-only', 'normal', 'guarded'] as const;

/** Every Redis key of the bot starts with `<prefix>:`; tests give each run its own prefix. */
export const DEFAULT_KEY_PREFIX = 'rmq';
export type Mode = (typeof MODES)[number];

/** What both front doors read of an environment: its broker, the credentials, the vhosts. */
export interface TerminalEnvironment {
  readonly name: string;
  /** The management API: the first node's URL (`urls[0]`). */
  readonly url: string;
  /** Every node's management URL, in the order asked (a cluster's; one for a single broker). */
  readonly urls: readonly string[];
  readonly user: string;
  readonly password: string;
  /** The variables `user` and `password` were read from (`RMQ_USER`/`RMQ_PASSWORD`, or `userEnv`/`passwordEnv`). */
  readonly credentialsFrom?: { readonly user: string; readonly password: string };
  /**
   * The vhosts this environment is limited to (RMQ_VHOSTS, or the file's `vhosts`): only they are
   * watched, answered about and changed (src/core/vhosts.ts `inScope`); undefined: every vhost.
   */
  readonly vhosts?: readonly string[] | undefined;
}

export interface Environment extends TerminalEnvironment {
  readonly mode: Mode;
  readonly approvers: readonly string[];
  readonly approvalsChannel: string | undefined;
  /** Where the broker's event exchange is followed (changes made outside the bot). */
  readonly amqp: AmqpEndpoint;
  /** How long a change request waits for a decision (RMQ_REQUEST_TTL, or the file's `requestTtl`). */
  readonly requestTtlMs: number;
  /** Distinct approvers a change needs, none the requester (RMQ_APPROVALS_REQUIRED, or the file's `approvalsRequired`). */
  readonly approvalsRequired: number;
  /** Who may file change requests: user and user-group ids (SLACK_REQUESTERS, or the file's `requesters`); empty: anyone. */
  readonly requesters: readonly string[];
  /**
   * Break-glass (apply without approval, reviewed afterwards): allowed, each to be reviewed within
   * `reviewWithinMs` (RMQ_BREAK_GLASS, or the file's `breakGlass: { allowed, reviewWithin }`); undefined: off.
   */
  readonly breakGlass: { readonly reviewWithinMs: number } | undefined;
}

/** An AMQP endpoint; the URL never carries the credentials (they are logged nowhere). */
export interface AmqpEndpoint {
  /** `amqp://host:port/vhost` or `amqps://…`, without user or password: the first node's. */
  readonly url: string;
  /** Every node's AMQP URL (a cluster's), `url` first, each without user or password. */
  readonly urls: readonly string[];
  readonly user: string;
  readonly password: string;
}

/** What the terminal reads: the environments, Redis, a question's budget and limits, the bot's address. */
export interface TerminalConfig {
  readonly environments: readonly TerminalEnvironment[];
  /** REDIS_URL, or the Sentinels' address when REDIS_SENTINELS is set (src/redis/redis.ts: open it with openRedis). */
  readonly redisUrl: string;
  /**
   * RMQ_TIMEOUT: the whole budget of one question to the broker, retries included; `undefined`
   * leaves each front door its default (`QUESTION_BUDGET_MS`).
   */
  readonly questionBudgetMs: number | undefined;
  /** RMQ_AUDIT_KEY: the secret of the audit chain's HMAC, never stored in Redis; undefined: unkeyed. */
  readonly auditKey: string | undefined;
  /** RMQ_BOT_URL, RMQ_BOT_TOKEN: where the terminal's `import` files through the bot, and with which token. */
  readonly bot: { readonly url: string | undefined; readonly token: string | undefined };
  /** RMQ_MAX_BODY, RMQ_MAX_LISTING: the broker client's body limits, when set (else its defaults). */
  readonly bodyLimits: { readonly bodyBytes?: number; readonly listingBytes?: number };
}

export interface Config extends TerminalConfig {
  readonly environments: readonly Environment[];
  readonly slack: {
    readonly botToken: string | undefined;
    readonly signingSecret: string | undefined;
    readonly appToken: string | undefined;
    readonly apiUrl: string | undefined;
    readonly approvalsChannel: string | undefined;
    readonly approvers: readonly string[];
  };
  readonly port: number;
  readonly logLevel: string;
  /** How often the policy lists are compared with the last recorded state (changes outside the bot). */
  readonly watchIntervalMs: number;
  /** RMQ_LINT_SCHEDULE: the cron pattern of the lint digest; undefined: no digest. */
  readonly lintSchedule: string | undefined;
  /**
   * RMQ_API_TOKENS: who may file change sets through the bot's API (`POST /api/import`), token by
   * name (the requester is then `api:NAME`); empty: the API files nothing. Never logged.
   */
  readonly apiTokens: ReadonlyMap<string, string>;
}

/** `32MiB`, `256MB`, `64KiB`, `1GiB` or a bare number of bytes -> bytes. */
export function parseSize(text: string): number | undefined {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(B|KB|KiB|MB|MiB|GB|GiB)?\s*$/i.exec(text);
  if (!m) return undefined;
  const unit = (m[2] ?? 'b').toLowerCase();
  const factor: Record<string, number> = {
    b: 1,
    kb: 1e3,
    kib: 1024,
    mb: 1e6,
    mib: 1024 ** 2,
    gb: 1e9,
    gib: 1024 ** 3,
  };
  return Math.round(Number(m[1]) * (factor[unit] ?? 1));
}

const size = z
  .string()
  .transform((s) => parseSize(s))
  .refine((n) => n !== undefined, 'a size such as 32MiB, 256MB or 1048576')
  .refine((n) => n === undefined || (n >= 1024 && n <= 16 * 1024 ** 3), 'between 1KiB and 16GiB')
  .transform((n) => n as number);

/** Each front door's budget for one question when RMQ_TIMEOUT is not set. */
export const QUESTION_BUDGET_MS = { slack: 10_000, terminal: 15_000 } as const;

/**
 * How far a default budget (RMQ_TIMEOUT not set) may stretch to fit the broker asked: once a
 * vhost's listing without statistics is read, the question may take what the listing with
 * statistics costs on that broker (src/rabbit/inventory.ts), up to RMQ_TIMEOUT's own maximum.
 */
export const DEFAULT_BUDGET_STRETCHES_TO_MS = 600_000;

/** The budget options of a question: RMQ_TIMEOUT as set, or the front door's default, stretchable. */
export function questionBudget(
  config: Pick<TerminalConfig, 'questionBudgetMs'>,
  door: keyof typeof QUESTION_BUDGET_MS,
): [number, { stretchableToMs?: number }] {
  return config.questionBudgetMs === undefined
    ? [QUESTION_BUDGET_MS[door], { stretchableToMs: DEFAULT_BUDGET_STRETCHES_TO_MS }]
    : [config.questionBudgetMs, {}];
}

const httpUrl = z
  .string()
  .url()
  .refine((u) => /^https?:\/\//.test(u), 'must start with http:// or https://')
  .refine((u) => {
    const url = URL.canParse(u) ? new URL(u) : undefined;
    return !url?.username && !url?.password;
  }, "must not carry credentials: set them apart (RMQ_USER and RMQ_PASSWORD, or the environment's userEnv and passwordEnv)");
/** One URL, or a cluster's nodes comma-separated (in the environments file: a list too). */
function urlList(one: z.ZodString) {
  const list = z
    .array(one)
    .min(1, 'at least one URL')
    .refine((urls) => new Set(urls).size === urls.length, 'a node is listed twice');
  return z.union([
    z
      .string()
      .transform((s) =>
        s
          .split(',')
          .map((x) => x.trim())
          .filter(Boolean),
      )
      .pipe(list),
    list,
  ]);
}

const csv = z
  .string()
  .optional()
  .transform((s) =>
    (s ?? '')
      .split(',')
      .map((x) => x.trim())
      .filter(Boolean),
  );

/**
 * Slack user ids (`U…`, `W…`) and user-group ids (`S…`), each once: what an approvers or a
 * requesters list holds. A duplicate would count twice towards the approvals a change needs.
 */
const slackIds = onFirstUse(() =>
  z.array(z.string()).superRefine((ids, ctx) => {
    const seen = new Set<string>();
    for (const [i, id] of ids.entries()) {
      if (!isSlackUserId(id) && !isSlackGroupId(id)) {
        ctx.addIssue({
          code: 'custom',
          path: [i],
          message: `${JSON.stringify(id)} is not a Slack user id (U…, W…) or user-group id (S…), such as U024BE7LH or S0614TZR7`,
        });
      } else if (seen.has(id)) {
        ctx.addIssue({
          code: 'custom',
          path: [i],
          message: `${id} is listed twice: each id counts once, so list it once`,
        });
      }
      seen.add(id);
    }
  }),
);

/** Distinct approvals a change needs: a positive whole number, never a boolean, a list or 1.5. */
const APPROVALS_REQUIRED = 'a positive whole number such as 2';
const approvalsRequiredFile = onFirstUse(() =>
  z
    .number({ error: (iss) => `${APPROVALS_REQUIRED}, not ${JSON.stringify(iss.input)}` })
    .int(APPROVALS_REQUIRED)
    .min(1, APPROVALS_REQUIRED),
);
const approvalsRequiredEnv = onFirstUse(() =>
  z
    .string()
    .regex(/^[1-9][0-9]*$/, APPROVALS_REQUIRED)
    .transform(Number)
    .pipe(approvalsRequiredFile()),
);

/**
 * An object of the environments file whose every key is known: a misspelt one (`approvalsRequied`,
 * `breakglass`) would otherwise be dropped, leaving the default it meant to change.
 */
function closedObject<T extends z.core.$ZodLooseShape>(shape: T) {
  const known = Object.keys(shape);
  return z.strictObject(shape, {
    error: (iss) => (iss.code === 'unrecognized_keys' ? unknownKeys(iss.keys, known) : undefined),
  });
}

function unknownKeys(keys: readonly string[], known: readonly string[]): string {
  return keys
    .map((key) => {
      const close = closeNames(key, known);
      return `${JSON.stringify(key)} is not a key here (${
        close.length ? `did you mean ${close.join(' or ')}?` : `the keys are ${known.join(', ')}`
      })`;
    })
    .join('; ');
}

/** How long a break-glass change may wait for its review: `4h`, `30m`, `2d` (src/core/duration.ts), 1 second to 30 days. */
const reviewWithin = onFirstUse(() =>
  z
    .string()
    .transform((s) => parseDuration(s))
    .refine((ms) => ms !== undefined, 'a duration such as 4h, 30m or 2d')
    .refine((ms) => ms === undefined || (ms >= 1000 && ms <= 30 * 86_400_000), 'between 1s and 30d')
    .transform((ms) => ms as number),
);

const breakGlassFile = onFirstUse(() =>
  closedObject({
    allowed: z.boolean({ error: 'true or false' }),
    reviewWithin: reviewWithin().optional(),
  }).refine((b) => !b.allowed || b.reviewWithin !== undefined, {
    message: 'required when allowed is true: how long a break-glass change may wait for its review (e.g. 4h)',
    path: ['reviewWithin'],
  }),
);

const amqpUrl = onFirstUse(() =>
  z
    .string()
    .url()
    .refine((u) => /^amqps?:\/\//.test(u), 'must start with amqp:// or amqps://'),
);

/** `60s`, `2m`, `500ms` (src/core/duration.ts), or a bare number of seconds: from 500 ms to 30 minutes. */
const interval = onFirstUse(() =>
  z
    .string()
    .transform((s) => (/^\d+$/.test(s) ? Number(s) * 1000 : parseDuration(s)))
    .refine((ms) => ms !== undefined, 'a duration such as 60s, 2m or 500ms')
    .refine((ms) => ms === undefined || (ms >= 500 && ms <= 1_800_000), 'between 500ms and 30m')
    .transform((ms) => ms as number),
);

/** `24h`, `90m`, `2d`, `3600s`: how long a change request waits for a decision (1 minute to 30 days). */
const requestTtl = onFirstUse(() =>
  z
    .string()
    .regex(/^\d+(\.\d+)?(s|m|h|d)$/, 'a duration such as 24h, 90m or 2d')
    .transform((s) => {
      const n = Number.parseFloat(s);
      const unit = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[s.slice(-1) as 's' | 'm' | 'h' | 'd'];
      return Math.round(n * unit);
    })
    .refine((ms) => ms >= 60_000 && ms <= 30 * 86_400_000, 'between 1m and 30d'),
);

/**
 * Whether BullMQ's cron reader (cron-parser, the version BullMQ pins) takes the pattern. Required
 * only when there is a pattern to read, as the YAML parser is (`parseYaml`): cron-parser and luxon
 * were ~10 ms of every terminal start (bench/cli).
 */
function isCron(pattern: string): boolean {
  if (pattern.trim().split(/\s+/).length < 5) return false;
  const cronParser = createRequire(import.meta.url)('cron-parser') as typeof import('cron-parser');
  try {
    cronParser.parseExpression(pattern);
    return true;
  } catch {
    return false;
  }
}

/**
 * Why a token of RMQ_API_TOKENS (or RMQ_BOT_TOKEN) could never be presented, if it could not: it
 * travels as `Authorization: Bearer TOKEN`, which carries visible ASCII only and ends at a space.
 * Says where the fault is, never the token.
 */
function tokenProblem(token: string): string | undefined {
  const at = token.search(/[^\x21-\x7e]/);
  if (at < 0) return undefined;
  const c = token.charCodeAt(at);
  const what = /\s/.test(token.charAt(at))
    ? 'a space or other white space'
    : c < 0x20 || c === 0x7f
      ? 'a control character'
      : 'a character beyond ASCII';
  return `has ${what} (character ${at + 1}), which an Authorization header cannot carry: a token is letters, digits and visible punctuation (openssl rand -hex 24)`;
}

/** The variables the terminal reads (and the bot with them): the broker or the environments file, a question's budget and limits, Redis, the bot's address. */
const terminalVariables = {
  RMQ_URL: urlList(httpUrl).default(['http://localhost:15672']),
  RMQ_USER: z.string().min(1).default('guest'),
  RMQ_PASSWORD: z.string().default('guest'),
  /** The vhosts the environment is limited to, comma-separated; unset: every vhost. */
  RMQ_VHOSTS: csv,
  RMQ_ENVIRONMENTS: z.string().min(1).optional(),
  /** The budget of one question (src/core/duration.ts, or a bare number of seconds): 100 ms to 10 minutes. */
  RMQ_TIMEOUT: z
    .string()
    .transform((s) => (/^\d+$/.test(s) ? Number(s) * 1000 : parseDuration(s)))
    .refine((ms) => ms !== undefined, 'a duration such as 15s, 1500ms or 2m')
    .refine((ms) => ms === undefined || (ms >= 100 && ms <= 600_000), 'between 100ms and 10m')
    .transform((ms) => ms as number)
    .optional(),
  RMQ_MAX_BODY: size.optional(),
  RMQ_AUDIT_KEY: z
    .string()
    .min(32, 'at least 32 characters of a random secret (e.g. openssl rand -hex 32)')
    .optional(),
  RMQ_MAX_LISTING: size.optional(),
  RMQ_BOT_URL: z.url({ protocol: /^https?$/, error: "the bot's base URL, http:// or https://" }).optional(),
  RMQ_BOT_TOKEN: z
    .string()
    .min(16, 'one token of RMQ_API_TOKENS (at least 16 characters)')
    .superRefine((token, ctx) => {
      const problem = tokenProblem(token);
      if (problem) ctx.addIssue({ code: 'custom', message: `the token ${problem}` });
    })
    .optional(),
  REDIS_URL: z
    .string()
    .regex(/^rediss?:\/\//, 'must start with redis:// or rediss://')
    .default('redis://127.0.0.1:6379'),
  /** `host:port,…` of Redis Sentinels; with REDIS_SENTINEL_NAME, used instead of REDIS_URL. */
  REDIS_SENTINELS: z
    .string()
    .transform((text, ctx) => {
      const parsed = parseSentinels(text);
      if ('error' in parsed) {
        ctx.addIssue({ code: 'custom', message: `${parsed.error} (e.g. 10.0.0.1:26379,10.0.0.2:26379)` });
        return z.NEVER;
      }
      return parsed.sentinels;
    })
    .optional(),
  REDIS_SENTINEL_NAME: z
    .string()
    .regex(/^[A-Za-z0-9_.-]+$/, 'letters, digits, _ . - only')
    .optional(),
};
const TerminalEnvSchema = z.object(terminalVariables);
type TerminalVariables = z.output<typeof TerminalEnvSchema>;

/** The variables only the bot reads: built by the bot alone. */
const botEnvSchema = onFirstUse(() =>
  z.object({
    RMQ_AMQP_URL: urlList(amqpUrl()).optional(),
    RMQ_WATCH_INTERVAL: interval().default(60_000),
    RMQ_MODE: z.enum(MODES).default('normal'),
    RMQ_REQUEST_TTL: requestTtl().default(24 * 3_600_000),
    RMQ_APPROVALS_REQUIRED: approvalsRequiredEnv().default(1),
    RMQ_BREAK_GLASS: reviewWithin().optional(),
    /** When the lint digest is posted (src/slack/lintDigest.ts): a cron expression, as BullMQ reads it. */
    RMQ_LINT_SCHEDULE: z
      .string()
      .refine(
        isCron,
        'a cron expression such as 0 9 * * 1 (minute hour day month weekday; a sixth field first for seconds)',
      )
      .optional(),
    RMQ_API_TOKENS: z
      .string()
      .transform((text, ctx) => {
        const tokens = new Map<string, string>();
        const refuse = (message: string) => {
          ctx.addIssue({ code: 'custom', message });
          return z.NEVER;
        };
        for (const [i, pair] of text
          .split(',')
          .map((p) => p.trim())
          .filter(Boolean)
          .entries()) {
          const colon = pair.indexOf(':');
          const name = colon < 0 ? '' : pair.slice(0, colon);
          const token = colon < 0 ? '' : pair.slice(colon + 1);
          if (!/^[A-Za-z0-9_.-]{1,64}$/.test(name) || token.length < 16)
            return refuse(
              `each entry is NAME:TOKEN (a name of letters, digits, . _ or -; a token of at least 16 characters, e.g. ci:$(openssl rand -hex 24)); entry ${i + 1} is not`,
            );
          if (tokens.has(name))
            return refuse(
              `the name ${name} is listed twice (entry ${i + 1}): each name once, with a token of its own`,
            );
          const problem = tokenProblem(token);
          if (problem) return refuse(`the token of ${name} (entry ${i + 1}) ${problem}`);
          // The token names who files (`api:NAME`): one token under two names would file as the last.
          const twin = [...tokens].find(([, t]) => t === token)?.[0];
          if (twin)
            return refuse(
              `${twin} and ${name} have the same token, so a request filed with it could not say which of them filed it: give each name a token of its own`,
            );
          tokens.set(name, token);
        }
        return tokens;
      })
      .optional(),
    SLACK_BOT_TOKEN: z.string().min(1).optional(),
    SLACK_SIGNING_SECRET: z.string().min(1).optional(),
    SLACK_APP_TOKEN: z.string().min(1).optional(),
    SLACK_API_URL: httpUrl
      .refine(
        (u) => u.endsWith('/api/'),
        "must end in /api/, as Slack's own https://slack.com/api/ does: the bot appends method names such as chat.postMessage to it",
      )
      .optional(),
    SLACK_APPROVALS_CHANNEL: z.string().min(1).optional(),
    SLACK_APPROVERS: csv.pipe(slackIds()),
    SLACK_REQUESTERS: csv.pipe(slackIds()),
    PORT: z.coerce.number().int().min(0).max(65535).default(3000),
    LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  }),
);
type BotVariables = z.output<ReturnType<typeof botEnvSchema>>;

/** Every variable the configuration reads; docs/configuration.md has a row for each (test/unit/docs.test.ts). */
export const envVariables = (): readonly string[] => [
  ...Object.keys(terminalVariables),
  ...Object.keys(botEnvSchema().shape),
];

/** The environments file (RMQ_ENVIRONMENTS), built when there is one; docs/configuration.md has a row for each field. */
export const environmentsFile = onFirstUse(() =>
  closedObject({
    environments: z
      .array(
        closedObject({
          name: z.string().regex(/^[A-Za-z0-9_.-]+$/, 'letters, digits, _ . - only'),
          url: urlList(httpUrl),
          userEnv: z.string().min(1),
          passwordEnv: z.string().min(1),
          mode: z.enum(MODES).default('normal'),
          approvers: slackIds().default([]),
          approvalsChannel: z.string().min(1).optional(),
          amqpUrl: urlList(amqpUrl()).optional(),
          requestTtl: requestTtl().optional(),
          approvalsRequired: approvalsRequiredFile().optional(),
          requesters: slackIds().optional(),
          breakGlass: breakGlassFile().optional(),
          vhosts: z
            .array(z.string().min(1))
            .min(1, 'at least one vhost, or leave vhosts out for every vhost')
            .optional(),
        }),
      )
      .min(1),
  }),
);
type FileEnvironment = z.output<ReturnType<typeof environmentsFile>>['environments'][number];

const blankToUndefined = (env: NodeJS.ProcessEnv): Record<string, string> =>
  Object.fromEntries(
    Object.entries(env).filter((e): e is [string, string] => typeof e[1] === 'string' && e[1] !== ''),
  );

function describe(issues: readonly z.core.$ZodIssue[], where: string): string {
  return issues
    .map((i) => {
      // A list of a variable: a list of nodes (RMQ_URL, RMQ_AMQP_URL) names the node after the
      // first; any other (SLACK_APPROVERS) is the variable, its sentence naming the entry.
      const [name, index, ...rest] = i.path;
      const listed = typeof name === 'string' && typeof index === 'number' && rest.length === 0;
      const key =
        listed && where === 'env'
          ? /^RMQ_(AMQP_)?URL$/.test(name) && index > 0
            ? `${name} (node ${index + 1})`
            : name
          : i.path.join('.') || where;
      return `${key}: ${i.message}`;
    })
    .join('; ');
}

/**
 * The YAML parser, loaded only when there is an environments file: it is a tenth of what the
 * terminal command would compile at start for a `which` that has none (bench/cli). Required
 * from node_modules, not bundled: `loadConfig` stays synchronous for its callers.
 */
function parseYaml(text: string): unknown {
  const yaml = createRequire(import.meta.url)('yaml') as typeof import('yaml');
  return yaml.parse(text);
}

const readUtf8 = (path: string) => readFileSync(path, 'utf8');

/** The variables refused: every issue in one sentence. */
function refusedVariables(issues: readonly z.core.$ZodIssue[]): never {
  throw new ConfigError(`Invalid configuration: ${describe(issues, 'env')}. See .env.example.`);
}

/** An environment as both front doors read it, and its entry of the environments file (none: the variables'). */
interface ReadEnvironment {
  readonly environment: TerminalEnvironment;
  readonly entry?: FileEnvironment;
}

/**
 * What the terminal reads of the configuration (the broker or the environments file, Redis, a
 * question's budget and limits, the bot's address), each variable checked as the bot checks it;
 * the bot's own settings are neither built nor read (bench/cli).
 */
export function loadTerminalConfig(
  env: NodeJS.ProcessEnv = process.env,
  readFile: (path: string) => string = readUtf8,
): TerminalConfig {
  const parsed = TerminalEnvSchema.safeParse(blankToUndefined(env));
  if (!parsed.success) refusedVariables(parsed.error.issues);
  const e = parsed.data;
  return terminalConfig(e, readEnvironments(e, env, readFile));
}

/** The bot's configuration: every variable, and every setting of each environment. */
export function loadConfig(
  env: NodeJS.ProcessEnv = process.env,
  readFile: (path: string) => string = readUtf8,
): Config {
  const vars = blankToUndefined(env);
  const terminal = TerminalEnvSchema.safeParse(vars);
  const bot = botEnvSchema().safeParse(vars);
  if (!terminal.success || !bot.success)
    refusedVariables([...(terminal.error?.issues ?? []), ...(bot.error?.issues ?? [])]);
  const e = { ...terminal.data, ...bot.data };
  const environments: Environment[] = readEnvironments(e, env, readFile).map((read) => ({
    ...read.environment,
    ...botSettings(read, e),
  }));
  for (const [i, x] of environments.entries()) {
    const problem = approvalsProblem(x);
    if (problem) {
      const where = e.RMQ_ENVIRONMENTS
        ? `RMQ_ENVIRONMENTS (${e.RMQ_ENVIRONMENTS}): environments.${i}.approvalsRequired (environment "${x.name}")`
        : 'RMQ_APPROVALS_REQUIRED';
      throw new ConfigError(`${where}: ${problem}.`);
    }
  }
  return {
    ...terminalConfig(e, []),
    environments,
    slack: {
      botToken: e.SLACK_BOT_TOKEN,
      signingSecret: e.SLACK_SIGNING_SECRET,
      appToken: e.SLACK_APP_TOKEN,
      apiUrl: e.SLACK_API_URL,
      approvalsChannel: e.SLACK_APPROVALS_CHANNEL,
      approvers: e.SLACK_APPROVERS,
    },
    port: e.PORT,
    logLevel: e.LOG_LEVEL,
    watchIntervalMs: e.RMQ_WATCH_INTERVAL,
    lintSchedule: e.RMQ_LINT_SCHEDULE,
    apiTokens: e.RMQ_API_TOKENS ?? new Map(),
  };
}

/** The terminal's configuration of the variables, with `read`'s environments. */
function terminalConfig(e: TerminalVariables, read: readonly ReadEnvironment[]): TerminalConfig {
  if ((e.REDIS_SENTINELS === undefined) !== (e.REDIS_SENTINEL_NAME === undefined)) {
    throw new ConfigError(
      'Invalid configuration: REDIS_SENTINELS and REDIS_SENTINEL_NAME go together (the Sentinels, and the name of the primary they monitor). See .env.example.',
    );
  }
  return {
    environments: read.map((r) => r.environment),
    redisUrl:
      e.REDIS_SENTINELS && e.REDIS_SENTINEL_NAME
        ? sentinelUrl(e.REDIS_SENTINELS, e.REDIS_SENTINEL_NAME)
        : e.REDIS_URL,
    questionBudgetMs: e.RMQ_TIMEOUT,
    auditKey: e.RMQ_AUDIT_KEY,
    bot: { url: e.RMQ_BOT_URL, token: e.RMQ_BOT_TOKEN },
    bodyLimits: {
      ...(e.RMQ_MAX_BODY === undefined ? {} : { bodyBytes: e.RMQ_MAX_BODY }),
      ...(e.RMQ_MAX_LISTING === undefined ? {} : { listingBytes: e.RMQ_MAX_LISTING }),
    },
  };
}

/** The environments of the file (RMQ_ENVIRONMENTS), or the one of the variables. */
function readEnvironments(
  e: TerminalVariables,
  env: NodeJS.ProcessEnv,
  readFile: (path: string) => string,
): ReadEnvironment[] {
  if (!e.RMQ_ENVIRONMENTS) {
    return [
      {
        environment: {
          name: 'default',
          url: e.RMQ_URL[0] as string,
          urls: e.RMQ_URL,
          user: e.RMQ_USER,
          password: e.RMQ_PASSWORD,
          credentialsFrom: { user: 'RMQ_USER', password: 'RMQ_PASSWORD' },
          vhosts: e.RMQ_VHOSTS.length > 0 ? e.RMQ_VHOSTS : undefined,
        },
      },
    ];
  }
  let doc: unknown;
  try {
    doc = parseYaml(readFile(e.RMQ_ENVIRONMENTS));
  } catch (err) {
    throw new ConfigError(
      `RMQ_ENVIRONMENTS: cannot read ${e.RMQ_ENVIRONMENTS} as YAML (${(err as Error).message}).`,
    );
  }
  const file = environmentsFile().safeParse(doc);
  if (!file.success) {
    throw new ConfigError(
      `RMQ_ENVIRONMENTS (${e.RMQ_ENVIRONMENTS}): ${describe(file.error.issues, 'file')}.`,
    );
  }
  const read = file.data.environments.map((entry) => {
    const user = env[entry.userEnv];
    const password = env[entry.passwordEnv];
    if (!user)
      throw new ConfigError(
        `${entry.userEnv} is not set: environment "${entry.name}" takes its user from it.`,
      );
    if (password === undefined) {
      throw new ConfigError(
        `${entry.passwordEnv} is not set: environment "${entry.name}" takes its password from it.`,
      );
    }
    const environment: TerminalEnvironment = {
      name: entry.name,
      url: entry.url[0] as string,
      urls: entry.url,
      user,
      password,
      credentialsFrom: { user: entry.userEnv, password: entry.passwordEnv },
      vhosts: entry.vhosts,
    };
    return { environment, entry };
  });
  const names = new Set<string>();
  for (const { environment: x } of read) {
    if (names.has(x.name))
      throw new ConfigError(`RMQ_ENVIRONMENTS: environment "${x.name}" is listed twice.`);
    names.add(x.name);
  }
  return read;
}

/** What the bot adds to an environment: its file entry's settings, else the variables'. */
function botSettings(
  { environment: x, entry }: ReadEnvironment,
  e: TerminalVariables & BotVariables,
): Omit<Environment, keyof TerminalEnvironment> {
  if (!entry) {
    return {
      mode: e.RMQ_MODE,
      approvers: e.SLACK_APPROVERS,
      approvalsChannel: e.SLACK_APPROVALS_CHANNEL,
      amqp: amqpEndpoint(e.RMQ_AMQP_URL, x.urls, x.user, x.password),
      requestTtlMs: e.RMQ_REQUEST_TTL,
      approvalsRequired: e.RMQ_APPROVALS_REQUIRED,
      requesters: e.SLACK_REQUESTERS,
      breakGlass: breakGlassOf(e.RMQ_BREAK_GLASS),
    };
  }
  return {
    mode: entry.mode,
    approvers: entry.approvers.length ? entry.approvers : e.SLACK_APPROVERS,
    approvalsChannel: entry.approvalsChannel ?? e.SLACK_APPROVALS_CHANNEL,
    amqp: amqpEndpoint(entry.amqpUrl, x.urls, x.user, x.password),
    requestTtlMs: entry.requestTtl ?? e.RMQ_REQUEST_TTL,
    approvalsRequired: entry.approvalsRequired ?? e.RMQ_APPROVALS_REQUIRED,
    requesters: entry.requesters ?? e.SLACK_REQUESTERS,
    breakGlass: entry.breakGlass
      ? entry.breakGlass.allowed
        ? { reviewWithinMs: entry.breakGlass.reviewWithin as number }
        : undefined
      : breakGlassOf(e.RMQ_BREAK_GLASS),
  };
}

const breakGlassOf = (reviewWithinMs: number | undefined): Environment['breakGlass'] =>
  reviewWithinMs === undefined ? undefined : { reviewWithinMs };

/**
 * Why an environment's approvalsRequired can provably never be met, or undefined. A change needs
 * that many approvers besides its requester, so with approver user ids only: no more than there
 * are, and one fewer when an approver may file requests (anyone may, with no requesters; or the
 * requesters list their id). A user group among the approvers may hold any number, and one among
 * the requesters may or may not hold an approver: either leaves the count unknown at start, so
 * nothing is refused. One approval and no approvers stays allowed (the terminal approves nothing).
 */
function approvalsProblem(
  x: Pick<Environment, 'approvalsRequired' | 'approvers' | 'requesters'>,
): string | undefined {
  const n = x.approvalsRequired;
  if (n <= 1 || x.approvers.some(isSlackGroupId)) return undefined;
  const listed = `${count(x.approvers.length, 'approver')} configured (${x.approvers.join(', ') || 'none'})`;
  if (n > x.approvers.length) {
    return `${n} approvals required, but only ${listed}: lower it, or add approvers or a user group`;
  }
  const filer = x.approvers.find((id) => x.requesters.length === 0 || x.requesters.includes(id));
  if (filer === undefined || n <= x.approvers.length - 1) return undefined;
  const may = x.requesters.length === 0 ? 'anyone may file requests' : `${filer} is among the requesters`;
  return `${n} approvals required and ${listed}, but ${may}: a request of ${filer} could never be approved, as nobody approves their own. Lower it, add an approver or a user group, or leave the approvers out of the requesters`;
}

/**
 * The AMQP endpoint of an environment: the given URLs (a cluster's nodes), else each management
 * node's host on 5672 (`amqps` on 5671 when the management API is https). Credentials written in
 * the first URL win over the environment's; the URLs kept have none.
 */
export function amqpEndpoint(
  given: string | readonly string[] | undefined,
  managementUrls: string | readonly string[],
  user: string,
  password: string,
): AmqpEndpoint {
  const derived = (m: URL) => {
    const url = new URL(`${m.protocol === 'https:' ? 'amqps' : 'amqp'}://${m.host}`);
    url.port = m.protocol === 'https:' ? '5671' : '5672';
    return url;
  };
  const urls =
    given === undefined
      ? [managementUrls].flat().map((u) => derived(new URL(u)))
      : [given].flat().map((u) => new URL(u));
  const first = urls[0] as URL;
  const endpoint = {
    user: first.username ? decodeURIComponent(first.username) : user,
    password: first.username ? decodeURIComponent(first.password) : password,
  };
  const bare = urls.map((url) => {
    url.username = '';
    url.password = '';
    return url.toString().replace(/\/$/, '');
  });
  return { url: bare[0] as string, urls: [...new Set(bare)], ...endpoint };
}

/** `--env` picks one; without it, the only (or first) environment. */
export function pickEnvironment<E extends TerminalEnvironment>(
  config: { readonly environments: readonly E[] },
  name: string | undefined,
): E | undefined {
  if (name === undefined) return config.environments[0];
  return config.environments.find((x) => x.name === name);
}
