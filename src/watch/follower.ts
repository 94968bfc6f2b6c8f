import { Connection, type Consumer, ConsumerStatus } from 'rabbitmq-client';
import type { AmqpEndpoint } from '../config/index.ts';
import { codeOf } from '../core/index.ts';
import type { Logger } from '../log/index.ts';
import { EVENT_EXCHANGE, POLICY_ROUTING_KEYS } from './events.ts';

/**
 * Follows the broker's event exchange over AMQP (rabbitmq-client, for its reconnect handling):
 * one exclusive, auto-delete, server-named queue per bot process, bound to `amq.rabbitmq.event`
 * for the policy routing keys. Reconnects with exponential backoff (1 s steps up to 30 s) and
 * re-declares the queue and its bindings each time; on a cluster (`endpoint.urls`), each reconnect
 * goes to the next node, so the node that stopped is left for one that answers, and the new
 * queue (on that node) is checked again. Messages are handled one at a time, in the
 * order the broker published them (the operator-policy echo depends on that order).
 *
 * It says how it is doing (`status`), so the watcher falls back to comparing on an interval and
 * /healthz can say why: AMQP unreachable, credentials refused, a permission missing (the vhost, the
 * server-named queue or the event exchange, each named by the broker), the plugin off (no exchange), or
 * an AMQP endpoint that is not the broker whose management API the bot asks (checked once per
 * connection: the management API must see this process's queue).
 */

export type FollowerWhy = 'unreachable' | 'refused' | 'forbidden' | 'plugin-off' | 'other-broker' | 'error';

export type FollowerStatus =
  | { readonly state: 'connecting' }
  /** `checked`: the management API saw the queue (false: it did not answer, the endpoint is trusted). */
  | { readonly state: 'following'; readonly queue: string; readonly checked: boolean }
  | { readonly state: 'failing'; readonly why: FollowerWhy; readonly detail: string };

export interface FollowerOptions {
  readonly endpoint: AmqpEndpoint;
  /** One message: routing key and headers. Must not throw (errors are the handler's to log). */
  readonly onMessage: (routingKey: string, headers: Record<string, unknown>) => Promise<void>;
  /** Every change of status, in order. */
  readonly onStatus: (status: FollowerStatus) => void;
  /**
   * Does the management API see this queue? false: the AMQP endpoint is another broker.
   * undefined: could not tell (then the endpoint is trusted).
   */
  readonly queueVisible: (vhost: string, queue: string) => Promise<boolean | undefined>;
  readonly logger: Logger;
  /** Shown in the management UI's connection list. */
  readonly connectionName?: string;
  /** Backoff steps (ms); tests shorten them. */
  readonly retryLowMs?: number;
  readonly retryHighMs?: number;
}

/** The broker keeps at most this many events for a bot that lags; the interval compare catches up. */
const QUEUE_MAX_LENGTH = 10_000;

export function classify(err: unknown): { why: FollowerWhy; detail: string } {
  const code = codeOf(err) ?? '';
  const message = err instanceof Error ? err.message : String(err);
  if (['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND', 'EAI_AGAIN'].includes(code))
    return { why: 'unreachable', detail: code };
  if (code === 'CONNECTION_TIMEOUT' || /timed? ?out/i.test(message))
    return { why: 'unreachable', detail: 'timeout' };
  // A permission the user lacks: the broker names what (measured on 3.10.8: "NOT_ALLOWED - access
  // to vhost '/' refused for user 'u'", "ACCESS_REFUSED - access to exchange 'amq.rabbitmq.event'
  // in vhost '/' refused for user 'u'"); a login refused says "Login was refused".
  const access =
    /access to (?:vhost|queue|exchange) '[^']*'(?: in vhost '[^']*')? refused for user '[^']*'/.exec(message);
  if (access && (code === 'ACCESS_REFUSED' || code === 'NOT_ALLOWED'))
    return { why: 'forbidden', detail: access[0] };
  if (code === 'ACCESS_REFUSED' || code === 'NOT_ALLOWED' || /ACCESS_REFUSED|auth/i.test(message))
    return { why: 'refused', detail: code || 'ACCESS_REFUSED' };
  if (code === 'NOT_FOUND' && message.includes(EVENT_EXCHANGE))
    return { why: 'plugin-off', detail: `no exchange ${EVENT_EXCHANGE}` };
  return { why: 'error', detail: code || message.slice(0, 200) };
}

