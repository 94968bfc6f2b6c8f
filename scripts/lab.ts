import { atLeast } from '../src/policy/types.ts';
import type { LabClient } from '../src/rabbit/lab.ts';

/**
 * The policies lab: the scenario the product is explained with, in a vhost of its own.
 *
 *   npm run lab                       set it up in vhost "rmq-lab" (replacing an earlier one) and print questions
 *   npm run lab -- --vhost NAME       the same in vhost NAME (on a shared broker, one of your own)
 *   npm run lab -- --down [--vhost NAME]  remove it
 *   npm run lab -- --help             what it does; touches nothing
 */

export const LAB_VHOST = 'rmq-lab';

export const LAB_HELP = `npm run lab -- [--vhost NAME] [--down] [--help]

Builds the policies lab on the broker of .env (RMQ_URL, RMQ_USER, RMQ_PASSWORD; the first
environment of RMQ_ENVIRONMENTS when set): a vhost with seven policies, six queues (one holding
transient messages) and an exchange, a federated exchange, an upstream that refuses on purpose and
a shovel (where the plugins are enabled), then prints the questions worth asking it.

  --vhost NAME  the vhost to use (default ${LAB_VHOST}). It is deleted and created again:
                on a shared broker, name one of your own.
  --down        remove the lab's vhost instead.
  --consume     keep an automatic-acknowledgement consumer on payments.inbox until stopped
                (Ctrl-C), and change nothing else: what path flags as a consumer crash. It takes
                every message there at once; what it holds when it dies is lost.
  --help        print this and change nothing.
`;

/** What `npm run lab -- …` was asked: a pure reading of its arguments. */
export type LabCommand =
  | { readonly kind: 'help' }
  | { readonly kind: 'up' | 'down' | 'consume'; readonly vhost: string }
  | { readonly kind: 'refused'; readonly message: string };

export function parseLabArgs(argv: readonly string[]): LabCommand {
  let vhost = LAB_VHOST;
  let down = false;
  let consume = false;
  const unknown: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--help' || arg === '-h') return { kind: 'help' };
    if (arg === '--down') down = true;
    else if (arg === '--consume') consume = true;
    else if (arg === '--vhost' || arg.startsWith('--vhost=')) {
      const value = arg === '--vhost' ? argv[++i] : arg.slice('--vhost='.length);
      if (value === undefined || value === '' || value.startsWith('--')) {
        return { kind: 'refused', message: 'lab: --vhost needs a name, such as --vhost rmq-lab-alice.' };
      }
      vhost = value;
    } else unknown.push(arg);
  }
  if (unknown.length > 0) {
    const list = unknown.map((a) => JSON.stringify(a)).join(', ');
    return {
      kind: 'refused',
      message: `lab: unknown argument${unknown.length > 1 ? 's' : ''} ${list}: it takes --vhost NAME, --down, --consume and --help.`,
    };
  }
  if (down && consume) return { kind: 'refused', message: 'lab: --down and --consume do not go together.' };
  return { kind: down ? 'down' : consume ? 'consume' : 'up', vhost };
}

