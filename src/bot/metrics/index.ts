/**
 * The entrance of bot/metrics/: the process's metrics registry, a door of its own so that the Slack
 * modules that count (delivery, listeners) reach it without the bot's other door (its routes import
 * Slack's request parsing: through one door the two folders would import each other in a loop).
 */
export { createMetrics, type Metrics, type Outcome, type Via } from './metrics.ts';
