import type { PolicyLayer } from '../../policy/index.ts';
import { isRabbitError } from '../../rabbit/index.ts';
import type { WorkflowBroker } from '../broker.ts';
import { WorkflowError } from '../errors.ts';

/**
 * Can the bot's broker identity write this layer's policies in this vhost? The management API
 * lets a user write user policies with the `policymaker` or `administrator` tag, operator
 * policies with `administrator` only, and either only in a vhost the user has permissions in.
 * Asked before any approval, so nobody approves what the bot cannot do.
 *
 * Returns null when it can, else why not (the broker's words where it gave any).
 */
export async function whyIdentityCannotWrite(
  broker: Pick<WorkflowBroker, 'whoami' | 'permissions' | 'listVhosts'>,
  vhost: string,
  layer: PolicyLayer,
): Promise<string | null> {
  const me = await broker.whoami();
  const needed = layer === 'operator' ? ['administrator'] : ['policymaker', 'administrator'];
  if (!me.tags.some((t) => needed.includes(t))) {
    const has = me.tags.length ? `tags ${me.tags.join(', ')}` : 'no tags';
    const what = layer === 'operator' ? 'Operator policies' : 'Policies';
    return `The bot's broker user ${me.name} has ${has}; ${what.toLowerCase()} can only be written with the ${needed.join(' or ')} tag.`;
  }
  // Only administrators may read permissions; a policymaker sees exactly the vhosts it may use.
  if (me.tags.includes('administrator')) {
    if ((await broker.permissions(vhost, me.name)) === null)
      return `The bot's broker user ${me.name} has no permissions in vhost ${vhost}.`;
    return null;
  }
  try {
    if (!(await broker.listVhosts()).includes(vhost))
      return `The bot's broker user ${me.name} has no permissions in vhost ${vhost}.`;
  } catch (err) {
    if (isRabbitError(err, 'forbidden')) return err.reason ?? err.message;
    throw err;
  }
  return null;
}

/** The bot's broker identity may write that layer in that vhost, or the filing is refused. */
export async function assertIdentityCanWrite(
  broker: WorkflowBroker,
  vhost: string,
  layer: PolicyLayer,
): Promise<void> {
  let cannot: string | null;
  try {
    cannot = await whyIdentityCannotWrite(broker, vhost, layer);
  } catch (err) {
    if (!isRabbitError(err)) throw err;
    throw new WorkflowError(
      { code: 'broker-not-asked', why: err.code, detail: err.reason ?? err.message },
      {},
      { cause: err },
    );
  }
  if (cannot) throw new WorkflowError({ code: 'identity-cannot-write', reason: cannot });
}
