import { createServer, type Socket } from 'node:net';
import type { LabClient } from '../../src/rabbit/lab.ts';

/**
 * An upstream that accepts every connection and never says a word: each try of a federation link
 * to it waits out the handshake (the broker reports it `starting`, then `error`
 * `handshake_receive_timed_out`, then `starting` again: docs/broker-facts.md). Close it after use.
 */
export async function startSilentUpstream(): Promise<{ readonly port: number; close(): Promise<void> }> {
  const held = new Set<Socket>();
  const silent = createServer((socket) => {
    held.add(socket);
    socket.on('error', () => undefined);
  });
  await new Promise<void>((done) => silent.listen(0, '127.0.0.1', done));
  const address = silent.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    port,
    async close() {
      for (const s of held) s.destroy();
      await new Promise((done) => silent.close(done));
    },
  };
}

/**
 * In `vhost`: upstream `silent` (its URI carrying `password`) pointing at the silent upstream on
 * `port`, exchange `fed.x` and policy `fed` federating it from `silent`.
 */
export async function federateFromSilent(
  lab: LabClient,
  vhost: string,
  port: number,
  password: string,
): Promise<void> {
  await lab.putParameter({
    component: 'federation-upstream',
    vhost,
    name: 'silent',
    value: { uri: `amqp://u:${password}@127.0.0.1:${port}/x` },
  });
  await lab.putExchange(vhost, 'fed.x', 'fanout');
  await lab.putPolicy('user', {
    vhost,
    name: 'fed',
    pattern: '^fed\\.x$',
    applyTo: 'exchanges',
    priority: 0,
    definition: { 'federation-upstream': 'silent' },
  });
}
