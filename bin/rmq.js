#!/usr/bin/env node
// The package's `bin`: the compiled CLI. `npm ci` builds it (the `prepare` script); after
// changing the sources, `npm run build` again, or run them directly with `npm run rmq -- …`.
let cli;
try {
  cli = await import('../dist/cli.js');
} catch (err) {
  if (err?.code !== 'ERR_MODULE_NOT_FOUND' || !String(err.message).includes('dist/cli.js')) throw err;
  process.stderr.write('rmq: not built yet: run `npm run build` (npm ci runs it too).\n');
  // Not `process.exit`: that would drop what a pipe has not taken yet (src/cli.ts, `written`).
  process.exitCode = 1;
}
if (cli) await cli.cliMain();
