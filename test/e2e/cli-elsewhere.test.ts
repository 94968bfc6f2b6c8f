/**
 * The terminal command where the bot is not checked out, as a CI job runs it: the `npx` line of
 * docs/plan.md's GitHub Actions recipe, word for word, from an empty folder, with `RMQ_BOT`
 * naming this repository at a commit (a copy of the working tree made a git repository of its
 * own, as a clone of the commit would be). npm clones it, builds it (`prepare`), packs what
 * `files` names and runs `bin/rmq.js`: `--version`, then `plan` of a file against the broker.
 * npm's own cache (`~/.npm`) is used as a job that keeps it between runs would; the install is
 * the package's own, so nothing is taken from the registry under the name `rmq`.
 *
 * And `npx rmq` in a checkout of the bot (the README's first command) on this machine's Node
 * (20): no EBADENGINE warning.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { adminClient, brokerCredentials, brokerUrl, uniqueName } from '../support/broker.ts';
import { repoRoot } from '../support/built.ts';

const home = mkdtempSync(join(tmpdir(), 'rmq-elsewhere-'));
const admin = adminClient();
const vhost = uniqueName('elsewhere');
const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
};

interface Ran {
  readonly code: number;
  readonly out: string;
  readonly err: string;
}

/**
 * `command` run by `sh` in `cwd` with `env` and PATH and HOME only: none of the npm_* variables of
 * a test run started by `npm test` (npm_package_json would name this checkout).
 */
function sh(command: string, cwd: string, env: Record<string, string> = {}): Promise<Ran> {
  return new Promise((resolve) => {
    execFile(
      'sh',
      ['-c', command],
      {
        cwd,
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? homedir(), ...env },
        timeout: 240_000,
        maxBuffer: 16 << 20,
      },
      (err, out, errOut) =>
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, out, err: errOut }),
    );
  });
}

/** The GitHub Actions recipe of docs/plan.md: its `npx` line and the `RMQ_BOT` it names. */
function recipe(): { line: string; rmqBot: string } {
  const doc = readFileSync(join(repoRoot, 'docs/plan.md'), 'utf8');
  const block = [...doc.matchAll(/^```yaml\n([\s\S]*?)^```$/gm)]
    .map((m) => m[1] ?? '')
    .find((b) => b.includes('runs-on:'));
  if (!block) throw new Error('docs/plan.md has no GitHub Actions recipe');
  const job = parseYaml(block) as {
    jobs: Record<string, { steps: { run?: string; env?: Record<string, string> }[] }>;
  };
  const step = Object.values(job.jobs)
    .flatMap((j) => j.steps)
    .find((s) => s.run?.includes('npx'));
  const line = step?.run
    ?.split('\n')
    .map((l) => l.trim())
    .find((l) => l.startsWith('npx '));
  if (!step || !line) throw new Error('the recipe has no npx line');
  return { line, rmqBot: step.env?.RMQ_BOT ?? '' };
}

/** The working tree as a git repository of its own: what a clone of it, committed, would hold. */
async function snapshot(to: string): Promise<string> {
  const listed = await sh('git ls-files -co --exclude-standard -z', repoRoot);
  expect(listed.code, listed.err).toBe(0);
  for (const path of listed.out.split('\0').filter(Boolean)) {
    const from = join(repoRoot, path);
    if (!existsSync(from)) continue; // deleted in the working tree, not yet in a commit
    mkdirSync(dirname(join(to, path)), { recursive: true });
    copyFileSync(from, join(to, path));
    chmodSync(join(to, path), statSync(from).mode);
  }
  const git = 'git -c user.name=rmq-test -c user.email=rmq-test@localhost -c commit.gpgsign=false';
  const made = await sh(`git init -q && git add -A && ${git} commit -qm snapshot && git rev-parse HEAD`, to);
  expect(made.code, made.err).toBe(0);
  return made.out.trim();
}

const repo = join(home, 'rmq-policy-bot');
let spec = '';

beforeAll(async () => {
  mkdirSync(repo);
  spec = `git+file://${repo}#${await snapshot(repo)}`;
  await admin.putVhost(vhost);
}, 120_000);

afterAll(async () => {
  await admin.deleteVhost(vhost);
  await admin.close();
  rmSync(home, { recursive: true, force: true });
  // npx keeps each package it installed in ~/.npm/_npx/<the first 16 hex digits of the sha512 of
  // its spec>: this commit's is never asked for again.
  const npx = join(homedir(), '.npm', '_npx', createHash('sha512').update(spec).digest('hex').slice(0, 16));
  if (spec) rmSync(npx, { recursive: true, force: true });
});

describe("docs/plan.md's CI recipe, run as a job runs it", () => {
  it('names the bot by its repository at a commit, never a package of the registry', () => {
    const { line, rmqBot } = recipe();
    expect(line).toMatch(/^npx --yes -p "\$RMQ_BOT" rmq plan /);
    expect(rmqBot).toMatch(/^github:[\w.-]+\/[\w.-]+#\S+$/);
  });

  it('from an empty folder: --version, then plan of a file against the broker (exit 4, the change in plan.txt)', async () => {
    const { line } = recipe();
    const job = mkdtempSync(join(home, 'job-'));
    const { user, password } = brokerCredentials();
    const env = {
      RMQ_BOT: spec,
      RMQ_URL: brokerUrl(),
      RMQ_USER: user,
      RMQ_PASSWORD: password,
      // As a job that keeps ~/.npm: what is in the cache is not asked of the registry again.
      npm_config_prefer_offline: 'true',
    };

    const version = await sh(`${line.slice(0, line.indexOf(' rmq ') + ' rmq'.length)} --version`, job, env);
    expect(version.err).not.toMatch(/EBADENGINE|gitignore-fallback|not built yet/);
    expect(version.code, version.err).toBe(0);
    expect(version.out).toBe(`${pkg.name} ${pkg.version}\n`);

    const definitions = join(job, 'definitions.json');
    const name = 'ci-recipe-cap';
    const policy = {
      vhost,
      name,
      pattern: '^orders\\.',
      'apply-to': 'queues',
      definition: { 'max-length': 10 },
      priority: 0,
    };
    writeFileSync(definitions, JSON.stringify({ policies: [policy] }));
    const plan = await sh(`${line}; echo "exit $?"`, job, env);
    expect(plan.out, plan.err).toBe('exit 4\n');
    const text = readFileSync(join(job, 'plan.txt'), 'utf8');
    expect(text).toContain(`Plan for vhost "${vhost}"`);
    expect(text).toContain(`1. create policy "${name}" in vhost "${vhost}"`);
    expect(await admin.getPolicy('user', vhost, name)).toBeNull();
  }, 300_000);
});

describe("npx rmq in the bot's checkout, on this machine's Node", () => {
  it("answers without npm's EBADENGINE warning (engines allows every line the CI tests)", async () => {
    // The copy of the working tree as a checkout after `npm ci` (its packages this one's): npx
    // links the package into a cache of the test's own, running its `prepare` (the build) there.
    symlinkSync(join(repoRoot, 'node_modules'), join(repo, 'node_modules'));
    const run = await sh('npx rmq --version', repo, { npm_config_cache: join(home, 'npm-cache') });
    expect(run.err).not.toContain('EBADENGINE');
    expect(run.code, run.err).toBe(0);
    expect(run.out).toBe(`${pkg.name} ${pkg.version}\n`);
  }, 120_000);
});
