import { atLeast, type BrokerVersion } from './types.ts';

/**
 * Which plugins with policy keys (keys.ts `plugin`) a broker has enabled, from what it reports:
 * a key of a plugin it has not enabled is a definition it refuses ("not recognised policy
 * settings"). Pure; the broker's answers come in.
 *
 * The federation plugin registers its policy keys and the exchange type `x-federation-upstream`
 * together, and the overview lists the exchange types to any user (with it: there, on 3.10.8,
 * 4.0.5 and 4.3.6; without it: none). From 4.2 the plugin is split: `rabbitmq_queue_federation`
 * alone registers the keys through `rabbitmq_federation_common` without that exchange type, so
 * there its absence proves nothing, and the nodes' running applications decide (listed to
 * `monitoring` and `administrator` only; otherwise unknown).
 */

/** The exchange type the federation plugin registers beside its keys. */
export const FEDERATION_EXCHANGE_TYPE = 'x-federation-upstream';

/** The application that registers the federation keys: the plugin itself, from 4.2 its common part. */
const FEDERATION_APPLICATIONS = ['rabbitmq_federation', 'rabbitmq_federation_common'];

/** What the broker reports that shows its plugins. */
export interface PluginSigns {
  readonly version: BrokerVersion;
  /** The overview's `exchange_types`; undefined when not reported. */
  readonly exchangeTypes: readonly string[] | undefined;
  /** Each node's running applications; undefined when not read. */
  readonly applications?: readonly (readonly string[])[] | undefined;
}

/**
 * The plugins with policy keys that are enabled; undefined when that is not known (then a plugin's
 * key is warned about, never refused).
 */
export function enabledPlugins(signs: PluginSigns): ReadonlySet<string> | undefined {
  const federation = federationEnabled(signs);
  if (federation === undefined) return undefined;
  return new Set(federation ? ['federation'] : []);
}

function federationEnabled({ version, exchangeTypes, applications }: PluginSigns): boolean | undefined {
  if (exchangeTypes === undefined) return undefined;
  if (exchangeTypes.includes(FEDERATION_EXCHANGE_TYPE)) return true;
  if (!atLeast(version, 4, 2)) return false;
  if (!applications || applications.length === 0) return undefined;
  const running = applications.map((apps) => apps.some((a) => FEDERATION_APPLICATIONS.includes(a)));
  if (running.every(Boolean)) return true;
  // One node with it and one without: which one a write reaches decides.
  return running.some(Boolean) ? undefined : false;
}

/** Whether the overview alone settles it (else the nodes' applications are worth asking). */
export function pluginsNeedApplications(
  version: BrokerVersion,
  exchangeTypes: readonly string[] | undefined,
): boolean {
  return exchangeTypes !== undefined && enabledPlugins({ version, exchangeTypes }) === undefined;
}
