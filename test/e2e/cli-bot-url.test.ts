/**
 * The terminal's `import` (the package's `bin/rmq.js`) against a server at RMQ_BOT_URL that is
 * not the bot, or not only the bot: a path that does not exist there (404 with a JSON body of
 * another service's own, or a proxy's HTML page), a proxy failing in front of it, a 200 of
 * something else. Each is said as such, naming RMQ_BOT_URL, the address posted to and what to
 * check, exit 3 (the bot was not asked), and never as `rmq: undefined`. A bot served under a path
 * is posted to under that path. A token that an Authorization header cannot carry is refused
 * before anything is sent.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Built, built } from '../support/built.ts';
import { runBuiltRmq } from '../support/cli.ts';

const TOKEN = 'ci-token-0123456789abcdef';
const cwd = mkdtempSync(join(tmpdir(), 'rmq-bot-url-'));
const file = join(cwd, 'definitions.json');
let pkg: Built;
let server: Server;
let base: string;
/** What the server answers each path: status, content type and body. */
const answers = new Map<string, [number, string, string]>();
const asked: { method: string; path: string }[] = [];

beforeAll(async () => {
  pkg = await built();
  writeFileSync(file, JSON.stringify({ policies: [] }));
  server = createServer((req: IncomingMessage, res) => {
    asked.push({ method: req.method ?? '', path: req.url ?? '' });
    req.resume();
    const [status, type, body] = answers.get(req.url ?? '') ?? [
      404,
      'application/json',
      '{"error":"unknown"}',
    ];
    res.writeHead(status, { 'content-type': type });
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  rmSync(cwd, { recursive: true, force: true });
});

const importAt = (botUrl: string, extra: readonly string[] = [], token = TOKEN) =>
  runBuiltRmq(
    pkg.bin,
    ['import', file, '--vhost', 'orders', '--reason', 'a test', ...extra],
    { RMQ_BOT_URL: botUrl, RMQ_BOT_TOKEN: token },
    cwd,
  );

describe('import to a server at RMQ_BOT_URL that does not answer as the bot', () => {
  const PATH =
    "check RMQ_BOT_URL's path: it is the bot's base URL, where GET /livez answers, and import posts to api/import under it";
  const NOT_AS_THE_BOT = ', and not as the bot answers';

  it('404 {"error":"unknown"}: the address posted to and its path to check, exit 3, never "undefined"', async () => {
    const run = await importAt(base);
    expect(run.code).toBe(3);
    expect(run.err).toBe(
      `rmq: the server at RMQ_BOT_URL answered HTTP 404 to POST ${base}/api/import${NOT_AS_THE_BOT}: ${PATH}\n`,
    );
    expect(run.out).toBe('');
  });

  it('the same under --json: the error document, its message the sentence', async () => {
    const run = await importAt(base, ['--json']);
    expect(run.code).toBe(3);
    const doc = JSON.parse(run.out) as { error: { code: string; message: string } };
    expect(doc.error.code).toBe('bot-unreachable');
    expect(run.err).toBe(`rmq: ${doc.error.message}\n`);
    expect(doc.error.message).toMatch(/^the server at RMQ_BOT_URL answered HTTP 404 to POST /);
  });

  it.each([
    ['/html-404', [404, 'text/html', '<html>Not Found</html>'], `, not JSON: ${PATH}`],
    ['/ok', [200, 'application/json', '{"ok":true}'], `${NOT_AS_THE_BOT}: ${PATH}`],
    [
      '/gateway',
      [502, 'text/html', '<html>Bad Gateway</html>'],
      ', not JSON: something in front of the bot failed; the set may be filed all the same: see requests',
    ],
    [
      '/limit',
      [413, 'application/json', '{"message":"Request Entity Too Large"}'],
      `${NOT_AS_THE_BOT}: something in front of the bot refused it: check RMQ_BOT_URL and what stands in front of the bot`,
    ],
  ] as const)('%s', async (path, answer, said) => {
    answers.set(`${path}/api/import`, [...answer]);
    const run = await importAt(`${base}${path}`);
    expect(run.code).toBe(3);
    expect(run.err).toBe(
      `rmq: the server at RMQ_BOT_URL answered HTTP ${answer[0]} to POST ${base}${path}/api/import${said}\n`,
    );
  });

  it("a bot served under a path is posted to under it, and its refusal is the bot's sentence", async () => {
    answers.set('/rmq-bot/api/import', [
      400,
      'application/json',
      JSON.stringify({
        error: { code: 'bad-input', message: 'The file names no policy: nothing was filed.' },
      }),
    ]);
    const before = asked.length;
    const run = await importAt(`${base}/rmq-bot`);
    expect(asked.slice(before)).toEqual([{ method: 'POST', path: '/rmq-bot/api/import' }]);
    expect(run.code).toBe(2);
    expect(run.err).toBe('rmq: The file names no policy: nothing was filed.\n');
  });

  it('a token with a space is refused before anything is sent, without saying the token', async () => {
    const before = asked.length;
    const run = await importAt(base, [], 'ci-token-01234 56789abcdef');
    expect(run.code).toBe(2);
    expect(run.err).toBe(
      'rmq: Invalid configuration: RMQ_BOT_TOKEN: the token has a space or other white space (character 15), which an Authorization header cannot carry: a token is letters, digits and visible punctuation (openssl rand -hex 24). See .env.example.\n',
    );
    expect(run.err).not.toContain('56789abcdef');
    expect(asked.length).toBe(before);
  });
});
