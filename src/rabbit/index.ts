export {
  type BrokerOverview,
  type CallInfo,
  DEFAULT_TIMEOUTS,
  type HttpMethod,
  ManagementClient,
  type ManagementClientOptions,
  type Timeouts,
} from './client.ts';
export {
  cleanReason,
  errorFromFailure,
  errorFromResponse,
  isRabbitError,
  isRetryable,
  type NotAskedWhy,
  notAskedBecause,
  RABBIT_ERROR_CODES,
  RabbitError,
  type RabbitErrorCode,
} from './errors.ts';
export { JsonArraySplitter, parseJsonArrayStream } from './jsonArrayStream.ts';
export type {
  ExchangeDetail,
  ExchangeListing,
  Permission,
  QueueDetail,
  QueueKind,
  QueueListing,
  ReportedPolicy,
  WhoAmI,
} from './responses.ts';
