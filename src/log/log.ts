import { type DestinationStream, type Logger, pino } from 'pino';

/** Paths pino blanks out wherever they appear in a log line. */
export const REDACT_PATHS = [
  'password',
  'token',
  'secret',
  'authorization',
  '*.password',
  '*.token',
  '*.secret',
  '*.botToken',
  '*.appToken',
  '*.signingSecret',
  '*.authorization',
  '*.headers.authorization',
  'headers.authorization',
  'req.headers.authorization',
  'req.headers["x-slack-signature"]',
  'config.slack.botToken',
  'config.slack.signingSecret',
  'config.slack.appToken',
  'config.auditKey',
  '*.auditKey',
  'config.environments[*].password',
  'config.environments[*].amqp.password',
];

export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    { level, redact: { paths: REDACT_PATHS, censor: '[redacted]' }, base: { app: 'rmq-bot' } },
    destination,
  );
}

export type { Logger };
