import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { LinkCounts } from '../../links/index.ts';
import type { CallInfo } from '../../rabbit/index.ts';

/**
 * The bot's Prometheus metrics, in a registry of its own (no global state: tests run several
 * apps in one process). Label values are bounded: command names come from the command table,
 * never from what a user typed.
 */

/** How a request ended, as counted. `lost`: the answer never reached Slack (the asker was told, when possible). */
export type Outcome = 'answered' | 'not-asked' | 'refused' | 'usage' | 'failed' | 'lost';
export type Via = 'command' | 'mention';

export interface Metrics {
  readonly registry: Registry;
  readonly requests: Counter<'command' | 'outcome' | 'via'>;
  readonly requestSeconds: Histogram<'command' | 'via'>;
  readonly brokerCalls: Counter<'env' | 'method'>;
  readonly brokerCallErrors: Counter<'env' | 'method' | 'code'>;
  readonly brokerCallSeconds: Histogram<'env' | 'method'>;
  readonly duplicateEvents: Counter;
  /** Signed slash commands and form submissions posted again, acknowledged and not handled. */
  readonly replayedRequests: Counter<'kind'>;
  readonly deliveryErrors: Counter<'via'>;
  /** Slack calls tried again (429 after its Retry-After, 5xx, timeouts), by `http-<status>` or `other`. */
  readonly deliveryRetries: Counter<'error'>;
  /**
   * The federation links and shovels of each environment by state, as the last reading of the
   * links watch found them: `expected` (should run), `running`, `starting`, `stuck`, `stopped`,
   * `missing` (should run, reported nowhere), `unexpected`, `unknown` (not readable).
   */
  readonly links: Gauge<'env' | 'state'>;
  /** The links watch's hook: one reading's counts, for one environment. */
  linksCounted(env: string, counts: LinkCounts): void;
  /** The ManagementClient `onCall` hook for one environment. */
  onBrokerCall(env: string): (info: CallInfo) => void;
}

/** Each metric's help text, as `/metrics` shows it. */
const HELP = {
  rmq_slack_requests_total: 'Slack requests answered, by command and outcome',
  rmq_slack_request_duration_seconds: 'From a Slack request received to its answer delivered',
  rmq_broker_calls_total: 'HTTP calls to the management API, each attempt counted',
  rmq_broker_call_errors_total: 'Failed calls to the management API, by error code',
  rmq_broker_call_duration_seconds: 'Duration of management API calls, body included',
  rmq_slack_duplicate_events_total: 'Events Slack delivered again, recognised and not answered twice',
  rmq_slack_replayed_requests_total:
    'Signed slash commands and form submissions posted again within their signature lifetime, not handled',
  rmq_slack_delivery_errors_total:
    'Answers and files Slack did not take in the end (response URL or Web API), retries spent',
  rmq_slack_delivery_retries_total: 'Slack calls tried again after a 429, a 5xx or a timeout',
  rmq_links:
    'Federation links and shovels by state at the last reading of the links watch (missing: should run, reported nowhere)',
} as const;
type MetricName = keyof typeof HELP;

/** Seconds from a Slack request to its answer; seconds of one management API call. */
const ANSWER_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2, 3, 5, 10, 30];
const CALL_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10];

export function createMetrics(options: { defaultMetrics?: boolean } = {}): Metrics {
  const registry = new Registry();
  if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: registry });
  const registers = [registry];

  // Every metric in this registry, its help text from HELP; label names as given (bounded values, see above).
  const counter = <L extends string = never>(name: MetricName, labelNames: readonly L[] = []) =>
    new Counter<L>({ name, help: HELP[name], labelNames, registers });
  const histogram = <L extends string>(name: MetricName, labelNames: readonly L[], buckets: number[]) =>
    new Histogram<L>({ name, help: HELP[name], labelNames, buckets, registers });

  const requests = counter('rmq_slack_requests_total', ['command', 'outcome', 'via']);
  const requestSeconds = histogram('rmq_slack_request_duration_seconds', ['command', 'via'], ANSWER_BUCKETS);
  const brokerCalls = counter('rmq_broker_calls_total', ['env', 'method']);
  const brokerCallErrors = counter('rmq_broker_call_errors_total', ['env', 'method', 'code']);
  const brokerCallSeconds = histogram('rmq_broker_call_duration_seconds', ['env', 'method'], CALL_BUCKETS);
  const duplicateEvents = counter('rmq_slack_duplicate_events_total');
  const replayedRequests = counter('rmq_slack_replayed_requests_total', ['kind']);
  const deliveryErrors = counter('rmq_slack_delivery_errors_total', ['via']);
  const deliveryRetries = counter('rmq_slack_delivery_retries_total', ['error']);
  const links = new Gauge<'env' | 'state'>({
    name: 'rmq_links',
    help: HELP.rmq_links,
    labelNames: ['env', 'state'],
    registers,
  });

  return {
    registry,
    requests,
    requestSeconds,
    brokerCalls,
    brokerCallErrors,
    brokerCallSeconds,
    duplicateEvents,
    replayedRequests,
    deliveryErrors,
    deliveryRetries,
    links,
    linksCounted: (env, counts) => {
      for (const [state, n] of Object.entries(counts)) links.set({ env, state }, n);
    },
    onBrokerCall: (env) => (info) => {
      brokerCalls.inc({ env, method: info.method });
      brokerCallSeconds.observe({ env, method: info.method }, info.ms / 1000);
      if (info.error) brokerCallErrors.inc({ env, method: info.method, code: info.error });
    },
  };
}
