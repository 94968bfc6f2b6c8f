// Over 400 lines: the terminal's one front door, a handler per command of the table, loaded when asked for.
// First: before any module builds its schemas (src/terminal/zodJitless.ts).
import './zodJitless.ts';
import { existsSync, readFileSync } from 'node:fs';
import type { TerminalCommandName } from '../commands/index.ts';
import { helpText, parseWhich, vhostMapOf } from '../commands/index.ts';
import { parsePolicies, policies } from '../commands/policies/index.ts';
import { which } from '../commands/which/index.ts';
import { DEFAULT_KEY_PREFIX, loadTerminalConfig } from '../config/index.ts';
import { ConfigError, InputError } from '../core/index.ts';
import { brokerReason, type ManagementClient, RabbitError } from '../rabbit/index.ts';
import { jsonText, quoted } from '../text/index.ts';
import { type AnsweredAt, answeredForLine } from './answeredFor.ts';
import { type CliOptions, type Io, withBroker, withTrail } from './clients.ts';
import { policiesText } from './policies.ts';
import { whichText } from './which.ts';

/**
 * The terminal front door: the read-only commands, with `--json`. It never applies a change.
 * Exit codes (docs/commands.md): 0 answered; 2 input or configuration refused; 3 broker not asked
 * (unreachable, out of time, refused or unreadable answer); 1 anything else (a bug).
 */

export type { CliOptions, Io } from './clients.ts';

const stdio: Io = { out: (s) => process.stdout.write(s), err: (s) => process.stderr.write(s) };

/** One run of a terminal command: its words (without `--json`), and what it may use. */
interface TerminalRun {
  readonly words: readonly string[];
  readonly json: boolean;
  readonly env: NodeJS.ProcessEnv;
  readonly io: Io;
  readonly options: CliOptions;
}

/** Answers, writes to `io`, and returns the exit code. Throws InputError for bad input. */
type TerminalCommand = (run: TerminalRun) => Promise<number>;

const asJson = (value: unknown): string => `${jsonText(value, 2)}\n`;

/**
 * A `--json` answer of a broker with several nodes carries `node`: the URL of the node that
 * answered (docs/json.md). Not when no node answered (exit 3): none did.
 */
function answeredBy<T extends object>(
  value: T,
  broker: ManagementClient,
  code: number | 'answered',
): T | (T & { node: string }) {
  return broker.nodeUrls.length > 1 && code !== 3 ? { ...value, node: broker.node } : value;
}

/**
 * An answer that could not read what it depends on (exit 3, yet a node answered): said on stderr
 * too, as one `rmq:` sentence, beside the text or document that leads with it.
 */
function sayIncomplete(io: Io, words: string | undefined): void {
  if (words) io.err(`rmq: ${words}\n`);
}

/**
 * An answer, written once: `--json` the document with `env` first, the text with the line naming
 * the environment (and vhost) it answered for (src/terminal/answeredFor.ts).
 */
function answer(io: Io, json: boolean, at: AnsweredAt, doc: object, text: () => string): void {
  io.out(json ? asJson({ env: at.env, ...doc }) : `${text()}${answeredForLine(at)}`);
}

/**
 * The terminal's handler of every command in the table (`src/commands/registry.ts`) that is not
 * Slack only, keyed by its name: the compiler refuses a missing one or one the table lacks.
 * What only some commands need is loaded when asked for (bench/cli: `which` stays cheap).
 */
