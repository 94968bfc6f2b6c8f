import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

/** The manifest a user installs, and the .env.example they fill in, say what INTERFACE.md says. */

const root = new URL('../../', import.meta.url);
const manifest = parse(readFileSync(new URL('slack/manifest.yml', root), 'utf8'));

describe('slack/manifest.yml', () => {
  it('declares /rmq at /slack/events', () => {
    const [command] = manifest.features.slash_commands;
    expect(manifest.features.slash_commands).toHaveLength(1);
    expect(command.command).toBe('/rmq');
    expect(new URL(command.url).pathname).toBe('/slack/events');
    expect(command.should_escape).toBe(false);
  });

  it('asks for the least scopes: the command, mentions, posting, attaching a file, reading an attached file, reading approver groups', () => {
    expect([...manifest.oauth_config.scopes.bot].sort()).toEqual([
      'app_mentions:read',
      'chat:write',
      'commands',
      'files:read',
      'files:write',
      'usergroups:read',
    ]);
    expect(manifest.oauth_config.scopes.user).toBeUndefined();
  });

  it('sends interactivity and events to /slack/events, with Socket Mode off', () => {
    expect(manifest.settings.interactivity.is_enabled).toBe(true);
    expect(new URL(manifest.settings.interactivity.request_url).pathname).toBe('/slack/events');
    expect(new URL(manifest.settings.event_subscriptions.request_url).pathname).toBe('/slack/events');
    expect(manifest.settings.event_subscriptions.bot_events).toEqual(['app_mention']);
    expect(manifest.settings.socket_mode_enabled).toBe(false);
  });

  it('stays within the manifest schema’s lengths', () => {
    expect(manifest.display_information.name.length).toBeLessThanOrEqual(35);
    expect(manifest.display_information.description.length).toBeLessThanOrEqual(140);
    expect(manifest.features.slash_commands[0].usage_hint.length).toBeLessThanOrEqual(1000);
  });
});

describe('.env.example', () => {
  const example = readFileSync(new URL('.env.example', root), 'utf8');
  const variables = example.match(/^[A-Z_]+(?==)/gm) ?? [];

  it('lists every variable of INTERFACE.md section 3, once, each with a comment', () => {
    const expected = [
      'RMQ_URL',
      'RMQ_USER',
      'RMQ_PASSWORD',
      'RMQ_MODE',
      'RMQ_VHOST',
      'RMQ_VHOSTS',
      'RMQ_AMQP_URL',
      'RMQ_WATCH_INTERVAL',
      'RMQ_TIMEOUT',
      // not in INTERFACE.md (CHANGELOG.md): the broker client's body limits
      'RMQ_MAX_BODY',
      'RMQ_MAX_LISTING',
      'RMQ_ENVIRONMENTS',
      'REDIS_URL',
      'REDIS_SENTINELS',
      'REDIS_SENTINEL_NAME',
      'RMQ_AUDIT_KEY',
      'RMQ_LINT_SCHEDULE',
      // the terminal's import through the bot (CHANGELOG.md, issue 26)
      'RMQ_API_TOKENS',
      'RMQ_BOT_URL',
      'RMQ_BOT_TOKEN',
      'SLACK_BOT_TOKEN',
      'SLACK_SIGNING_SECRET',
      'SLACK_APP_TOKEN',
      'SLACK_API_URL',
      'SLACK_APPROVALS_CHANNEL',
      'SLACK_APPROVERS',
      'SLACK_REQUESTERS',
      'RMQ_REQUEST_TTL',
      'RMQ_APPROVALS_REQUIRED',
      'RMQ_BREAK_GLASS',
      'PORT',
      'LOG_LEVEL',
    ];
    expect([...variables].sort()).toEqual([...expected].sort());
    const lines = example.split('\n');
    for (const v of expected) {
      // A comment right above it, or above the group of variables it belongs to (RMQ_USER, RMQ_PASSWORD).
      let i = lines.findIndex((l) => l.startsWith(`${v}=`)) - 1;
      while (i > 0 && /^[A-Z_]+=/.test(lines[i] ?? '')) i--;
      expect(lines[i], `${v} has a comment above it`).toMatch(/^#/);
    }
  });
});
