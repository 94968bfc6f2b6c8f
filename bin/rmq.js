#!/usr/bin/env node
// The package's `bin`: runs the TypeScript CLI through tsx so `npx rmq` works from a clone.
import { register } from 'tsx/esm/api';

register();
const { runCli } = await import('../src/cli.ts');
process.exitCode = await runCli(process.argv.slice(2), process.env);
