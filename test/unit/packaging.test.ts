/**
 * What the image and the laptop trial rely on, read from the files themselves (there is no
 * container engine on the test machine): the Dockerfile copies only what exists, installs
 * production dependencies only, runs compiled JavaScript as a non-root user in exec form and
 * checks /livez; compose.yaml keeps Redis's append-only file; tsx is for development only.
 */
import { existsSync, readFileSync } from 'node:fs';
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

describe('compose.yaml', () => {
  const compose = parseYaml(read('compose.yaml')) as {
    services: Record<string, { image?: string; build?: string; command?: string[]; environment?: object }>;
  };

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
    expect(read('bin/rmq.js')).toContain("import('../dist/cli.js')");
    expect(pkg.dependencies.tsx).toBeUndefined();
    expect(pkg.devDependencies.tsx).toBeDefined();
    expect(pkg.dependencies.esbuild).toBeUndefined();
  });

  it('builds within npm test, so a broken build fails CI', () => {
    expect(pkg.scripts.test).toMatch(/npm run build/);
  });
});
