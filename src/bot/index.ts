/** The entrance of bot/: what the other folders of src/ use of it (inside, modules import each other directly). */
export { createHealthMonitor, type HealthDeps, type HealthMonitor } from './health.ts';
export { importRoute } from './importRoute.ts';
export { livezRoute, metricsRoute, readinessRoutes } from './routes.ts';
