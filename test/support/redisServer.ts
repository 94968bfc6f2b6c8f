/**
 * A Redis server of a test's own (the machine's `redis-server` binary, as `.ci/run` makes sure
 * of): its own port and directory, nothing kept on disk, stopped by its pid. For what must run
 * under the production key prefix (`rmq:`, the compiled CLI and bot) without touching the shared
 * Redis, and for what kills or restarts Redis.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { waitFor } from './broker.ts';

export interface RedisServer {
  readonly port: number;
  readonly url: string;
  readonly pid: number;
  readonly dir: string;
  readonly child: ChildProcess;
  /** Stops it (SIGKILL: nothing to save) and removes its directory. */
  stop(): Promise<void>;
}

/** A TCP port nothing listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const address = s.address();
      s.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

/**
 * Starts `redis-server` with `args` added (e.g. `['--replicaof', '127.0.0.1', '6380']`), on
 * `port` when given (one a client already retries on), else on a free one.
 */
export async function startRedisServer(args: readonly string[] = [], port?: number): Promise<RedisServer> {
  port ??= await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'rmq-redis-'));
  const child = spawn(
    'redis-server',
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--dir',
      dir,
      '--save',
      '',
      '--appendonly',
      'no',
      ...args,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  return supervise(child, port, dir);
}

/** Waits for the process to answer PING; stops it (and removes `dir`) if it does not. */
async function supervise(child: ChildProcess, port: number, dir: string): Promise<RedisServer> {
  let said = '';
  child.stdout?.on('data', (c: Buffer) => (said = (said + c.toString()).slice(-4000)));
  child.stderr?.on('data', (c: Buffer) => (said = (said + c.toString()).slice(-4000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `redis://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitFor(
      async () => {
        if (child.exitCode !== null) throw new Error(`redis-server exited ${child.exitCode}: ${said}`);
        const probe = new Redis(url, {
          lazyConnect: true,
          retryStrategy: () => null,
          maxRetriesPerRequest: 0,
        });
        probe.on('error', () => undefined);
        try {
          await probe.connect();
          return (await probe.ping()) === 'PONG';
        } finally {
          probe.disconnect();
        }
      },
      { deadlineMs: 15_000, intervalMs: 50, what: `redis on ${port}` },
    );
  } catch (err) {
    await stop();
    throw err;
  }
  return { port, url, pid: child.pid ?? -1, dir, child, stop };
}

/**
 * A Redis Sentinel (`redis-server CONF --sentinel`, the same binary) monitoring `primaryPort`
 * as `name`, quick to act: the primary down after 1 s, a quorum of `quorum`. Its own port and
 * directory (Sentinel rewrites its config file), stopped by its pid.
 */
export async function startSentinel(primaryPort: number, name: string, quorum = 2): Promise<RedisServer> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'rmq-sentinel-'));
  const conf = join(dir, 'sentinel.conf');
  writeFileSync(
    conf,
    [
      `port ${port}`,
      'bind 127.0.0.1',
      `dir ${dir}`,
      `sentinel monitor ${name} 127.0.0.1 ${primaryPort} ${quorum}`,
      `sentinel down-after-milliseconds ${name} 1000`,
      `sentinel failover-timeout ${name} 10000`,
      `sentinel parallel-syncs ${name} 1`,
      '',
    ].join('\n'),
  );
  return supervise(
    spawn('redis-server', [conf, '--sentinel'], { stdio: ['ignore', 'pipe', 'pipe'] }),
    port,
    dir,
  );
}

/** A primary and its replica (two servers of the test's own), synced, with a client on each. */
export interface ReplicatedRedis {
  readonly primary: RedisServer;
  readonly replica: RedisServer;
  readonly redis: Redis;
  readonly onReplica: Redis;
  /** Disconnects the clients, resumes the replica (a test may have SIGSTOPped it), stops both. */
  stop(): Promise<void>;
}

export async function startReplicatedRedis(): Promise<ReplicatedRedis> {
  const primary = await startRedisServer();
  const replica = await startRedisServer(['--replicaof', '127.0.0.1', String(primary.port)]);
  const redis = new Redis(primary.url, { maxRetriesPerRequest: 1 });
  const onReplica = new Redis(replica.url, { maxRetriesPerRequest: 1 });
  const stop = async () => {
    redis.disconnect();
    onReplica.disconnect();
    process.kill(replica.pid, 'SIGCONT');
    await Promise.allSettled([replica.stop(), primary.stop()]);
  };
  try {
    await waitFor(async () => /master_link_status:up/.test(await onReplica.info('replication')), {
      what: 'the replica to sync',
    });
    await waitFor(async () => /connected_slaves:1/.test(await redis.info('replication')), {
      what: 'the primary to see its replica',
    });
  } catch (err) {
    await stop();
    throw err;
  }
  return { primary, replica, redis, onReplica, stop };
}
