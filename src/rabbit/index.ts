/** The entrance of rabbit/: what the other folders of src/ use of it (inside, modules import each other directly). */
export { ManagementClient, type ManagementClientOptions } from './client.ts';
export {
  brokerReason,
  isRabbitError,
  type NotAskedWhy,
  notAskedBecause,
  RABBIT_ERROR_CODES,
  RabbitError,
  type RabbitErrorCode,
} from './errors.ts';
export {
  type DurabilityTaker,
  type Inventory,
  type InventorySource,
  type LiveReading,
  liveOfNames,
  narrowedTo,
  openInventory,
  type Started,
  startNow,
} from './inventory.ts';
export {
  type BrokerAbout,
  brokerAbout,
  type LinksReading,
  type LinksSource,
  readLinks,
} from './linksReading.ts';
export { PAGE_MAX } from './listings.ts';
export {
  type Binding,
  type DeprecatedFeature,
  type DurabilityQueue,
  type ExchangeDetail,
  type ExchangeListing,
  type FederationState,
  type Permission,
  type QueueDetail,
  type QueueDurability,
  type QueueListing,
  toQueueKind,
  type WhoAmI,
} from './responses.ts';
export type { CallInfo, Timeouts } from './transport.ts';
export { type Unread, type UnreadWhat, unreadOf, whyFailed } from './unread.ts';
