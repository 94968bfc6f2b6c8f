import { Counter, collectDefaultMetrics, Histogram, Registry } from 'prom-client';
import type { CallInfo } from '../rabbit/index.ts';

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
  /** The ManagementClient `onCall` hook for one environment. */
  onBrokerCall(env: string): (info: CallInfo) => void;
}

export function createMetrics(options: { defaultMetrics?: boolean } = {}): Metrics {
  const registry = new Registry();
  if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: registry });
  const registers = [registry];

  const requests = new Counter({
    name: 'rmq_slack_requests_total',
    help: 'Slack requests answered, by command and outcome',
    labelNames: ['command', 'outcome', 'via'] as const,
    registers,
  });
  const requestSeconds = new Histogram({
    name: 'rmq_slack_request_duration_seconds',
    help: 'From a Slack request received to its answer delivered',
    labelNames: ['command', 'via'] as const,
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 3, 5, 10, 30],
    registers,
  });
  const brokerCalls = new Counter({
    name: 'rmq_broker_calls_total',
    help: 'HTTP calls to the management API, each attempt counted',
    labelNames: ['env', 'method'] as const,
    registers,
  });
  const brokerCallErrors = new Counter({
    name: 'rmq_broker_call_errors_total',
    help: 'Failed calls to the management API, by error code',
    labelNames: ['env', 'method', 'code'] as const,
    registers,
  });
  const brokerCallSeconds = new Histogram({
    name: 'rmq_broker_call_duration_seconds',
    help: 'Duration of management API calls, body included',
    labelNames: ['env', 'method'] as const,
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10],
    registers,
  });
  const duplicateEvents = new Counter({
    name: 'rmq_slack_duplicate_events_total',
    help: 'Events Slack delivered again, recognised and not answered twice',
    registers,
  });
  const replayedRequests = new Counter({
    name: 'rmq_slack_replayed_requests_total',
    help: 'Signed slash commands and form submissions posted again within their signature lifetime, not handled',
    labelNames: ['kind'] as const,
    registers,
  });
  const deliveryErrors = new Counter({
    name: 'rmq_slack_delivery_errors_total',
    help: 'Answers and files Slack did not take in the end (response URL or Web API), retries spent',
    labelNames: ['via'] as const,
    registers,
  });
  const deliveryRetries = new Counter({
    name: 'rmq_slack_delivery_retries_total',
    help: 'Slack calls tried again after a 429, a 5xx or a timeout',
    labelNames: ['error'] as const,
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
    onBrokerCall: (env) => (info) => {
      brokerCalls.inc({ env, method: info.method });
      brokerCallSeconds.observe({ env, method: info.method }, info.ms / 1000);
      if (info.error) brokerCallErrors.inc({ env, method: info.method, code: info.error });
    },
  };
}