export const TERMINAL_COMMANDS: { readonly [N in TerminalCommandName]: TerminalCommand } = {
  async help({ io }) {
    io.out(helpText('rmq'));
    return 0;
  },
  async policies({ words, json, env, io, options }) {
    const input = parsePolicies(words, terminalDefaults(env));
    const when = input.at;
    if (when)
      return withBroker(env, input, (_, at) =>
        withTrail(env, io, options, async (trail) => {
          const [{ policiesAt }, { policiesAtText }] = await Promise.all([
            import('../commands/at/index.ts'),
            import('./at.ts'),
          ]);
          const result = await policiesAt({ ...input, at: when }, at.env, trail);
          answer(io, json, { ...at, vhost: input.vhost }, result, () => policiesAtText(result));
          return 0;
        }),
      );
    return withBroker(env, input, async (broker, at) => {
      const result = await policies(input, broker);
      const code = result.answer === 'not-asked' ? 3 : 0;
      answer(io, json, { ...at, vhost: result.vhost }, answeredBy(result, broker, code), () =>
        policiesText(result),
      );
      return code;
    });
  },
  async lint({ words, json, env, io }) {
    const [{ lint, lintExitCode, lintOfVhosts, parseLint }, { lintText }] = await Promise.all([
      import('../commands/lint/index.ts'),
      import('./lint.ts'),
    ]);
    const input = parseLint(words, terminalDefaults(env));
    const file =
      input.file === undefined
        ? undefined
        : await (await import('./readFile.ts')).definitionsFileAt(input.file, {
            vhost: input.fileVhost,
            vhostMap: vhostMapOf(input.vhostMap),
          });
    // A file is linted in every vhost it names (a file naming none: the vhost as without one).
    const vhosts = file?.vhosts.length ? file.vhosts : [input.vhost];
    return withBroker(env, { env: input.env, vhost: vhosts }, async (broker, at) => {
      const results = [];
      for (const vhost of vhosts)
        results.push(await lint({ ...input, vhost }, broker, { env: at.env, ...(file ? { file } : {}) }));
      const result = file ? lintOfVhosts(results) : (results[0] as (typeof results)[number]);
      const code = lintExitCode(result, input.failOn);
      answer(
        io,
        json,
        { ...at, ...(vhosts.length === 1 ? { vhost: vhosts[0] } : {}) },
        answeredBy(result, broker, result.answer === 'linted' ? 'answered' : code),
        () => lintText(result),
      );
      sayIncomplete(io, result.incomplete?.message);
      return code;
    });
  },
  async links({ words, json, env, io, options }) {
    const [{ links, linksExitCode, parseLinks, vhostsOf }, { linksText }] = await Promise.all([
      import('../commands/links/index.ts'),
      import('./links.ts'),
    ]);
    const input = parseLinks(words, terminalDefaults(env));
    const file =
      input.against === undefined
        ? undefined
        : await (await import('./readFile.ts')).definitionsFileAt(input.against, { vhost: input.fileVhost });
    const vhosts = vhostsOf(input, file);
    const { withLinksWatched } = await import('./cliRedis.ts');
    return withBroker(env, { env: input.env, vhost: vhosts }, async (broker, at) => {
      // A link starting at every try that the bot's watch saw not running for a minute is stuck.
      const result = await withLinksWatched(env, options.keyPrefix ?? DEFAULT_KEY_PREFIX, at.env, (watched) =>
        links(input, broker, { env: at.env, ...(file ? { file } : {}), watched }),
      );
      const code = linksExitCode(result, input.failOn);
      answer(
        io,
        json,
        { ...at, ...(vhosts.length === 1 ? { vhost: vhosts[0] } : {}) },
        answeredBy(result, broker, result.answer === 'answered' ? 'answered' : code),
        () => linksText(result),
      );
      return code;
    });
  },
  async which({ words, json, env, io, options }) {
    const input = parseWhich(words, {}, terminalDefaults(env));
    const when = input.at;
    if (when)
      return withBroker(env, input, (broker, at) =>
        withTrail(env, io, options, async (trail) => {
          const [{ whichAt }, { whichAtText }] = await Promise.all([
            import('../commands/at/index.ts'),
            import('./at.ts'),
          ]);
          const result = await whichAt({ ...input, at: when }, at.env, broker, trail);
          answer(io, json, { ...at, vhost: input.vhost }, result, () => whichAtText(result));
          return 0;
        }),
      );
    return withBroker(env, input, async (broker, at) => {
      const result = await which(input, broker);
      const code = result.answer === 'not-asked' ? 3 : 0;
      answer(io, json, { ...at, vhost: result.object.vhost }, answeredBy(result, broker, code), () =>
        whichText(result),
      );
      return code;
    });
  },
  async path({ words, json, env, io }) {
    const [{ parsePath, path, pathExitCode }, { pathText }] = await Promise.all([
      import('../commands/path/index.ts'),
      import('./path.ts'),
    ]);
    const input = parsePath(words, terminalDefaults(env));
    return withBroker(env, input, async (broker, at) => {
      const result = await path(input, broker, { env: at.env });
      const code = pathExitCode(result);
      const { env: _env, ...doc } = result;
      answer(io, json, { ...at, vhost: result.vhost }, answeredBy(doc, broker, code), () => pathText(result));
      return code;
    });
  },
  async preview({ words, json, env, io }) {
    // Loaded when asked for: `which`, the common question, does not pay for the simulation.
    const [
      { parsePreview, previewExitCode, previewIncompleteWords, previewJson },
      { preview },
      { previewText },
    ] = await Promise.all([
      import('../commands/preview/index.ts'),
      import('../preview/index.ts'),
      import('./preview.ts'),
    ]);
    const input = parsePreview(words, {}, { defaults: terminalDefaults(env) });
    return withBroker(env, input, async (broker, at) => {
      const result = await preview(input, broker);
      const code = previewExitCode(result);
      answer(
        io,
        json,
        { ...at, vhost: result.change.vhost },
        answeredBy(previewJson(result), broker, result.status === 'answered' ? 'answered' : code),
        () => previewText(result),
      );
      if (!json && result.status === 'refused')
        io.err(`rmq: refused: ${result.refusals.map((p) => p.message).join(' ')}\n`);
      sayIncomplete(io, previewIncompleteWords(result, quoted));
      return code;
    });
  },
  async import({ words, json, env, io }) {
    const [{ parseImport, sendImport }, { postImport }, { readDefinitionsInput }, { importedText }] =
      await Promise.all([
        import('../commands/import/index.ts'),
        import('./importClient.ts'),
        import('./readFile.ts'),
        import('./import.ts'),
      ]);
    const input = parseImport(words, terminalDefaults(env));
    const config = loadTerminalConfig(env);
    const { url, token } = config.bot;
    if (!url || !token)
      throw new ConfigError(
        'import files the set through the bot: set RMQ_BOT_URL (its base URL) and RMQ_BOT_TOKEN (a token of its RMQ_API_TOKENS).',
      );
    const read = await readDefinitionsInput(input.file);
    const sent = await sendImport(input, read, (body) => postImport(url, token, body));
    if (sent.status === 'failed') {
      if (json) io.out(asJson({ error: sent.error }));
      io.err(`rmq: ${sent.error.message}\n`);
      return sent.exitCode;
    }
    answer(io, json, { env: sent.answer.env, vhost: sent.answer.request.vhost }, sent.answer, () =>
      importedText(sent.answer, input.file),
    );
    return 0;
  },
  async plan({ words, json, env, io }) {
    const [
      { parsePlan, planExitCode, planIncompleteWords, planJson, planReadOptions, planVhosts, runPlan },
      { planText },
      { readDefinitionsAt },
    ] = await Promise.all([
      import('../commands/plan/index.ts'),
      import('./plan.ts'),
      import('./readFile.ts'),
    ]);
    const input = parsePlan(words);
    const read = await readDefinitionsAt(input.file, planReadOptions(input));
    // A file of several vhosts names them at its top; the last line names the environment.
    const vhosts = planVhosts(input, read);
    // RMQ_VHOSTS is checked against the vhosts the file is planned in, not a default.
    return withBroker(env, { env: input.env, vhost: vhosts }, async (broker, at) => {
      const result = await runPlan(input, read, broker);
      const code = planExitCode(result, input.detailedExitcode);
      answer(
        io,
        json,
        { ...at, ...(vhosts.length === 1 ? { vhost: vhosts[0] } : {}) },
        answeredBy(planJson(result), broker, result.status === 'planned' ? 'answered' : code),
        () => planText(result),
      );
      if (!json && result.status === 'refused') io.err(`rmq: refused: ${result.problems.join(' ')}\n`);
      sayIncomplete(io, planIncompleteWords(result, quoted));
      return code;
    });
  },
  async requests({ words, json, env, io, options }) {
    const { parseRequests, requests } = await import('../commands/requests/index.ts');
    const { requestsText } = await import('./requests.ts');
    const input = parseRequests(words);
    const { withRedis } = await import('./cliRedis.ts');
    return withRedis(env, io, async (redis) => {
      const { RequestStore } = await import('../workflow/index.ts');
      const { FreezeStore } = await import('../workflow/index.ts');
      const prefix = options.keyPrefix ?? DEFAULT_KEY_PREFIX;
      const store = new RequestStore(redis, prefix);
      const freezes = new FreezeStore(redis, prefix);
      const result = await requests(input, {
        listOpen: (e) => store.listOpen(e),
        listUnreviewed: (e) => store.listUnreviewed(e),
        frozen: () => freezes.all(new Date()),
      });
      answer(io, json, { env: input.env ?? null }, result, () => requestsText(result));
      return 0;
    });
  },
  async history({ words, json, env, io, options }) {
    const { history, historyExitCode, parseHistory, verifySentence } = await import(
      '../commands/history/index.ts'
    );
    const { historyText } = await import('./history.ts');
    const input = parseHistory(words);
    return withTrail(env, io, options, async (trail) => {
      const { readAuditLog } = await import('../audit/index.ts');
      const result = await history(input, trail, readAuditLog);
      answer(io, json, { env: input.env ?? null, vhost: input.vhost }, result, () => historyText(result));
      if (result.verify && !result.verify.ok) io.err(`rmq: ${verifySentence(result.verify)}\n`);
      return historyExitCode(result);
    });
  },
};

