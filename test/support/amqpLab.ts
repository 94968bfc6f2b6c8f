/**
 * AMQP for the suites that make failures happen to the broker (path's proofs): a connection that
 * retries while a node restarts, a close that does not wait on channels a stopped broker no longer
 * answers, and a queue's count read by a passive declare (no statistics, no lag).
 */
import { Connection } from 'rabbitmq-client';
import type { TestBroker } from './brokers.ts';
import { amqpUrl } from './messages.ts';

export async function connect(b: TestBroker, vhost: string, url = amqpUrl(b, vhost)): Promise<Connection> {
  const conn = new Connection({ url, retryLow: 200, retryHigh: 1000, connectionTimeout: 10_000 });
  conn.on('error', () => undefined);
  await conn.onConnect(15_000, true);
  return conn;
}

/** Closes a connection, not waiting past a few seconds for channels the broker has stopped answering. */
export async function closeSoon(conn: Connection): Promise<void> {
  await Promise.race([conn.close(), new Promise((resolve) => setTimeout(resolve, 5_000))]);
}

/** The messages a queue holds now (a passive declare: no statistics, no lag); null when it is gone. */
export async function held(conn: Connection, queue: string): Promise<number | null> {
  const ch = await conn.acquire();
  try {
    return (await ch.queueDeclare({ queue, passive: true })).messageCount;
  } catch {
    return null;
  } finally {
    if (ch.active) await ch.close();
  }
}
