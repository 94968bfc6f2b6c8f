/**
 * What the process benches share: `--broker` (default RMQ_URL or the machine's broker) with the
 * credentials from RMQ_USER/RMQ_PASSWORD, a count flag, and quantiles.
 */
import { parseArgs } from 'node:util';

export interface BenchOptions {
  readonly count: number;
  readonly brokerUrl: string;
  readonly user: string;
  readonly password: string;
}

/** `countFlag` (e.g. `commands`, `rounds`) with its default; `--broker URL`. */
export function benchOptions(countFlag: string, countDefault: number): BenchOptions {
  const { values } = parseArgs({
    options: {
      [countFlag]: { type: 'string', default: String(countDefault) },
      broker: { type: 'string', default: process.env.RMQ_URL ?? 'http://127.0.0.1:15672' },
    },
  });
  const count = Number(values[countFlag]);
  if (!Number.isInteger(count) || count < 1) throw new Error(`--${countFlag} takes a whole number >= 1`);
  return {
    count,
    brokerUrl: String(values.broker),
    user: process.env.RMQ_USER ?? 'guest',
    password: process.env.RMQ_PASSWORD ?? 'guest',
  };
}

export const quantile = (xs: readonly number[], q: number): number =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * q))] ?? Number.NaN;