export class EventFollower {
  readonly #options: FollowerOptions;
  readonly #vhost: string;
  #connection: Connection | undefined;
  #consumer: Consumer | undefined;
  #status: FollowerStatus = { state: 'connecting' };
  #closed = false;
  readonly #verified = new Map<string, Promise<boolean>>();

  constructor(options: FollowerOptions) {
    this.#options = options;
    const path = new URL(options.endpoint.url).pathname.replace(/^\//, '');
    this.#vhost = path === '' ? '/' : decodeURIComponent(path);
  }

  get status(): FollowerStatus {
    return this.#status;
  }

  #set(status: FollowerStatus): void {
    const same =
      status.state === this.#status.state &&
      (status.state !== 'failing' ||
        (this.#status.state === 'failing' &&
          status.why === this.#status.why &&
          status.detail === this.#status.detail));
    this.#status = status;
    if (!same) this.#options.onStatus(status);
  }

  start(): void {
    const { endpoint } = this.#options;
    const url = new URL(endpoint.url);
    const tls = url.protocol === 'amqps:';
    // Each connect takes the next of these, the first node first (rabbitmq-client's `hosts`).
    const hosts = (endpoint.urls.length ? endpoint.urls : [endpoint.url]).map((u) => {
      const node = new URL(u);
      return `${node.hostname.replace(/^\[|\]$/g, '')}:${node.port || (tls ? '5671' : '5672')}`;
    });
    const connection = new Connection({
      hosts,
      vhost: this.#vhost,
      username: endpoint.user,
      password: endpoint.password,
      tls,
      connectionName: this.#options.connectionName ?? 'rmq-policy-bot events',
      connectionTimeout: 5000,
      acquireTimeout: 10_000,
      heartbeat: 30,
      retryLow: this.#options.retryLowMs ?? 1000,
      retryHigh: this.#options.retryHighMs ?? 30_000,
    });
    this.#connection = connection;
    connection.on('error', (err: unknown) => {
      if (this.#closed) return;
      this.#set({ state: 'failing', ...classify(err) });
    });
    const consumer = connection.createConsumer(
      {
        queue: '',
        queueOptions: {
          exclusive: true,
          autoDelete: true,
          durable: false,
          arguments: { 'x-max-length': QUEUE_MAX_LENGTH },
        },
        queueBindings: POLICY_ROUTING_KEYS.map((routingKey) => ({ exchange: EVENT_EXCHANGE, routingKey })),
        qos: { prefetchCount: 100 },
        concurrency: 1,
        requeue: false,
      },
      async (msg) => {
        // Nothing is read before the endpoint is known to be the right broker.
        if (await this.#verify(consumer.queue)) {
          await this.#options.onMessage(msg.routingKey, (msg.headers ?? {}) as Record<string, unknown>);
        }
        return ConsumerStatus.ACK;
      },
    );
    this.#consumer = consumer;
    consumer.on('error', (err: unknown) => {
      if (this.#closed) return;
      this.#set({ state: 'failing', ...classify(err) });
    });
    consumer.on('ready', () => {
      void this.#verify(consumer.queue);
    });
  }

  /** Once per queue (so once per connection): is the AMQP endpoint the management API's broker? */
  #verify(queue: string): Promise<boolean> {
    let check = this.#verified.get(queue);
    if (!check) {
      check = this.#checkSameBroker(queue);
      this.#verified.set(queue, check);
    }
    return check;
  }

  async #checkSameBroker(queue: string): Promise<boolean> {
    let visible: boolean | undefined;
    try {
      visible = await this.#options.queueVisible(this.#vhost, queue);
    } catch (err) {
      this.#options.logger.warn({ err: String(err) }, 'events: could not check the AMQP endpoint; trusted');
    }
    if (this.#closed) return false;
    if (visible === false) {
      this.#set({
        state: 'failing',
        why: 'other-broker',
        detail: `the management API does not see queue ${queue}: the AMQP endpoint is another broker`,
      });
      // Events of another broker must not be read as this one's.
      void this.#consumer?.close();
      return false;
    }
    if (this.#consumer?.queue === queue) this.#set({ state: 'following', queue, checked: visible === true });
    return true;
  }

  async close(): Promise<void> {
    this.#closed = true;
    // Together: a consumer still waiting for a channel waits until the connection gives up.
    await Promise.all([
      this.#consumer?.close().catch(() => undefined),
      this.#connection?.close().catch(() => undefined),
    ]);
  }
}
