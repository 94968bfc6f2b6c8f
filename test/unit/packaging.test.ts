/**
 * What the image and the laptop trial rely on, read from the files themselves (there is no
 * container engine on the test machine): the Dockerfile copies only what exists, installs
 * production dependencies only, runs compiled JavaScript as a non-root user in exec form and
 * checks /livez, on a Node line that is still supported, that `engines` allows and .ci/run's
 * second run names; the image runs the terminal command as `rmq` too; compose.yaml keeps Redis's append-only file and enables the event exchange; tsx is
 * for development only.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { repoRoot } from '../support/built.ts';

const read = (path: string) => readFileSync(join(repoRoot, path), 'utf8');
const dockerfile = read('Dockerfile');
/** Instructions with their continuation lines joined. */
const instructions = dockerfile
  .replace(/\\\n/g, ' ')
  .split('\n')
  .filter((l) => l.trim() !== '' && !l.trim().startsWith('#'));
const stages = instructions
  .join('\n')
  .split(/^FROM /m)
  .slice(1);
const finalStage = stages.at(-1) ?? '';

describe('Dockerfile', () => {
  it('copies from the build context only paths that exist', () => {
    const sources = instructions
      .filter((l) => /^COPY /.test(l) && !l.includes('--from='))
      .flatMap((l) =>
        l
          .replace(/^COPY\s+/, '')
          .split(/\s+/)
          .slice(0, -1),
      );
    expect(sources.length).toBeGreaterThan(3);
    for (const source of sources) expect(existsSync(join(repoRoot, source)), source).toBe(true);
  });

  it('runs dist/main.js in exec form, as a non-root user, with production dependencies only', () => {
    expect(finalStage).toMatch(/^CMD \["node", "dist\/main\.js"\]$/m);
    const user = finalStage.match(/^USER (\S+)$/m)?.[1];
    expect(user).toBeDefined();
    expect(user).not.toMatch(/^(root|0)$/);
    expect(finalStage).not.toMatch(/^RUN npm ci(?!.*--omit=dev)/m);
    expect(
      stages.some((s) => /^RUN npm ci --omit=dev/m.test(s)),
      'a stage installing with --omit=dev',
    ).toBe(true);
    expect(finalStage).toMatch(/COPY --from=\S+ \/app\/dist \.\/dist/);
    expect(finalStage).not.toMatch(/tsx/);
  });

  it('checks /livez (the process alone, never a broker)', () => {
    expect(finalStage).toMatch(/^HEALTHCHECK .*\/livez/m);
  });
});

/**
 * Node's LTS lines and their ends of life (nodejs.org's release schedule; Node 20's ended on
 * 2026-04-30). A line past its end is no base for the image.
 */
const NODE_LTS_END_OF_LIFE: Record<number, string> = {
  22: '2027-04-30',
  24: '2028-04-30',
  26: '2029-04-30',
};

describe('the Node the image runs', () => {
  const majors = [...dockerfile.matchAll(/^FROM node:(\d+)-/gm)].map((m) => Number(m[1]));

  it('is one supported LTS line in every stage', () => {
    expect(majors.length).toBe(stages.length);
    expect(new Set(majors).size).toBe(1);
    const end = NODE_LTS_END_OF_LIFE[majors[0] as number];
    expect(end, `node:${majors[0]} is no LTS line of the table`).toBeDefined();
    expect(Date.parse(end as string), `node:${majors[0]} reached its end of life on ${end}`).toBeGreaterThan(
      Date.now(),
    );
  });

  it('is a line engines allows, and one .ci/run tests on as well', () => {
    const pkg = JSON.parse(read('package.json')) as { engines: { node: string } };
    const oldest = Number(/^>=(\d+)$/.exec(pkg.engines.node)?.[1]);
    expect(majors[0]).toBeGreaterThanOrEqual(oldest);
    const second = /npx -y -p node@(\d+)\.\d+\.\d+ -- sh -c '([^']*)'/.exec(read('.ci/run'));
    expect(second?.[1], '.ci/run runs the tests on the image line').toBe(String(majors[0]));
    expect(second?.[2]).toContain('vitest run test/unit test/e2e/cli-built.test.ts');
  });
});

/**
 * `engines` is every line the CI runs the suites on, no narrower: npm warns (EBADENGINE) on each
 * `npx rmq` of a Node it excludes, and the machine's own Node runs every suite
 * (test/e2e/cli-elsewhere.test.ts runs `npx rmq` on it and finds no warning).
 */
describe('engines', () => {
  it('allows Node 20, the line every suite runs on, and every later one', () => {
    const pkg = JSON.parse(read('package.json')) as { engines: { node: string } };
    expect(pkg.engines.node).toBe('>=20');
    expect(read('README.md')).toMatch(
      /Node: 20 or later[\s\S]*Node 20 reached its end of life on 2026-04-30/,
    );
  });
});

/**
 * The image runs the terminal command too (docs/plan.md, for a CI job that has the image and not
 * the checkout): `docker run … rmq-bot rmq plan /defs/definitions.json`. There is no container
 * engine here, so what it relies on is read from the files.
 */
