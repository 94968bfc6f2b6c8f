#!/usr/bin/env node
// The package's `bin`: the compiled CLI. `npm ci` builds it (the `prepare` script); after
// changing the sources, `npm run build` again, or run them directly with `npm run rmq -- …`.
// CommonJS (bin/package.json), as is dist/cliLoader.cjs: an ES module entry costs every start ~3 ms
// of its loader (bench/cli).
'use strict';
let cli;
try {
  cli = require('../dist/cliLoader.cjs');
} catch (err) {
  if (err?.code !== 'MODULE_NOT_FOUND' || !String(err.message).includes('dist/cliLoader.cjs')) throw err;
  process.stderr.write('rmq: not built yet: run `npm run build` (npm ci runs it too).\n');
  // Not `process.exit`: that would drop what a pipe has not taken yet (src/terminal/cli.ts, `written`).
  process.exitCode = 1;
}
if (cli) cli.cliMain();
