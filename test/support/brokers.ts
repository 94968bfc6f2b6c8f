/**
 * The real brokers the differential suites run against: the machine's RabbitMQ 3.10 and, when
 * `scripts/broker-4` has started it, RabbitMQ 4.0 in a Debian 13 chroot beside it.
 *
 * A broker that is down is reported as skipped, loudly — unless RMQ4_REQUIRED=1 (set by .ci/run
 * once scripts/broker-4 succeeded), in which case its absence fails the run.
 */
import { request } from 'undici';
import { LabClient } from '../../src/rabbit/lab.ts';
import { brokerCredentials, brokerUrl } from './broker.ts';

export interface TestBroker {
  readonly label: string;
  readonly url: string;
  /** Absence fails the suite instead of skipping it. */
  readonly required: boolean;
}

export const BROKERS: readonly TestBroker[] = [
  { label: 'machine', url: brokerUrl(), required: true },
  {
    label: 'rabbitmq-4',
    url: process.env.RMQ4_URL ?? 'http://127.0.0.1:15673',
    required: process.env.RMQ4_REQUIRED === '1',
  },
];

/** Resolves the brokers that answer, in order; logs the ones skipped so the summary shows it. */
export async function reachable(broker: TestBroker): Promise<boolean> {
  const { user, password } = brokerCredentials();
  try {
    const res = await request(new URL('/api/overview', broker.url), {
      headers: { authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` },
      headersTimeout: 3000,
      bodyTimeout: 3000,
    });
    await res.body.dump();
    return res.statusCode === 200;
  } catch {
    return false;
  }
}

/** Top-level await in a test file: which brokers to run, and a loud line for the ones skipped. */
export async function brokersUp(): Promise<{ up: TestBroker[]; skipped: TestBroker[] }> {
  const up: TestBroker[] = [];
  const skipped: TestBroker[] = [];
  for (const b of BROKERS) ((await reachable(b)) || b.required ? up : skipped).push(b);
  for (const b of skipped) {
    console.warn(
      `\n*** SKIPPED: broker ${b.label} at ${b.url} is not running (run scripts/broker-4). Its differential cases did not run. ***\n`,
    );
  }
  return { up, skipped };
}

export function clientFor(broker: TestBroker): LabClient {
  return new LabClient({ url: broker.url, ...brokerCredentials() });
}
