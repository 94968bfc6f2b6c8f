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
    // Four on two cores: most of a run is waiting on the brokers (their statistics lag, their
    // polls), not the CPU. With 2 the load stayed about 1 and .ci/run took 22 min of its 25.
    maxWorkers: 4,
  },
});
