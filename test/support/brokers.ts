/**
 * The real brokers the differential suites run against: the machine's RabbitMQ 3.10 and, when
 * their scripts have started them, RabbitMQ 4.0 (`scripts/broker-4`, Debian 13) and RabbitMQ 4.3
 * (`scripts/broker-4.3`, Debian sid) in chroots beside it. A suite that runs on every broker
 * takes `up` from `brokersUp()`; this list is the one place a broker is added.
 *
 * A broker that is down is reported as skipped, loudly — unless its REQUIRED variable is 1 (set
 * by .ci/run once its script succeeded: RMQ4_REQUIRED, RMQ43_REQUIRED, CLUSTER_REQUIRED,
 * RMQ_PLAIN_REQUIRED, RMQ_PLAIN43_REQUIRED, RMQ_OWN310_REQUIRED), in which case its absence fails
 * the run.
 *
 * The cluster (`scripts/cluster`: three RabbitMQ 4.3 nodes) is asked for by the suites that must
 * hold on a cluster too (`brokersUp({ cluster: true })`): the client is given every node, the
 * fixtures' lab client too, so a suite runs whichever node is down. The broker where a plugin is
 * off (`scripts/broker-plain`) is asked for by the suites of that case (`brokersUp({ plain: true })`).
 * The nodes a suite may restart, one per version (`RESTARTABLE`), are nodes of their own that no
 * other suite but the plugin-off ones uses.
 */
import { request } from 'undici';
import { LabClient } from '../../src/rabbit/lab.ts';
import { brokerCredentials, brokerUrl, uniqueName } from './broker.ts';

export interface TestBroker {
  readonly label: string;
  /** Management API (a cluster's first node). */
  readonly url: string;
  /** A cluster's nodes' management APIs, `url` first; absent for a single node. */
  readonly urls?: readonly string[];
  /** AMQP, for the event exchange the watcher follows (a cluster's first node). */
  readonly amqpUrl: string;
  /** A cluster's nodes' AMQP endpoints. */
  readonly amqpUrls?: readonly string[];
  /** Absence fails the suite instead of skipping it. */
  readonly required: boolean;
  /** What brings it up, for the skip message. */
  readonly script: string;
}

export const BROKERS: readonly TestBroker[] = [
  {
    label: 'machine',
    url: brokerUrl(),
    amqpUrl: process.env.RMQ_AMQP_URL ?? 'amqp://127.0.0.1:5672',
    required: true,
    script: 'scripts/services',
  },
  {
    label: 'rabbitmq-4',
    url: process.env.RMQ4_URL ?? 'http://127.0.0.1:15673',
    amqpUrl: process.env.RMQ4_AMQP_URL ?? 'amqp://127.0.0.1:5673',
    required: process.env.RMQ4_REQUIRED === '1',
    script: 'scripts/broker-4',
  },
  {
    label: 'rabbitmq-4.3',
    url: process.env.RMQ43_URL ?? 'http://127.0.0.1:15674',
    amqpUrl: process.env.RMQ43_AMQP_URL ?? 'amqp://127.0.0.1:5674',
    required: process.env.RMQ43_REQUIRED === '1',
    script: 'scripts/broker-4.3',
  },
];

const CLUSTER_NODES = [1, 2, 3];

/** scripts/cluster's three nodes; the differentials that ask for it run on it too (fewer seeds). */
export const CLUSTER: TestBroker = {
  label: 'cluster-4.3',
  url: 'http://127.0.0.1:15691',
  urls: CLUSTER_NODES.map((n) => `http://127.0.0.1:1569${n}`),
  amqpUrl: 'amqp://127.0.0.1:5691',
  amqpUrls: CLUSTER_NODES.map((n) => `amqp://127.0.0.1:569${n}`),
  required: process.env.CLUSTER_REQUIRED === '1',
  script: 'scripts/cluster',
};

/**
 * scripts/broker-plain: RabbitMQ 4.0.5 with no optional plugin but management and the event
 * exchange (every broker above runs federation and shovel): the broker where a plugin is off,
 * asked for by the suites of that case (`brokersUp({ plain: true })`), and the 4.0 node of
 * RESTARTABLE.
 */
