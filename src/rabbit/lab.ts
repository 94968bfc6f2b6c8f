/**
 * What the lab (`npm run lab`), the benches and the tests need beyond the bot: creating and
 * removing vhosts, queues and exchanges. Never used by the bot or the CLI, which only read
 * objects and write policies; kept out of `ManagementClient` so its surface is what runs in
 * production.
 */
import { sleep } from '../core/index.ts';
import { ManagementClient } from './client.ts';
import { isRabbitError } from './errors.ts';
import type { QueueKind } from './responses.ts';

export interface PutQueueOptions {
  readonly kind: QueueKind;
  readonly arguments?: Readonly<Record<string, unknown>>;
}

export class LabClient extends ManagementClient {
  /** Creates the vhost (the creating user gets full permissions in it). */
  async putVhost(name: string): Promise<void> {
    await this.http.call('PUT', this.http.path('vhosts', name), {});
  }

  /**
   * Deletes the vhost and everything in it; no error if it is already gone. A deletion the broker
   * answers with a 5xx (seen on the 4.3 cluster with federation links running in the vhost) is
   * asked again, a few times, until the vhost is gone.
   */
  async deleteVhost(name: string): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.http.call('DELETE', this.http.path('vhosts', name));
        return;
      } catch (e) {
        if (isRabbitError(e, 'not-found')) return;
        if (!isRabbitError(e, 'broker-error') || attempt >= 4) throw e;
        await sleep(500 * attempt);
      }
    }
  }

  /** Durable queue; quorum queues and streams get their `x-queue-type`. */
  async putQueue(vhost: string, name: string, opts: PutQueueOptions): Promise<void> {
    const args: Record<string, unknown> = { ...opts.arguments };
    if (opts.kind !== 'classic') args['x-queue-type'] = opts.kind;
    await this.http.call('PUT', this.http.path('queues', vhost, name), {
      durable: true,
      auto_delete: false,
      arguments: args,
    });
  }

  async deleteQueue(vhost: string, name: string): Promise<void> {
    await this.http.call('DELETE', this.http.path('queues', vhost, name));
  }

  async putExchange(vhost: string, name: string, type: string): Promise<void> {
    await this.http.call('PUT', this.http.path('exchanges', vhost, name), {
      type,
      durable: true,
      auto_delete: false,
      internal: false,
      arguments: {},
    });
  }

  /**
   * Publishes `count` messages to a queue through the default exchange, transient
   * (`delivery_mode` 1) or persistent (2): the management API's publish, which routes as AMQP does.
   */
  async publish(vhost: string, queue: string, count: number, persistent: boolean): Promise<void> {
    const path = `${this.http.path('exchanges', vhost, 'amq.default')}/publish`;
    for (let i = 0; i < count; i++)
      await this.http.call('POST', path, {
        properties: { delivery_mode: persistent ? 2 : 1 },
        routing_key: queue,
        payload: `lab message ${i + 1}`,
        payload_encoding: 'string',
      });
  }
}