/**
 * `--version`: the package's name and version, read from its package.json: one folder up from the
 * bundle in `dist/`, two from this source file in `src/terminal/` (`npm run rmq`).
 */
const version: TerminalCommand = async ({ io }) => {
  const pkg = JSON.parse(
    readFileSync(
      new URL(import.meta.url.endsWith('.ts') ? '../../package.json' : '../package.json', import.meta.url),
      'utf8',
    ),
  ) as {
    name: string;
    version: string;
  };
  io.out(`${pkg.name} ${pkg.version}\n`);
  return 0;
};

/** The handler a first word names; no word, `--help` and `-h` are `help`; `--version` and `-V` the version. */
function terminalCommand(word: string | undefined): TerminalCommand | undefined {
  if (word === undefined || word === '--help' || word === '-h') return TERMINAL_COMMANDS.help;
  if (word === '--version' || word === '-V') return version;
  return Object.hasOwn(TERMINAL_COMMANDS, word) ? TERMINAL_COMMANDS[word as TerminalCommandName] : undefined;
}

export async function runCli(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  io: Io = stdio,
  cliOptions: CliOptions = {},
): Promise<number> {
  const [command, ...rest] = argv;
  // `--json` is an option only before `--`; after it, every word is a name.
  const end = rest.indexOf('--');
  const options = end < 0 ? rest : rest.slice(0, end);
  const json = options.includes('--json');
  const words = [...options.filter((w) => w !== '--json'), ...(end < 0 ? [] : rest.slice(end))];
  try {
    const run = terminalCommand(command);
    if (!run) throw new InputError(`Unknown command ${JSON.stringify(command)}.`, { hint: helpText('rmq') });
    return await run({ words, json, env, io, options: cliOptions });
  } catch (err) {
    if (err instanceof InputError || err instanceof ConfigError) {
      const help = err instanceof InputError ? [err.hint, err.usage].filter(Boolean) : [];
      if (json) io.out(`${jsonText({ error: { code: err.code, message: err.message } })}\n`);
      io.err(`rmq: ${[err.message, ...help].join('\n')}\n`);
      return 2;
    }
    if (err instanceof RabbitError) {
      // Whatever the command did not turn into an answer of its own: the broker was not asked.
      const reason = brokerReason(err);
      const message = reason ? `the broker refused the request: ${reason}` : err.message;
      if (json) io.out(`${jsonText({ error: { code: err.code, message, status: err.status } })}\n`);
      io.err(`rmq: ${message}\n`);
      return 3;
    }
    const message = err instanceof Error ? err.message : String(err);
    io.err(`rmq: ${message}\n`);
    return 1;
  }
}