describe('the terminal command in the image', () => {
  it('is `rmq` on the PATH, bin/rmq.js beside dist/, and a command replaces CMD (no ENTRYPOINT)', () => {
    expect(finalStage).toMatch(/^RUN ln -s \/app\/bin\/rmq\.js \/usr\/local\/bin\/rmq$/m);
    expect(finalStage).toMatch(/^WORKDIR \/app$/m);
    expect(finalStage).toMatch(/^COPY bin \.\/bin$/m);
    expect(finalStage).toMatch(/^COPY package\.json \.\/$/m);
    expect(instructions.some((l) => /^ENTRYPOINT /.test(l))).toBe(false);
    // The symlink runs the file itself: its `#!/usr/bin/env node` and its mode, as git keeps them.
    expect(read('bin/rmq.js').startsWith('#!/usr/bin/env node\n')).toBe(true);
    expect(statSync(join(repoRoot, 'bin/rmq.js')).mode & 0o111).not.toBe(0);
  });
});

/**
 * The package as npm packs it (a git dependency, `npm pack`): `.gitignore` leaves `dist/` out,
 * so `files` must name it, or `bin/rmq.js` of an installed package finds nothing to run.
 */
describe('what the package holds', () => {
  it('bin/ and dist/, whatever .gitignore leaves out', () => {
    const pkg = JSON.parse(read('package.json')) as { files?: string[]; bin: Record<string, string> };
    expect(read('.gitignore')).toMatch(/^dist\/$/m);
    expect(pkg.files).toEqual(expect.arrayContaining(['bin/', 'dist/']));
    expect(pkg.bin.rmq).toBe('./bin/rmq.js');
  });
});

describe('compose.yaml', () => {
  const compose = parseYaml(read('compose.yaml')) as {
    services: Record<
      string,
      { image?: string; build?: string; command?: string[]; environment?: object; volumes?: string[] }
    >;
  };

  it("enables the broker's event exchange beside the management plugin", () => {
    const mount = compose.services.rabbitmq?.volumes?.find((v) =>
      v.includes(':/etc/rabbitmq/enabled_plugins'),
    );
    expect(mount, 'an enabled_plugins file mounted into the broker').toBeDefined();
    const file = read((mount as string).split(':')[0] as string);
    // An Erlang term: one list of plugin names, ended by a full stop.
    const names = /^\[([a-z_,\s]+)\]\.\s*$/
      .exec(file)?.[1]
      ?.split(',')
      .map((n) => n.trim());
    expect(names).toEqual(expect.arrayContaining(['rabbitmq_management', 'rabbitmq_event_exchange']));
  });

  it('starts RabbitMQ with the management plugin, Redis with its append-only file, and the bot', () => {
    expect(compose.services.rabbitmq?.image).toMatch(/management/);
    expect(compose.services.redis?.command?.join(' ')).toMatch(/--appendonly yes/);
    expect(compose.services.bot?.build).toBe('.');
    expect(compose.services.bot?.environment).toMatchObject({ REDIS_URL: 'redis://redis:6379' });
  });
});

describe('package.json', () => {
  const pkg = JSON.parse(read('package.json')) as {
    dependencies: Record<string, string>;
    devDependencies: Record<string, string>;
    scripts: Record<string, string>;
  };

  it('runs compiled JavaScript; tsx and esbuild are development tools', () => {
    expect(pkg.scripts.start).toBe('node dist/main.js');
    expect(read('bin/rmq.js')).toContain("require('../dist/cliLoader.cjs')");
    expect(pkg.dependencies.tsx).toBeUndefined();
    expect(pkg.devDependencies.tsx).toBeDefined();
    expect(pkg.dependencies.esbuild).toBeUndefined();
  });

  it('builds within npm test, so a broken build fails CI', () => {
    expect(pkg.scripts.test).toMatch(/npm run build/);
  });
});

describe('the README where it shows the image (issue 30, item 8)', () => {
  it('says beside docker run --env-file that localhost inside the container is the container', () => {
    const readme = read('README.md');
    const line = readme.split('\n').find((l) => /docker run[^\n]*--env-file/.test(l));
    expect(line, 'the README shows docker run --env-file').toBeDefined();
    expect(line).toMatch(/inside the container `localhost` is the container/);
    expect(line).toMatch(/RMQ_URL/);
    expect(line).toMatch(/REDIS_URL/);
  });
});

describe('the release', () => {
  const changelog = read('CHANGELOG.md');
  const { version } = JSON.parse(read('package.json')) as { version: string };
  const releases = [...changelog.matchAll(/^## \[([^\]]+)\](?: - (\d{4}-\d{2}-\d{2}))?$/gm)].map(
    ([, name = '', date]) => ({ name, date }),
  );

  it('is the newest version of CHANGELOG.md, kept as Keep a Changelog keeps them', () => {
    expect(releases[0]).toEqual({ name: 'Unreleased', date: undefined });
    expect(releases[1]?.name).toBe(version);
    for (const release of releases.slice(1)) expect(release.date, release.name).toMatch(/^\d{4}-/);
    const names = releases.slice(1).map((r) => r.name);
    const sorted = [...names].sort((a, b) => b.localeCompare(a, 'en', { numeric: true }));
    expect(names).toEqual(sorted);
  });

  it('names package-lock.json the same version', () => {
    const lock = JSON.parse(read('package-lock.json')) as {
      version: string;
      packages: Record<string, { version?: string }>;
    };
    expect(lock.version).toBe(version);
    expect(lock.packages['']?.version).toBe(version);
  });

  it('sorts every entry under Added, Changed, Deprecated, Removed, Fixed or Security', () => {
    const headings = [...changelog.matchAll(/^### (.+)$/gm)].map(([, h]) => h);
    expect(headings.length).toBeGreaterThan(0);
    for (const heading of headings)
      expect(['Added', 'Changed', 'Deprecated', 'Removed', 'Fixed', 'Security']).toContain(heading);
  });
});
