/**
 * Configuration that would weaken an environment without a word (issue 28, item 8), through the
 * compiled bot (`dist/main.js`) as a process started with its environment only: it refuses to
 * start (exit 1) with the one sentence naming the file or variable, the key and what is wrong,
 * before it asks anything of a broker, Redis or Slack (nothing listens on the addresses given).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnBot } from '../support/botProcess.ts';
import { built } from '../support/built.ts';

const cwd = mkdtempSync(join(tmpdir(), 'rmq-config-refused-'));
let mainJs: string;

beforeAll(async () => {
  mainJs = join((await built()).outdir, 'main.js');
}, 180_000);

afterAll(() => rmSync(cwd, { recursive: true, force: true }));

/** Settings that would otherwise start the bot: Slack, Redis and the broker on closed ports. */
const base = {
  HOME: cwd,
  SLACK_BOT_TOKEN: 'xoxb-test',
  SLACK_SIGNING_SECRET: 'secret',
  SLACK_API_URL: 'http://127.0.0.1:9/api/',
  REDIS_URL: 'redis://127.0.0.1:9',
  RMQ_URL: 'http://127.0.0.1:9',
  LOG_LEVEL: 'silent',
};

function environments(keys: string): string {
  const file = join(cwd, `environments-${Math.random().toString(36).slice(2)}.yml`);
  writeFileSync(
    file,
    `environments:\n  - { name: lab, url: "http://127.0.0.1:9", userEnv: LAB_USER, passwordEnv: LAB_PASSWORD, ${keys} }\n`,
  );
  return file;
}

describe('the compiled bot refuses to start on configuration that weakens an environment', () => {
  it.each([
    [
      'approvalsRequired: true',
      (f: string) =>
        `RMQ_ENVIRONMENTS (${f}): environments.0.approvalsRequired: a positive whole number such as 2, not true.`,
    ],
    [
      'approvalsRequied: 3',
      (f: string) =>
        `RMQ_ENVIRONMENTS (${f}): environments.0: "approvalsRequied" is not a key here (did you mean approvalsRequired?).`,
    ],
    [
      'breakglass: { allowed: false }',
      (f: string) =>
        `RMQ_ENVIRONMENTS (${f}): environments.0: "breakglass" is not a key here (did you mean breakGlass?).`,
    ],
    [
      'approvers: [UAPPROVER, "@bob"]',
      (f: string) =>
        `RMQ_ENVIRONMENTS (${f}): environments.0.approvers.1: "@bob" is not a Slack user id (U…, W…) or user-group id (S…), such as U024BE7LH or S0614TZR7.`,
    ],
  ])('in the environments file: %s', async (keys, sentence) => {
    const file = environments(keys);
    const bot = spawnBot(mainJs, { ...base, RMQ_ENVIRONMENTS: file, LAB_USER: 'u', LAB_PASSWORD: 'p' }, cwd);
    expect(await bot.exited).toBe(1);
    expect(bot.stderr()).toBe(`rmq bot: ${sentence(file)}\n`);
  });

  it.each([
    [
      { SLACK_APPROVERS: 'UAPPROVER,UAPPROVER', RMQ_APPROVALS_REQUIRED: '2' },
      'Invalid configuration: SLACK_APPROVERS: UAPPROVER is listed twice: each id counts once, so list it once. See .env.example.',
    ],
    [
      { SLACK_APPROVERS: 'S0SRE', RMQ_APPROVALS_REQUIRED: 'true' },
      'Invalid configuration: RMQ_APPROVALS_REQUIRED: a positive whole number such as 2. See .env.example.',
    ],
    [
      { SLACK_APPROVERS: 'U0ALICE,U0BOB', RMQ_APPROVALS_REQUIRED: '2' },
      'RMQ_APPROVALS_REQUIRED: 2 approvals required and 2 approvers configured (U0ALICE, U0BOB), but anyone may file requests: a request of U0ALICE could never be approved, as nobody approves their own. Lower it, add an approver or a user group, or leave the approvers out of the requesters.',
    ],
  ])('in the variables: %j', async (vars, sentence) => {
    const bot = spawnBot(mainJs, { ...base, ...vars }, cwd);
    expect(await bot.exited).toBe(1);
    expect(bot.stderr()).toBe(`rmq bot: ${sentence}\n`);
  });
});

/**
 * RMQ_API_TOKENS: a token names who files (`api:NAME`), and travels as `Authorization: Bearer
 * TOKEN`. One token under two names would file every import as the last name; a token with a
 * space or a control character could never be presented. Refused at start, the token never said.
 */
describe('the compiled bot refuses RMQ_API_TOKENS it could not hold to its word', () => {
  const T = 'a0b1c2d3e4f5a6b7c8d9';
  const OTHER = 'f9e8d7c6b5a4f3e2d1c0';
  it.each([
    [
      `ci:${T},ops:${T}`,
      'ci and ops have the same token, so a request filed with it could not say which of them filed it: give each name a token of its own',
    ],
    [`ci:${T},ci:${OTHER}`, 'the name ci is listed twice (entry 2): each name once, with a token of its own'],
    [
      `ci:${T.slice(0, 10)} ${T.slice(10)}`,
      'the token of ci (entry 1) has a space or other white space (character 11), which an Authorization header cannot carry: a token is letters, digits and visible punctuation (openssl rand -hex 24)',
    ],
    [
      `ci:${OTHER},ops:${T}\u0007`,
      'the token of ops (entry 2) has a control character (character 21), which an Authorization header cannot carry: a token is letters, digits and visible punctuation (openssl rand -hex 24)',
    ],
  ])('%j', async (tokens, sentence) => {
    const bot = spawnBot(mainJs, { ...base, RMQ_API_TOKENS: tokens }, cwd);
    expect(await bot.exited).toBe(1);
    expect(bot.stderr()).toBe(
      `rmq bot: Invalid configuration: RMQ_API_TOKENS: ${sentence}. See .env.example.\n`,
    );
    for (const secret of [T, OTHER, T.slice(0, 10), T.slice(10)]) expect(bot.output()).not.toContain(secret);
  });
});