export const PLAIN: TestBroker = {
  label: 'plain-4.0',
  url: process.env.RMQ_PLAIN_URL ?? 'http://127.0.0.1:15675',
  amqpUrl: process.env.RMQ_PLAIN_AMQP_URL ?? 'amqp://127.0.0.1:5675',
  required: process.env.RMQ_PLAIN_REQUIRED === '1',
  script: 'scripts/broker-plain',
};

/**
 * scripts/broker-plain-4.3: RabbitMQ 4.3.6 with the plugins of PLAIN, a node of its own from the
 * 4.3 chroot, for the suites that restart a 4.3 broker (scripts/broker-4.3's, which the whole
 * suite shares, is never restarted).
 */
export const PLAIN_43: TestBroker = {
  label: 'plain-4.3',
  url: process.env.RMQ_PLAIN43_URL ?? 'http://127.0.0.1:15676',
  amqpUrl: process.env.RMQ_PLAIN43_AMQP_URL ?? 'amqp://127.0.0.1:5676',
  required: process.env.RMQ_PLAIN43_REQUIRED === '1',
  script: 'scripts/broker-plain-4.3',
};

/**
 * scripts/broker-3.10-own: a second RabbitMQ 3.10.8 node from the machine's install, with only
 * the management plugin, for the suites that restart a 3.10 broker (the machine's node, which the
 * whole suite shares, is never restarted).
 */
export const OWN_310: TestBroker = {
  label: 'own-3.10',
  url: process.env.RMQ_OWN310_URL ?? 'http://127.0.0.1:15677',
  amqpUrl: process.env.RMQ_OWN310_AMQP_URL ?? 'amqp://127.0.0.1:5677',
  required: process.env.RMQ_OWN310_REQUIRED === '1',
  script: 'scripts/broker-3.10-own',
};

/** The brokers a suite may stop and start with their script, one per version: 3.10.8, 4.0.5, 4.3.6. */
export const RESTARTABLE: readonly TestBroker[] = [OWN_310, PLAIN, PLAIN_43];

/** What a client of `broker` is given: every node of a cluster. */
export function urlsOf(broker: TestBroker): string | readonly string[] {
  return broker.urls ?? broker.url;
}

/** Resolves the brokers that answer, in order; logs the ones skipped so the summary shows it. */
export async function reachable(broker: TestBroker): Promise<boolean> {
  const { user, password } = brokerCredentials();
  try {
    // A cluster is up when its first node answers (the suites stop and start nodes themselves).
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
export async function brokersUp(
  options: { cluster?: boolean; plain?: boolean } = {},
): Promise<{ up: TestBroker[]; skipped: TestBroker[] }> {
  return upOf([...BROKERS, ...(options.cluster ? [CLUSTER] : []), ...(options.plain ? [PLAIN] : [])]);
}

/** Which of `asked` to run (those that answer, and the required ones), and a loud line for the others. */
export async function upOf(
  asked: readonly TestBroker[],
): Promise<{ up: TestBroker[]; skipped: TestBroker[] }> {
  const up: TestBroker[] = [];
  const skipped: TestBroker[] = [];
  for (const b of asked) ((await reachable(b)) || b.required ? up : skipped).push(b);
  for (const b of skipped) {
    console.warn(
      `\n*** SKIPPED: broker ${b.label} at ${b.url} is not running (run ${b.script}). Its differential cases did not run. ***\n`,
    );
  }
  return { up, skipped };
}

export function clientFor(broker: TestBroker): LabClient {
  return new LabClient({ url: urlsOf(broker), ...brokerCredentials() });
}

/** Runs `fn` in a new vhost of this broker, removed afterwards (and the client closed), even on failure. */
export async function inVhostOn<T>(
  broker: TestBroker,
  prefix: string,
  fn: (vhost: string, client: LabClient) => Promise<T>,
): Promise<T> {
  const client = clientFor(broker);
  const vhost = uniqueName(prefix);
  await client.putVhost(vhost);
  try {
    return await fn(vhost, client);
  } finally {
    await client.deleteVhost(vhost);
    await client.close();
  }
}