export async function setUpLab(broker: LabClient, vhost: string): Promise<void> {
  const { version } = await broker.overview();
  // Per-queue-type scopes exist from 3.12; older brokers only know "queues".
  const classicOnly = atLeast(version, 3, 12) ? 'classic_queues' : 'queues';
  await broker.deleteVhost(vhost);
  await broker.putVhost(vhost);
  const user = [
    {
      name: 'audit-retention',
      pattern: '^orders\\.audit$',
      applyTo: classicOnly,
      priority: 10,
      definition: { 'dead-letter-exchange': 'audit.dlx' },
    },
    {
      name: 'audit-fallback',
      pattern: '^orders\\.',
      applyTo: 'queues',
      priority: 1,
      definition: { 'message-ttl': 3_600_000 },
    },
    // Unanchored: it searches inside names, so it also catches retry.orders.dlq.
    {
      name: 'orders-cap',
      pattern: 'orders',
      applyTo: 'queues',
      priority: 0,
      definition: { 'max-length': 100_000 },
    },
    {
      name: 'billing-a',
      pattern: '^billing\\.',
      applyTo: 'queues',
      priority: 5,
      definition: { 'max-length': 500 },
    },
    {
      name: 'billing-b',
      pattern: '^billing\\.',
      applyTo: 'queues',
      priority: 5,
      definition: { 'max-length': 1000 },
    },
    {
      name: 'orders-ae',
      pattern: '^orders\\.',
      applyTo: 'exchanges',
      priority: 1,
      definition: { 'alternate-exchange': 'orders.unrouted' },
    },
  ];
  for (const p of user) await broker.putPolicy('user', { vhost, ...p });
  await broker.putPolicy('operator', {
    vhost,
    name: 'orders-ceiling',
    pattern: '^orders\\.',
    applyTo: 'queues',
    priority: 0,
    definition: { 'message-ttl': 600_000, 'max-length': 50_000 },
  });
  await broker.putQueue(vhost, 'orders.audit', { kind: 'classic' });
  await broker.putQueue(vhost, 'orders.processing', { kind: 'quorum' });
  await broker.putQueue(vhost, 'orders.events', { kind: 'stream' });
  await broker.putQueue(vhost, 'retry.orders.dlq', { kind: 'classic' });
  await broker.putQueue(vhost, 'billing.invoices', { kind: 'classic' });
  await broker.putExchange(vhost, 'orders.topic', 'topic');
  // Messages that would not survive: a durable queue holding transient messages (a restart
  // keeps the 4 persistent ones of 16). An automatic-acknowledgement consumer needs a process:
  // `npm run lab -- --consume` keeps one on it until stopped.
  await broker.putQueue(vhost, LAB_FRAGILE, { kind: 'classic' });
  await broker.publish(vhost, LAB_FRAGILE, 12, false);
  await broker.publish(vhost, LAB_FRAGILE, 4, true);
}

/**
 * The lab's links, beside its policies (so the suites that read the policies lab see it unchanged):
 * an exchange federated from another exchange of the same vhost (`amqp:///VHOST`: the local node,
 * no password to show), an upstream at a port that refuses on purpose (its password is there to be
 * masked), and a dynamic shovel between two queues of the vhost. Each part only where its plugin
 * is enabled; what was left out, said.
 */
export async function setUpLabLinks(broker: LabClient, vhost: string): Promise<string[]> {
  const { exchangeTypes, version } = await broker.overview();
  const skipped: string[] = [];
  const local = `amqp:///${encodeURIComponent(vhost)}`;
  if (exchangeTypes?.includes('x-federation-upstream')) {
    await broker.putExchange(vhost, 'orders.upstream', 'topic');
    await broker.putExchange(vhost, 'orders.inbound', 'topic');
    await broker.putExchange(vhost, 'orders.west', 'topic');
    await broker.putParameter({
      component: 'federation-upstream',
      vhost: vhost,
      name: 'lab-local',
      value: {
        uri: local,
        exchange: 'orders.upstream',
        // The internal upstream queue replicated, where the broker has the key (3.13.1 and later).
        ...(atLeast(version, 3, 13, 1) ? { 'queue-type': 'quorum' } : {}),
        'message-ttl': 3_600_000,
      },
    });
    // Fails on purpose: nothing listens on port 1.
    await broker.putParameter({
      component: 'federation-upstream',
      vhost: vhost,
      name: 'dc-west',
      value: {
        uri: 'amqp://lab:not-a-real-password@127.0.0.1:1/orders',
        'ack-mode': 'on-publish',
      },
    });
    const fed = (name: string, pattern: string, upstream: string) =>
      broker.putPolicy('user', {
        vhost,
        name,
        pattern,
        applyTo: 'exchanges',
        priority: 20,
        definition: { 'federation-upstream': upstream },
      });
    await fed('inbound-federated', '^orders\\.inbound$', 'lab-local');
    await fed('west-federated', '^orders\\.west$', 'dc-west');
  } else skipped.push('the federation plugin is not enabled: no upstream, no federated exchange');
  const shovels = await broker.shovelList(vhost).catch(() => null);
  if (Array.isArray(shovels)) {
    await broker.putQueue(vhost, 'links.outbox', { kind: 'classic' });
    await broker.putParameter({
      component: 'shovel',
      vhost: vhost,
      name: 'outbox-to-landing',
      value: {
        'src-uri': local,
        'src-queue': 'links.outbox',
        'dest-uri': local,
        'dest-queue': 'links.landing',
      },
    });
  } else skipped.push('the shovel plugin is not enabled: no shovel');
  return skipped;
}

