/**
 * Helpers for tests against the real broker: where it is, a fresh vhost per test, a throwaway
 * user, and polling instead of sleeping (the broker's stats lag by seconds, and by how much varies).
 */
import { randomBytes } from 'node:crypto';
import { request } from 'undici';
import { which } from '../../src/commands/which/which.ts';
import type { ManagementClientOptions } from '../../src/rabbit/client.ts';
import { LabClient } from '../../src/rabbit/lab.ts';

export function brokerUrl(): string {
  return process.env.RMQ_URL ?? 'http://127.0.0.1:15672';
}

export function brokerCredentials(): { user: string; password: string } {
  return { user: process.env.RMQ_USER ?? 'guest', password: process.env.RMQ_PASSWORD ?? 'guest' };
}

/** An administrator client for the test broker; close it after use. */
export function adminClient(options: Partial<ManagementClientOptions> = {}): LabClient {
  return new LabClient({ url: brokerUrl(), ...brokerCredentials(), ...options });
}

/**
 * A management API call on the broker at `url` as the test's admin: its status and JSON (a 404
 * too); any other status that is not a success throws, with the broker's words.
 */
export function managementCall(url: string) {
  const { user, password } = brokerCredentials();
  return async (method: string, path: string, body?: unknown): Promise<{ status: number; json: unknown }> => {
    const res = await fetch(new URL(`/api/${path}`, url), {
      method,
      headers: {
        authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`,
        'content-type': 'application/json',
      },
      signal: AbortSignal.timeout(30_000),
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    if (!res.ok && res.status !== 404) throw new Error(`${method} ${path}: ${res.status} ${text}`);
    return { status: res.status, json: text ? (JSON.parse(text) as unknown) : null };
  };
}

/** `rmqtest-<prefix>-<random>`: unique across parallel test files and reruns. */
export function uniqueName(prefix = 'x'): string {
  return `rmqtest-${prefix}-${randomBytes(4).toString('hex')}`;
}

/**
 * Runs `fn` in a new vhost and deletes the vhost (and all in it) afterwards, even on failure.
 * `suffix` is appended to the generated name, e.g. to test names with "/" or non-ASCII.
 */
export async function withVhost<T>(
  fn: (vhost: string, client: LabClient) => Promise<T>,
  options: { client?: LabClient; prefix?: string; suffix?: string } = {},
): Promise<T> {
  const client = options.client ?? adminClient();
  const vhost = uniqueName(options.prefix ?? 'vh') + (options.suffix ?? '');
  try {
    await client.putVhost(vhost);
    return await fn(vhost, client);
  } finally {
    await client.deleteVhost(vhost);
    if (!options.client) await client.close();
  }
}

/**
 * Polls `fn` until it returns something other than `undefined`/`false` without throwing, and
 * returns that. Assertions may be thrown inside; the last one is reported at the deadline.
 */
export async function waitFor<T>(
  fn: () => T | undefined | false | Promise<T | undefined | false>,
  options: { deadlineMs?: number; intervalMs?: number; what?: string } = {},
): Promise<T> {
  const deadline = Date.now() + (options.deadlineMs ?? 30_000);
  const interval = options.intervalMs ?? 250;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await fn();
      if (value !== undefined && value !== false) return value;
      lastError = undefined;
    } catch (e) {
      lastError = e;
    }
    if (Date.now() >= deadline) {
      throw new Error(
        `waitFor: ${options.what ?? 'condition'} not met within ${options.deadlineMs ?? 30_000} ms`,
        {
          cause: lastError,
        },
      );
    }
    await new Promise((resolve) => setTimeout(resolve, interval));
  }
}

/**
 * Waits until every node of `urls` grants the test user `vhost` (GET /api/permissions 200). A
 * vhost made through one node of a 4.x cluster (Khepri) is read on another from its own copy,
 * which may be a moment behind: a queue declared through node 3 right after was refused there
 * with "Access refused" (seen under load in cluster-node-down).
 */
export async function vhostOnEveryNode(urls: readonly string[], vhost: string): Promise<void> {
  const { user, password } = brokerCredentials();
  const authorization = `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
  for (const url of urls) {
    await waitFor(
      async () => {
        const res = await request(
          `${url.replace(/\/+$/, '')}/api/permissions/${encodeURIComponent(vhost)}/${encodeURIComponent(user)}`,
          { headers: { authorization }, headersTimeout: 5_000, bodyTimeout: 5_000 },
        );
        await res.body.dump();
        return res.statusCode === 200;
      },
      { what: `${url} to grant ${user} the vhost ${vhost}` },
    );
  }
}

/** `which` once the broker reports the object's policy (statistics lag behind a new queue). */
export function reportedWhich(client: LabClient, vhost: string, name: string) {
  return waitFor(
    async () => {
      const r = await which({ name, vhost }, client);
      return r.answer === 'reported' ? r : undefined;
    },
    { deadlineMs: 30_000, intervalMs: 500, what: `the broker to report ${name}` },
  );
}

export async function admin(
  method: 'PUT' | 'DELETE',
  path: string,
  body?: unknown,
  url = brokerUrl(),
): Promise<number> {
  const { user, password } = brokerCredentials();
  const res = await request(url.replace(/\/+$/, '') + path, {
    method,
    headers: {
      authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.body.text();
  if (res.statusCode >= 300 && !(method === 'DELETE' && res.statusCode === 404)) {
    throw new Error(`${method} ${path}: ${res.statusCode} ${text}`);
  }
  return res.statusCode;
}

export interface TestUser {
  readonly user: string;
  readonly password: string;
}

/**
 * Runs `fn` with a new broker user (given tags, and permissions in `vhost` if given: full unless
 * `permissions` says otherwise), deleted afterwards. User management stays out of the bot's
 * client on purpose.
 */
export async function withUser<T>(
  /** `url`: the management API of the broker to make the user on (default the machine's). */
  options: {
    tags: string[];
    vhost?: string;
    url?: string;
    permissions?: { configure: string; write: string; read: string };
  },
  fn: (user: TestUser) => Promise<T>,
): Promise<T> {
  const user = uniqueName('user');
  const password = randomBytes(9).toString('base64url');
  const enc = encodeURIComponent;
  const url = options.url ?? brokerUrl();
  await admin('PUT', `/api/users/${enc(user)}`, { password, tags: options.tags.join(',') }, url);
  try {
    if (options.vhost !== undefined) {
      await admin(
        'PUT',
        `/api/permissions/${enc(options.vhost)}/${enc(user)}`,
        options.permissions ?? { configure: '.*', write: '.*', read: '.*' },
        url,
      );
    }
    return await fn({ user, password });
  } finally {
    await admin('DELETE', `/api/users/${enc(user)}`, undefined, url);
  }
}
