import { closeNames } from './didYouMean.ts';
import { InputError } from './errors.ts';

/**
 * A vhost that does not exist is a mistake to point out, not a question answered with "nothing
 * governs": one sentence for `which` and `preview`, with the close names the identity can see.
 */

/** What the missing-vhost sentence may ask of the broker. ManagementClient satisfies it. */
export interface VhostLister {
  /** The vhosts this identity can see. */
  listVhosts?(): Promise<string[]>;
  /** Who this identity is (an administrator sees every vhost; anyone else only those it has permissions on). */
  whoami?(): Promise<{ readonly name: string; readonly tags: readonly string[] }>;
}

/**
 * Up to three of `known` that look like `typed`: same letters in another case, a typo or two
 * away, or one the start of the other (`orders` for `orders-eu`), closest first. The ranking is
 * the one every "did you mean" uses (`didYouMean.ts`).
 */
export function closeVhosts(typed: string, known: readonly string[]): string[] {
  return closeNames(typed, known);
}

/** A vhost the broker answered "not found" for, and what may explain it. */
export interface MissingVhost {
  readonly vhost: string;
  /** Close names among the vhosts this identity sees. */
  readonly close: readonly string[];
  /**
   * Set when the identity is not known to be an administrator: the vhost may exist and be hidden
   * from it (RabbitMQ 4.3 answers 404 for a vhost the user has no permission on, where 3.10 and
   * 4.0 answer 401). The broker user's name, or '' when it could not be read.
   */
  readonly hiddenFrom?: string;
}

/**
 * The one sentence for a vhost the broker says is not there: "does not exist" only where the
 * identity sees every vhost (an administrator); otherwise that this identity sees no such vhost,
 * and why that may be. `name` renders a name (JSON quotes in the terminal, code in Slack).
 */
export function missingVhostSentence(m: MissingVhost, name: (s: string) => string = JSON.stringify): string {
  const hint = m.close.length ? `; did you mean ${m.close.map(name).join(' or ')}?` : '';
  if (m.hiddenFrom === undefined) return `vhost ${name(m.vhost)} does not exist${hint}`;
  const who = m.hiddenFrom ? `broker user ${name(m.hiddenFrom)}` : 'this broker identity';
  return `${who} sees no vhost ${name(m.vhost)}: it does not exist, or this user has no permission on it (the broker shows a user who is not an administrator only the vhosts it has permissions on)${hint}`;
}

/** The missing vhost, with the close names and whether it may be hidden (never fails). */
export async function missingVhost(
  broker: VhostLister,
  vhost: string,
): Promise<MissingVhost & { sentence: string }> {
  const [listed, me] = await Promise.allSettled([
    broker.listVhosts?.() ?? Promise.resolve([]),
    broker.whoami?.() ?? Promise.reject(new Error('not asked')),
  ]);
  // Only hints: the vhost is not there for this identity whether or not these can be read.
  const close = listed.status === 'fulfilled' ? closeVhosts(vhost, listed.value) : [];
  const admin = me.status === 'fulfilled' && me.value.tags.includes('administrator');
  const m: MissingVhost = admin
    ? { vhost, close }
    : { vhost, close, hiddenFrom: me.status === 'fulfilled' ? me.value.name : '' };
  return { ...m, sentence: missingVhostSentence(m) };
}

/**
 * The missing vhost as the InputError `which` and `policies` refuse with (exit 2), without the
 * command's usage: the command was typed right, the vhost is not there (or not for this user).
 */
export async function missingVhostError(broker: VhostLister, vhost: string): Promise<InputError> {
  const { sentence } = await missingVhost(broker, vhost);
  const capitalised = `${sentence.charAt(0).toUpperCase()}${sentence.slice(1)}`;
  return new InputError(capitalised.endsWith('?') ? capitalised : `${capitalised}.`);
}

/**
 * An environment limited to some vhosts (RMQ_VHOSTS, or `vhosts:` in the environments file: on a
 * shared broker, one team's): only those are watched, answered about and changed. `undefined`:
 * every vhost.
 */
export interface VhostScope {
  readonly name: string;
  readonly vhosts?: readonly string[] | undefined;
}

/** Whether the environment answers about, watches and changes `vhost`. */
export function inScope(env: VhostScope, vhost: string): boolean {
  return env.vhosts === undefined || env.vhosts.includes(vhost);
}

/** The one sentence for a vhost outside the environment's list, or undefined when it is inside. */
export function outsideScope(env: VhostScope, vhost: string): string | undefined {
  if (inScope(env, vhost) || env.vhosts === undefined) return undefined;
  const list = env.vhosts.map((v) => JSON.stringify(v)).join(', ');
  return `Environment ${env.name} is limited to the vhost${env.vhosts.length === 1 ? '' : 's'} ${list}: vhost ${JSON.stringify(vhost)} is not one of them, so nothing was asked or changed there.`;
}

/** The same, as the InputError every front door refuses with (exit 2 in the terminal). */
export function checkScope(env: VhostScope, vhost: string, usage?: string): void {
  const sentence = outsideScope(env, vhost);
  if (sentence) throw new InputError(sentence, usage === undefined ? {} : { usage });
}