/** The lab's queue whose messages would not survive a restart. */
export const LAB_FRAGILE = 'payments.inbox';

export const LAB_QUESTIONS = [
  [
    'which orders.audit',
    'audit-retention wins at priority 10; audit-fallback contributes nothing, not even its TTL',
  ],
  ['which orders.processing', 'a quorum queue: audit-fallback governs; the operator ceiling lowers its TTL'],
  [
    'which orders.events',
    'a stream: the fallback sets message-ttl, which streams refuse, so nothing governs it',
  ],
  ['which retry.orders.dlq', 'the unanchored pattern "orders" catches a name that does not start with it'],
  ['which billing.invoices', "two policies tied at priority 5: the broker's choice is not defined"],
  ['which orders.topic', 'an exchange: only exchange-scoped policies reach it'],
  ['which orders.new', 'a queue that does not exist yet: the broker reports nothing, the matches are listed'],
  ['preview delete audit-retention', 'what orders.audit falls back to, and what it loses'],
  [
    'links',
    'every link that should run: one federated exchange runs, one is stopped on purpose (its upstream refuses), the shovel; the settings that lose messages',
  ],
  [
    'path payments.inbox',
    'will its messages survive? 12 of 16 are transient: a restart loses them (with --consume running: an automatic-acknowledgement consumer too)',
  ],
] as const;

async function main(argv: readonly string[]): Promise<void> {
  const command = parseLabArgs(argv);
  if (command.kind === 'help') {
    process.stdout.write(LAB_HELP);
    return;
  }
  if (command.kind === 'refused') {
    console.error(command.message);
    process.exitCode = 2;
    return;
  }
  const { vhost } = command;
  const { config } = await import('dotenv');
  config({ quiet: true });
  const { loadConfig } = await import('../src/config/config.ts');
  const { LabClient } = await import('../src/rabbit/lab.ts');
  const env = loadConfig().environments[0]!;
  const broker = new LabClient({ url: env.url, user: env.user, password: env.password });
  try {
    if (command.kind === 'consume') {
      await consumeUntilStopped(env.amqp.url, env.amqp.user, env.amqp.password, vhost);
      return;
    }
    if (command.kind === 'down') {
      await broker.deleteVhost(vhost);
      console.log(`Removed vhost ${vhost}.`);
      return;
    }
    await setUpLab(broker, vhost);
    for (const why of await setUpLabLinks(broker, vhost)) console.log(`Links: ${why}.`);
    console.log(`The policies lab is ready in vhost "${vhost}" on ${env.url}. Questions worth asking:\n`);
    for (const [q, why] of LAB_QUESTIONS) console.log(`  npx rmq ${q} --vhost ${vhost}\n      ${why}\n`);
    const again = vhost === LAB_VHOST ? '' : ` --vhost ${vhost}`;
    console.log(`Remove it with: npm run lab -- --down${again}`);
  } finally {
    await broker.close();
  }
}

/**
 * An automatic-acknowledgement consumer on the lab's fragile queue, held until SIGINT or SIGTERM:
 * a consumer needs a process, and this is the lab's.
 */
async function consumeUntilStopped(
  amqpUrl: string,
  user: string,
  password: string,
  vhost: string,
): Promise<void> {
  const { Connection } = await import('rabbitmq-client');
  const url = new URL(amqpUrl);
  url.username = encodeURIComponent(user);
  url.password = encodeURIComponent(password);
  url.pathname = `/${encodeURIComponent(vhost)}`;
  const conn = new Connection({ url: url.toString() });
  await conn.onConnect(10_000, true);
  const ch = await conn.acquire();
  let taken = 0;
  await ch.basicConsume({ queue: LAB_FRAGILE, noAck: true }, () => {
    taken++;
  });
  console.log(
    `An automatic-acknowledgement consumer is on ${LAB_FRAGILE} in vhost "${vhost}"; Ctrl-C stops it.`,
  );
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  console.log(`Stopped; it had taken ${taken} message${taken === 1 ? '' : 's'}.`);
  await ch.close();
  await conn.close();
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main(process.argv.slice(2)).catch((err) => {
    console.error(`lab: ${err instanceof Error ? err.message : String(err)}`);
    process.exitCode = 1;
  });
}
