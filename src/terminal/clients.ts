import { DEFAULT_KEY_PREFIX, loadTerminalConfig, pickEnvironment, questionBudget } from '../config/index.ts';
import { checkScope, InputError } from '../core/index.ts';
import { ManagementClient } from '../rabbit/index.ts';

/** What the terminal's commands answer with: the chosen environment's broker, and the audit trail in Redis. */

export interface Io {
  out: (s: string) => void;
  err: (s: string) => void;
}

/** For tests: the Redis key prefix (default `rmq`, the bot's). */
export interface CliOptions {
  readonly keyPrefix?: string;
}

/**
 * The chosen environment's management API, closed after `fn`. An unknown `--env` is refused, and
 * so is a vhost outside the environment's `vhosts` (RMQ_VHOSTS), before the broker is asked
 * (a file's: each vhost it is read in).
 */
export async function withBroker(
  env: NodeJS.ProcessEnv,
  { env: name, vhost }: { readonly env?: string | undefined; readonly vhost: string | readonly string[] },
  fn: (broker: ManagementClient, at: { readonly env: string }) => Promise<number>,
): Promise<number> {
  const config = loadTerminalConfig(env);
  const environment = pickEnvironment(config, name);
  if (!environment) {
    throw new InputError(`Unknown environment ${name}.`, {
      hint: `Known: ${config.environments.map((e) => e.name).join(', ')}`,
    });
  }
  for (const v of typeof vhost === 'string' ? [vhost] : vhost) checkScope(environment, v);
  const client = new ManagementClient({
    url: environment.urls,
    user: environment.user,
    password: environment.password,
    ...(environment.credentialsFrom ? { credentialsFrom: environment.credentialsFrom } : {}),
    limits: config.bodyLimits,
  });
  try {
    return await fn(client.forQuestion(...questionBudget(config, 'terminal')), {
      env: environment.name,
    });
  } finally {
    // The answer is out: a request still hanging is not waited for.
    await client.close(0);
  }
}

/** The audit trail in Redis (loaded only by the commands that read it), closed after `fn`. */
export async function withTrail(
  env: NodeJS.ProcessEnv,
  io: Io,
  options: CliOptions,
  fn: (trail: import('../audit/index.ts').AuditTrail) => Promise<number>,
): Promise<number> {
  const [{ withRedis }, { AuditTrail }] = await Promise.all([
    import('./cliRedis.ts'),
    import('../audit/index.ts'),
  ]);
  return withRedis(env, io, (redis, config) =>
    fn(
      new AuditTrail(
        redis,
        options.keyPrefix ?? DEFAULT_KEY_PREFIX,
        config.auditKey ? { key: config.auditKey } : {},
      ),
    ),
  );
}