/** The terminal's own defaults live in the environment (`RMQ_VHOST`), never in Redis. */
function terminalDefaults(env: NodeJS.ProcessEnv): { vhost?: string } {
  return env.RMQ_VHOST ? { vhost: env.RMQ_VHOST } : {};
}

/** The process: `.env` read when present, then the command line. `bin/rmq.js` calls this. */
export async function cliMain(): Promise<never> {
  // dotenv (and the crypto it loads for its vaults) only where there is a .env to read (bench/cli).
  if (existsSync('.env')) (await import('dotenv')).config({ quiet: true });
  // A reader that leaves first (`| head`) is not an error of ours: what it did not take is dropped.
  for (const stream of [process.stdout, process.stderr]) stream.on('error', () => {});
  const code = await runCli(process.argv.slice(2), process.env);
  // Exiting here spares the ~0.1 s the broker takes to close the pool's sockets (bench/cli), but
  // only once the answer is out: to a pipe, stdout is asynchronous, and `process.exit` drops what
  // a slow reader (`| jq`) has not taken yet (`history --json | wc -c` once gave 65,536).
  await Promise.all([written(process.stdout), written(process.stderr)]);
  process.exit(code);
}

/** Resolves once everything written to `stream` before it has been handed to the system. */
function written(stream: NodeJS.WriteStream): Promise<void> {
  return new Promise((resolve) => {
    if (stream.destroyed || stream.writableEnded) resolve();
    else stream.write('', () => resolve());
  });
}

if (import.meta.url === `file://${process.argv[1]}`) void cliMain();
