import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // dist/ built once per run for every suite that runs what ships (test/support/built.ts).
    globalSetup: ['test/support/globalBuild.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Integration suites each make their own vhost / key prefix, so files may run in parallel.
    fileParallelism: true,
    maxWorkers: 2,
  },
});
