/**
 * A right-to-left override (U+202E) or another character that does not show, in a policy's name
 * or pattern, reaches every JSON a person may read as its `\uXXXX` escape, never raw: a screen
 * showing the document cannot be reordered by it, and a parser reads the same string. Through
 * what users run: the package's `bin/rmq.js` (`policies`, `which`, `plan` with `--json`, and an
 * error document), and the compiled bot (`dist/main.js`, its own Redis, the fake of Slack's Web
 * API): the answer of `POST /api/import` and the set's file attached to its request.
 */
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BotProcess, labBotEnv, labEnvironmentYaml, spawnBot } from '../support/botProcess.ts';
import { adminClient, brokerCredentials, brokerUrl, uniqueName, waitFor } from '../support/broker.ts';
import { type Built, built } from '../support/built.ts';
import { runBuiltRmq } from '../support/cli.ts';
import { type FakeSlack, sharedFileSince, startFakeSlack } from '../support/fakeSlack.ts';
import { type RedisServer, startRedisServer } from '../support/redisServer.ts';

const RLO = '\u202e';
/** What does not show, as users and the broker may hold it: bidi controls, a zero-width space. */
const HIDDEN = /[\u007f-\u009f\u00ad\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/;
const TOKEN = 'json-escapes-token-0123456789';
const vhost = uniqueName('json-escapes');
const admin = adminClient();
const cwd = mkdtempSync(join(tmpdir(), 'rmq-json-escapes-'));
/** Reads "cap" then, reversed on a screen, "live" backwards: the name a reviewer would misread. */
const NAME = `cap${RLO}live`;
const PATTERN = `^orders${RLO}`;
const QUEUE = `orders${RLO}txt.exe`;
let pkg: Built;

beforeAll(async () => {
  pkg = await built();
  await admin.putVhost(vhost);
  await admin.putQueue(vhost, QUEUE, { kind: 'classic' });
  await admin.putPolicy('user', {
    vhost,
    name: NAME,
    pattern: PATTERN,
    applyTo: 'queues',
    priority: 0,
    definition: { 'max-length': 10 },
  });
  // `which` answers as the broker reports the queue's policy: once it does.
  await waitFor(async () => (await admin.getQueue(vhost, QUEUE))?.policy === NAME, {
    what: 'the broker to report the policy on the queue',
  });
}, 120_000);

afterAll(async () => {
  await admin.deleteVhost(vhost);
  await admin.close();
  rmSync(cwd, { recursive: true, force: true });
});

const rmq = (args: readonly string[]) => {
  const { user, password } = brokerCredentials();
  return runBuiltRmq(pkg.bin, args, { RMQ_URL: brokerUrl(), RMQ_USER: user, RMQ_PASSWORD: password }, cwd);
};

/** The document: nothing hidden in its text, the U+202E as its escape, and parsed. */
function escapedDocument(text: string): unknown {
  expect(text).not.toMatch(HIDDEN);
  expect(text).toContain('\\u202e');
  return JSON.parse(text);
}

describe('--json with a U+202E in a name and a pattern', () => {
  it('policies --json: escaped, and parsed it is the name and pattern the broker holds', async () => {
    const run = await rmq(['policies', '--vhost', vhost, '--json']);
    expect(run.code, run.err).toBe(0);
    const doc = escapedDocument(run.out) as { policies: { name: string; pattern: string }[] };
    expect(doc.policies).toEqual([expect.objectContaining({ name: NAME, pattern: PATTERN })]);
  });

  it('which --json: the object, the policy in force and its pattern, each escaped', async () => {
    const run = await rmq(['which', QUEUE, '--vhost', vhost, '--json']);
    expect(run.code, run.err).toBe(0);
    const doc = escapedDocument(run.out) as {
      object: { name: string };
      inForce: { name: string; pattern: string } | null;
    };
    expect(doc.object.name).toBe(QUEUE);
    expect(doc.inForce).toMatchObject({ name: NAME, pattern: PATTERN });
  });

  it('plan --json: the changes of a file whose policies hold one', async () => {
    const file = join(cwd, 'plan.json');
    const created = `new${RLO}one`;
    writeFileSync(
      file,
      JSON.stringify({
        policies: [
          {
            vhost,
            name: NAME,
            pattern: PATTERN,
            'apply-to': 'queues',
            priority: 0,
            definition: { 'max-length': 20 },
          },
          {
            vhost,
            name: created,
            pattern: `^zz\u2066${RLO}`,
            'apply-to': 'queues',
            priority: 1,
            definition: { 'message-ttl': 1000 },
          },
        ],
      }),
    );
    const run = await rmq(['plan', file, '--vhost', vhost, '--json']);
    expect(run.code, run.err).toBe(0);
    const doc = escapedDocument(run.out) as { changes: { name?: string; policy?: string }[] };
    const names = doc.changes.map((c) => c.name ?? c.policy);
    expect(names).toEqual(expect.arrayContaining([NAME, created]));
    expect(run.out).toContain('\\u2066');
  });

  it('an error document: the words it repeats, escaped', async () => {
    const run = await rmq(['policies', '--vhost', vhost, '--env', `prod${RLO}`, '--json']);
    expect(run.code).toBe(2);
    const doc = escapedDocument(run.out) as { error: { message: string } };
    expect(doc.error.message).toContain(`prod${RLO}`);
  });
});

describe('the bot: the answer of POST /api/import and the set file it attaches', () => {
  let slack: FakeSlack;
  let redis: RedisServer;
  let bot: BotProcess;

  beforeAll(async () => {
    [slack, redis] = await Promise.all([startFakeSlack(), startRedisServer()]);
    const env = labBotEnv({
      cwd,
      environmentsYaml: labEnvironmentYaml(),
      slack,
      redisUrl: redis.url,
      signingSecret: 'json-escapes-signing-secret',
    });
    bot = spawnBot(
      realpathSync(join(pkg.outdir, 'main.js')),
      { ...env, RMQ_API_TOKENS: `ci:${TOKEN}`, RMQ_VHOSTS: vhost },
      cwd,
    );
    await bot.listening();
  }, 180_000);

  afterAll(async () => {
    bot?.child.kill('SIGKILL');
    await Promise.allSettled([slack?.close(), redis?.stop()]);
  });

  it('both escaped; parsed, the pattern is the one of the file', async () => {
    const edited = { 'apply-to': 'queues', priority: 0, definition: { 'max-length': 30 } };
    const mark = slack.calls.length;
    const res = await fetch(`http://127.0.0.1:${await bot.listening()}/api/import`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
      body: JSON.stringify({
        source: 'rlo.json',
        reason: 'a pattern with a right-to-left override',
        vhost,
        file: JSON.stringify({ policies: [{ name: NAME, pattern: PATTERN, ...edited }] }),
      }),
    });
    const text = await res.text();
    expect(res.status, text).toBe(201);
    const answer = escapedDocument(text) as { plan: { changes: { policy: string }[] } };
    expect(answer.plan.changes.map((c) => c.policy)).toEqual([NAME]);

    const file = await sharedFileSince(slack, mark);
    expect(file.filename).toMatch(/^set-/);
    const content = file.content ?? '';
    expect(content).not.toMatch(HIDDEN);
    const after = /^ {3}after: {2}(.*)$/m.exec(content)?.[1] ?? '';
    expect(JSON.parse(after)).toMatchObject({ pattern: PATTERN, definition: { 'max-length': 30 } });
  });
});
