#!/usr/bin/env node
// The package's `bin`: runs the TypeScript CLI through tsx so `npx rmq` works from a clone.
import { register } from 'tsx/esm/api';

register();
const { config } = await import('dotenv');
config({ quiet: true });
const { runCli } = await import('../src/cli.ts');
process.exitCode = await runCli(process.argv.slice(2), process.env);
