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
}

/**
 * Up to three of `known` that look like `typed`: same letters in another case, a typo or two
 * away, or one the start of the other (`orders` for `orders-eu`), closest first. The ranking is
 * the one every "did you mean" uses (`didYouMean.ts`).
 */
export function closeVhosts(typed: string, known: readonly string[]): string[] {
  return closeNames(typed, known);
}

/** "vhost X does not exist" and, when the broker lists any, the close names (never fails). */
export async function missingVhost(
  broker: VhostLister,
  vhost: string,
): Promise<{ sentence: string; close: string[] }> {
  let close: string[] = [];
  try {
    close = closeVhosts(vhost, (await broker.listVhosts?.()) ?? []);
  } catch {
    // Only a hint: the vhost is missing whether or not the list can be read.
  }
  const hint = close.length ? `; did you mean ${close.map((v) => JSON.stringify(v)).join(' or ')}?` : '';
  return { sentence: `vhost ${JSON.stringify(vhost)} does not exist${hint}`, close };
}

/** The missing vhost as the InputError `which` and `policies` refuse with (exit 2), usage attached. */
export async function missingVhostError(
  broker: VhostLister,
  vhost: string,
  usage: string,
): Promise<InputError> {
  const { sentence } = await missingVhost(broker, vhost);
  const capitalised = `${sentence.charAt(0).toUpperCase()}${sentence.slice(1)}`;
  return new InputError(capitalised.endsWith('?') ? capitalised : `${capitalised}.`, { usage });
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
