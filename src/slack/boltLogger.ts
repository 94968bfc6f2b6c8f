import { type Logger as BoltLogger, LogLevel } from '@slack/bolt';
import type { Logger } from '../log/index.ts';

/**
 * pino as Bolt's logger. Bolt (and its Web API client) log strings, which pino's path-based
 * redaction cannot see into, so every known secret value is masked in the text as well.
 */

const LEVELS: Record<string, LogLevel> = {
  fatal: LogLevel.ERROR,
  error: LogLevel.ERROR,
  warn: LogLevel.WARN,
  info: LogLevel.INFO,
  debug: LogLevel.DEBUG,
  trace: LogLevel.DEBUG,
  silent: LogLevel.ERROR,
};

export function boltLogLevel(pinoLevel: string): LogLevel {
  return LEVELS[pinoLevel] ?? LogLevel.INFO;
}

/** Replaces every occurrence of each secret (and of Slack-looking tokens) with `[redacted]`. */
export function secretMasker(secrets: readonly (string | undefined)[]): (text: string) => string {
  const values = [
    ...new Set(secrets.filter((s): s is string => typeof s === 'string' && s.length >= 4)),
  ].sort((a, b) => b.length - a.length);
  return (text) => {
    let out = text;
    for (const v of values) out = out.replaceAll(v, '[redacted]');
    return out.replace(/\bxox[abpre]-[A-Za-z0-9-]+|\bxapp-[A-Za-z0-9-]+/g, '[redacted]');
  };
}

function render(parts: readonly unknown[]): string {
  return parts
    .map((p) => {
      if (typeof p === 'string') return p;
      if (p instanceof Error) return p.stack ?? `${p.name}: ${p.message}`;
      try {
        return JSON.stringify(p);
      } catch {
        return String(p);
      }
    })
    .join(' ');
}

export function createBoltLogger(logger: Logger, secrets: readonly (string | undefined)[]): BoltLogger {
  const mask = secretMasker(secrets);
  const log = logger.child({ component: 'bolt' });
  const at =
    (level: 'debug' | 'info' | 'warn' | 'error') =>
    (...parts: unknown[]) => {
      if (log.isLevelEnabled(level)) log[level](mask(render(parts)));
    };
  return {
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    // The level is pino's (LOG_LEVEL); Bolt's attempts to change it are ignored.
    setLevel: () => {},
    getLevel: () => boltLogLevel(logger.level),
    setName: () => {},
  };
}
