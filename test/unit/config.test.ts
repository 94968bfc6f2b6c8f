import { describe, expect, it } from 'vitest';
import { loadConfig, loadTerminalConfig, pickEnvironment } from '../../src/config/config.ts';
import { ConfigError } from '../../src/core/errors.ts';
import { redisConnection } from '../../src/redis/redis.ts';

/**
 * `loadConfig` with `vars`, and with `extra` (YAML of one environment's keys, `a`): an
 * environments file e.yml holding it.
 */
function loadWith(vars: Record<string, string>, extra: string | undefined) {
  const yaml = extra
    ? `environments:\n  - name: a\n    url: http://a\n    userEnv: U\n    passwordEnv: P\n    ${extra}`
    : undefined;
  const env = { ...vars, ...(yaml ? { RMQ_ENVIRONMENTS: 'e.yml', U: 'u', P: 'p' } : {}) };
  return loadConfig(env, () => yaml ?? '');
}

describe('loadConfig', () => {
  it('defaults to one environment on the local broker', () => {
    const c = loadConfig({});
    expect(c.environments).toEqual([
      {
        name: 'default',
        url: 'http://localhost:15672',
        urls: ['http://localhost:15672'],
        user: 'guest',
        password: 'guest',
        credentialsFrom: { user: 'RMQ_USER', password: 'RMQ_PASSWORD' },
        mode: 'normal',
        approvers: [],
        approvalsChannel: undefined,
        amqp: {
          url: 'amqp://localhost:5672',
          urls: ['amqp://localhost:5672'],
          user: 'guest',
          password: 'guest',
        },
        requestTtlMs: 24 * 3_600_000,
        approvalsRequired: 1,
        requesters: [],
        breakGlass: undefined,
      },
    ]);
    expect(c.redisUrl).toBe('redis://127.0.0.1:6379');
    expect(c.port).toBe(3000);
    expect(c.watchIntervalMs).toBe(60_000);
  });

  it.each([
    // [given RMQ_AMQP_URL, RMQ_URL, expected endpoint]
    [
      undefined,
      'http://rabbit:15672',
      { url: 'amqp://rabbit:5672', urls: ['amqp://rabbit:5672'], user: 'u', password: 'p' },
    ],
    [
      undefined,
      'https://rabbit.example:443/mgmt',
      { url: 'amqps://rabbit.example:5671', urls: ['amqps://rabbit.example:5671'], user: 'u', password: 'p' },
    ],
    [
      'amqp://127.0.0.1:5673',
      'http://127.0.0.1:15673',
      { url: 'amqp://127.0.0.1:5673', urls: ['amqp://127.0.0.1:5673'], user: 'u', password: 'p' },
    ],
    [
      'amqp://ev:s%40cret@h:5672/%2F',
      'http://h:15672',
      { url: 'amqp://h:5672/%2F', urls: ['amqp://h:5672/%2F'], user: 'ev', password: 's@cret' },
    ],
  ])(
    'the AMQP endpoint from RMQ_AMQP_URL=%j and RMQ_URL=%j; credentials never in the URL kept',
    (given, url, want) => {
      const c = loadConfig({
        RMQ_URL: url,
        RMQ_USER: 'u',
        RMQ_PASSWORD: 'p',
        ...(given ? { RMQ_AMQP_URL: given } : {}),
      });
      expect(c.environments[0]?.amqp).toEqual(want);
    },
  );

  it.each([
    ['90s', 90_000],
    ['2m', 120_000],
    ['500ms', 500],
    ['45', 45_000],
  ])('RMQ_WATCH_INTERVAL=%j is %i ms', (text, ms) => {
    expect(loadConfig({ RMQ_WATCH_INTERVAL: text }).watchIntervalMs).toBe(ms);
  });

  it.each([
    [undefined, 24 * 3_600_000],
    ['90m', 90 * 60_000],
    ['2d', 2 * 86_400_000],
    ['1.5h', 90 * 60_000],
  ])('RMQ_REQUEST_TTL=%j is %i ms', (text, ms) => {
    expect(loadConfig(text ? { RMQ_REQUEST_TTL: text } : {}).environments[0]?.requestTtlMs).toBe(ms);
  });

  it('an environment of the file may set its own requestTtl; the others take RMQ_REQUEST_TTL', () => {
    const yaml =
      'environments:\n  - name: a\n    url: http://a\n    userEnv: U\n    passwordEnv: P\n    requestTtl: 2h\n  - name: b\n    url: http://b\n    userEnv: U\n    passwordEnv: P';
    const c = loadConfig({ RMQ_ENVIRONMENTS: 'e.yml', U: 'u', P: 'p', RMQ_REQUEST_TTL: '4h' }, () => yaml);
    expect(c.environments.map((e) => e.requestTtlMs)).toEqual([2 * 3_600_000, 4 * 3_600_000]);
  });

  it.each([
    [{ RMQ_REQUEST_TTL: '24' }, /RMQ_REQUEST_TTL: a duration/],
    [{ RMQ_REQUEST_TTL: '10s' }, /RMQ_REQUEST_TTL: between 1m and 30d/],
    [{ RMQ_URL: 'localhost:15672' }, /RMQ_URL/],
    [{ RMQ_MODE: 'yolo' }, /RMQ_MODE/],
    [{ PORT: 'eighty' }, /PORT/],
    [{ REDIS_URL: 'http://x' }, /REDIS_URL/],
    [{ LOG_LEVEL: 'loud' }, /LOG_LEVEL/],
    [{ RMQ_AMQP_URL: 'http://rabbit:5672' }, /RMQ_AMQP_URL: must start with amqp/],
    [{ RMQ_WATCH_INTERVAL: 'often' }, /RMQ_WATCH_INTERVAL/],
    [{ RMQ_WATCH_INTERVAL: '2h' }, /RMQ_WATCH_INTERVAL/],
    [{ RMQ_WATCH_INTERVAL: '100ms' }, /RMQ_WATCH_INTERVAL: between 500ms and 30m/],
  ])('%j fails fast, naming the variable', (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });

  it('reads several environments from a YAML file, credentials by env-var name', () => {
    const yaml = `
environments:
  - name: staging
    url: http://staging:15672
    userEnv: STAGING_USER
    passwordEnv: STAGING_PASSWORD
  - name: prod
    url: https://prod:15671
    userEnv: PROD_USER
    passwordEnv: PROD_PASSWORD
    mode: guarded
    approvers: [U1, S2]
    approvalsChannel: C9
`;
    const c = loadConfig(
      {
        RMQ_ENVIRONMENTS: 'envs.yml',
        STAGING_USER: 's',
        STAGING_PASSWORD: 'sp',
        PROD_USER: 'p',
        PROD_PASSWORD: 'pp',
        SLACK_APPROVERS: 'U7',
      },
      () => yaml,
    );
    expect(c.environments.map((e) => [e.name, e.user, e.mode, e.approvers, e.approvalsChannel])).toEqual([
      ['staging', 's', 'normal', ['U7'], undefined],
      ['prod', 'p', 'guarded', ['U1', 'S2'], 'C9'],
    ]);
    expect(pickEnvironment(c, undefined)?.name).toBe('staging');
    expect(pickEnvironment(c, 'prod')?.url).toBe('https://prod:15671');
    expect(pickEnvironment(c, 'nope')).toBeUndefined();
  });

  it.each([
    ['environments: []', /RMQ_ENVIRONMENTS/],
    ['environments:\n  - name: a\n    url: nope\n    userEnv: U\n    passwordEnv: P', /url/],
    [': : :', /YAML/],
  ])('a bad environments file names the file and the field (%j)', (yaml, message) => {
    expect(() => loadConfig({ RMQ_ENVIRONMENTS: 'e.yml', U: 'u', P: 'p' }, () => yaml)).toThrow(message);
  });

  it.each([
    // [environment variables, environments file (or none), what the error names]
    [{ RMQ_APPROVALS_REQUIRED: '0' }, undefined, /RMQ_APPROVALS_REQUIRED: a positive whole number/],
    [{ RMQ_APPROVALS_REQUIRED: 'two' }, undefined, /RMQ_APPROVALS_REQUIRED/],
    [{ RMQ_APPROVALS_REQUIRED: '1.5' }, undefined, /RMQ_APPROVALS_REQUIRED: a positive whole number/],
    [
      { RMQ_APPROVALS_REQUIRED: '3', SLACK_APPROVERS: 'U1AA,U2BB' },
      undefined,
      /RMQ_APPROVALS_REQUIRED: 3 approvals required, but only 2 approvers configured \(U1AA, U2BB\)/,
    ],
    [{ RMQ_APPROVALS_REQUIRED: '2' }, undefined, /only 0 approvers configured \(none\)/],
    [{ SLACK_REQUESTERS: 'U1AA,alice' }, undefined, /SLACK_REQUESTERS: "alice" is not a Slack user id/],
    [{}, 'approvalsRequired: 0', /e\.yml.*environments\.0\.approvalsRequired: a positive whole number/],
    [
      {},
      'approvers: [U1AA, U2BB]\n    approvalsRequired: 3',
      /RMQ_ENVIRONMENTS \(e\.yml\): environments\.0\.approvalsRequired \(environment "a"\): 3 approvals required, but only 2/,
    ],
    [
      {},
      'requesters: [U1AA, "#oncall"]',
      /e\.yml.*environments\.0\.requesters\.1: "#oncall" is not a Slack user id/,
    ],
  ])(
    'approval rules that cannot hold are refused at start, naming the key (%j %j)',
    (vars, extra, message) => {
      expect(() => loadWith(vars, extra)).toThrow(message);
    },
  );

  it.each([
    [{ RMQ_APPROVALS_REQUIRED: '2', SLACK_APPROVERS: 'U1AA,U2BB,U3CC' }, 2, []],
    [{ RMQ_APPROVALS_REQUIRED: '5', SLACK_APPROVERS: 'U1AA,S0GROUP' }, 5, []],
    [{ SLACK_REQUESTERS: 'U1AA, S0ONCALL' }, 1, ['U1AA', 'S0ONCALL']],
  ])('approval rules are read (%j)', (vars, required, requesters) => {
    const [env] = loadConfig(vars).environments;
    expect(env?.approvalsRequired).toBe(required);
    expect(env?.requesters).toEqual(requesters);
  });

  it('the environments file overrides the approval rules per environment', () => {
    const yaml = `environments:
  - { name: a, url: http://a, userEnv: U, passwordEnv: P }
  - { name: b, url: http://b, userEnv: U, passwordEnv: P, approvers: [U1AA, U2BB], approvalsRequired: 2, requesters: [S0ONCALL] }
`;
    const c = loadConfig(
      { RMQ_ENVIRONMENTS: 'e.yml', U: 'u', P: 'p', SLACK_REQUESTERS: 'U9ZZ', SLACK_APPROVERS: 'U7AA' },
      () => yaml,
    );
    expect(c.environments.map((e) => [e.name, e.approvalsRequired, e.requesters])).toEqual([
      ['a', 1, ['U9ZZ']],
      ['b', 2, ['S0ONCALL']],
    ]);
  });

  it.each([
    [
      {},
      'breakGlass: { allowed: true, reviewWithin: soon }',
      /e\.yml.*environments\.0\.breakGlass\.reviewWithin: a duration such as 4h/,
    ],
    [
      {},
      'breakGlass: { allowed: true }',
      /e\.yml.*environments\.0\.breakGlass\.reviewWithin: required when allowed is true/,
    ],
    [
      {},
      'breakGlass: { allowed: yes please }',
      /e\.yml.*environments\.0\.breakGlass\.allowed: true or false/,
    ],
    [
      {},
      'breakGlass: { allowed: true, reviewWithin: 4h, within: 4h }',
      /e\.yml.*environments\.0\.breakGlass/,
    ],
    [{ RMQ_BREAK_GLASS: 'yes' }, undefined, /RMQ_BREAK_GLASS: a duration such as 4h/],
    [{ RMQ_BREAK_GLASS: '90d' }, undefined, /RMQ_BREAK_GLASS: between 1s and 30d/],
  ])(
    'a break-glass setting that cannot be read is refused at start, naming the key (%j %j)',
    (vars, extra, message) => {
      expect(() => loadWith(vars, extra)).toThrow(message);
    },
  );

  it.each([
    ['every monday', /RMQ_LINT_SCHEDULE: a cron expression such as 0 9 \* \* 1/],
    ['61 * * * *', /RMQ_LINT_SCHEDULE: a cron expression/],
    ['* * *', /RMQ_LINT_SCHEDULE: a cron expression/],
  ])('a lint schedule that is not a cron expression is refused at start, naming it (%j)', (text, message) => {
    expect(() => loadConfig({ RMQ_LINT_SCHEDULE: text })).toThrow(ConfigError);
    expect(() => loadConfig({ RMQ_LINT_SCHEDULE: text })).toThrow(message);
  });

  it('the lint schedule: none by default; a cron pattern (five fields, or six with seconds) kept as written', () => {
    expect(loadConfig({}).lintSchedule).toBeUndefined();
    expect(loadConfig({ RMQ_LINT_SCHEDULE: '0 9 * * 1' }).lintSchedule).toBe('0 9 * * 1');
    expect(loadConfig({ RMQ_LINT_SCHEDULE: '*/5 * * * * *' }).lintSchedule).toBe('*/5 * * * * *');
  });

  it('break-glass: off by default, RMQ_BREAK_GLASS for every environment, the file per environment', () => {
    expect(loadConfig({}).environments[0]?.breakGlass).toBeUndefined();
    expect(loadConfig({ RMQ_BREAK_GLASS: '4h' }).environments[0]?.breakGlass).toEqual({
      reviewWithinMs: 4 * 3_600_000,
    });
    const yaml = `environments:
  - { name: a, url: http://a, userEnv: U, passwordEnv: P }
  - { name: b, url: http://b, userEnv: U, passwordEnv: P, breakGlass: { allowed: false } }
  - { name: c, url: http://c, userEnv: U, passwordEnv: P, breakGlass: { allowed: true, reviewWithin: 30m } }
`;
    const c = loadConfig({ RMQ_ENVIRONMENTS: 'e.yml', U: 'u', P: 'p', RMQ_BREAK_GLASS: '2h' }, () => yaml);
    expect(c.environments.map((e) => [e.name, e.breakGlass?.reviewWithinMs])).toEqual([
      ['a', 2 * 3_600_000],
      ['b', undefined],
      ['c', 30 * 60_000],
    ]);
  });

  it('vhosts: every one by default; RMQ_VHOSTS, or the file per environment, limits it; an empty list is refused', () => {
    expect(loadConfig({}).environments[0]?.vhosts).toBeUndefined();
    expect(loadConfig({ RMQ_VHOSTS: 'orders, billing' }).environments[0]?.vhosts).toEqual([
      'orders',
      'billing',
    ]);
    expect(loadWith({ RMQ_VHOSTS: 'ignored' }, 'vhosts: [orders]').environments[0]?.vhosts).toEqual([
      'orders',
    ]);
    expect(loadWith({}, 'mode: normal').environments[0]?.vhosts).toBeUndefined();
    expect(() => loadWith({}, 'vhosts: []')).toThrow(/environments\.0\.vhosts: at least one vhost/);
  });

  it("SLACK_API_URL must end in /api/, as Slack's own does; the sentence names the variable (issue 30)", () => {
    expect(loadConfig({ SLACK_API_URL: 'http://127.0.0.1:9/api/' }).slack.apiUrl).toBe(
      'http://127.0.0.1:9/api/',
    );
    for (const wrong of ['http://127.0.0.1:9', 'http://127.0.0.1:9/api', 'https://slack.com/']) {
      expect(() => loadConfig({ SLACK_API_URL: wrong })).toThrow(/SLACK_API_URL: must end in \/api\//);
    }
  });

  it('a credential variable the file names but the environment lacks is named', () => {
    const yaml =
      'environments:\n  - name: a\n    url: http://a\n    userEnv: A_USER\n    passwordEnv: A_PASS';
    expect(() => loadConfig({ RMQ_ENVIRONMENTS: 'e.yml' }, () => yaml)).toThrow(/A_USER is not set/);
  });
});

describe('broker budget and limits', () => {
  it('RMQ_TIMEOUT takes a duration or seconds; a wrong one names the variable', () => {
    expect(loadConfig({ RMQ_TIMEOUT: '15s' }).questionBudgetMs).toBe(15_000);
    expect(loadConfig({ RMQ_TIMEOUT: '1500ms' }).questionBudgetMs).toBe(1_500);
    expect(loadConfig({ RMQ_TIMEOUT: '20' }).questionBudgetMs).toBe(20_000);
    expect(loadConfig({}).questionBudgetMs).toBeUndefined();
    expect(() => loadConfig({ RMQ_TIMEOUT: 'soon' })).toThrow(/RMQ_TIMEOUT/);
    expect(() => loadConfig({ RMQ_TIMEOUT: '1h' })).toThrow(/RMQ_TIMEOUT/);
  });

  it('RMQ_AUDIT_KEY: a secret of at least 32 characters; a short one names the variable, never the value', () => {
    const key = 'k'.repeat(32);
    expect(loadConfig({ RMQ_AUDIT_KEY: key }).auditKey).toBe(key);
    expect(loadConfig({}).auditKey).toBeUndefined();
    expect(() => loadConfig({ RMQ_AUDIT_KEY: 'short-secret' })).toThrow(
      /RMQ_AUDIT_KEY: at least 32 characters/,
    );
    expect(() => loadConfig({ RMQ_AUDIT_KEY: 'short-secret' })).not.toThrow(/short-secret/);
  });

  it('RMQ_MAX_BODY and RMQ_MAX_LISTING take sizes', () => {
    expect(loadConfig({ RMQ_MAX_BODY: '32MiB', RMQ_MAX_LISTING: '2GB' }).bodyLimits).toEqual({
      bodyBytes: 32 * 1024 ** 2,
      listingBytes: 2e9,
    });
    expect(loadConfig({}).bodyLimits).toEqual({});
    expect(() => loadConfig({ RMQ_MAX_LISTING: 'lots' })).toThrow(/RMQ_MAX_LISTING/);
  });

  it('credentials inside RMQ_URL are refused, without repeating them', () => {
    expect(() => loadConfig({ RMQ_URL: 'http://u:hunter2@h:15672' })).toThrow(
      /RMQ_URL: must not carry credentials/,
    );
    try {
      loadConfig({ RMQ_URL: 'http://u:hunter2@h:15672' });
    } catch (e) {
      expect(String(e)).not.toContain('hunter2');
    }
  });
});

describe('Redis Sentinel', () => {
  it('REDIS_SENTINELS with REDIS_SENTINEL_NAME is used instead of REDIS_URL, as one address the clients open', () => {
    const config = loadConfig({
      REDIS_URL: 'redis://ignored:6379',
      REDIS_SENTINELS: '10.0.0.1:26379, 10.0.0.2 ,[::1]:26380',
      REDIS_SENTINEL_NAME: 'rmq-primary',
    });
    expect(config.redisUrl).toBe('redis+sentinel://10.0.0.1:26379,10.0.0.2:26379,[::1]:26380/rmq-primary');
    expect(redisConnection(config.redisUrl, { maxRetriesPerRequest: null })).toMatchObject({
      sentinels: [
        { host: '10.0.0.1', port: 26379 },
        { host: '10.0.0.2', port: 26379 },
        { host: '::1', port: 26380 },
      ],
      name: 'rmq-primary',
      maxRetriesPerRequest: null,
    });
    expect(redisConnection('redis://127.0.0.1:6379/2')).toEqual({ url: 'redis://127.0.0.1:6379/2' });
  });

  it.each([
    [{ REDIS_SENTINELS: '10.0.0.1:26379' }, /REDIS_SENTINELS and REDIS_SENTINEL_NAME go together/],
    [{ REDIS_SENTINEL_NAME: 'x' }, /REDIS_SENTINELS and REDIS_SENTINEL_NAME go together/],
    [
      { REDIS_SENTINELS: '10.0.0.1:99999', REDIS_SENTINEL_NAME: 'x' },
      /REDIS_SENTINELS: "10.0.0.1:99999" is not host:port/,
    ],
    [{ REDIS_SENTINELS: 'a b:1', REDIS_SENTINEL_NAME: 'x' }, /REDIS_SENTINELS: "a b:1" is not host:port/],
    [{ REDIS_SENTINELS: 'h:1', REDIS_SENTINEL_NAME: 'no/slash' }, /REDIS_SENTINEL_NAME: letters/],
  ])('%j is refused, saying what to fix', (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });
});

describe("a cluster's nodes", () => {
  it('RMQ_URL and RMQ_AMQP_URL take the nodes comma-separated, in order', () => {
    const c = loadConfig({
      RMQ_URL: 'http://n1:15672, http://n2:15672,http://n3:15672',
      RMQ_AMQP_URL: 'amqp://ev:pw@n1:5672,amqp://n2:5672',
    });
    const e = c.environments[0];
    expect(e?.url).toBe('http://n1:15672');
    expect(e?.urls).toEqual(['http://n1:15672', 'http://n2:15672', 'http://n3:15672']);
    expect(e?.amqp).toEqual({
      url: 'amqp://n1:5672',
      urls: ['amqp://n1:5672', 'amqp://n2:5672'],
      user: 'ev',
      password: 'pw',
    });
  });

  it('without RMQ_AMQP_URL, each node is followed on its host at 5672', () => {
    const c = loadConfig({ RMQ_URL: 'http://n1:15672,http://n2:15672' });
    expect(c.environments[0]?.amqp.urls).toEqual(['amqp://n1:5672', 'amqp://n2:5672']);
  });

  it('the environments file takes url and amqpUrl as lists', () => {
    const yaml = [
      'environments:',
      '  - name: prod',
      '    url: [http://n1:15672, http://n2:15672]',
      '    amqpUrl: [amqp://n1:5672, amqp://n2:5672]',
      '    userEnv: U',
      '    passwordEnv: P',
    ].join('\n');
    const c = loadConfig({ RMQ_ENVIRONMENTS: 'e.yml', U: 'u', P: 'p' }, () => yaml);
    expect(c.environments[0]?.urls).toEqual(['http://n1:15672', 'http://n2:15672']);
    expect(c.environments[0]?.amqp.urls).toEqual(['amqp://n1:5672', 'amqp://n2:5672']);
  });

  it.each([
    [{ RMQ_URL: 'http://a:1,http://a:1' }, /RMQ_URL: a node is listed twice/],
    [{ RMQ_URL: 'http://a:1,ftp://b:2' }, /RMQ_URL \(node 2\): must start with http/],
    [{ RMQ_URL: ' , ' }, /RMQ_URL: at least one URL/],
    [{ RMQ_AMQP_URL: 'amqp://a:1,http://b:2' }, /RMQ_AMQP_URL \(node 2\): must start with amqp/],
  ])('%j is refused, naming the variable and the node', (env, message) => {
    expect(() => loadConfig(env)).toThrow(message);
  });
});

describe('configuration that would weaken an environment without a word is refused at start (issue 28, item 8)', () => {
  it.each([
    [
      'approvalsRequired: true',
      /e\.yml\): environments\.0\.approvalsRequired: a positive whole number such as 2, not true/,
    ],
    [
      'approvalsRequired: [2]',
      /environments\.0\.approvalsRequired: a positive whole number such as 2, not \[2\]/,
    ],
    [
      'approvalsRequired: "2"',
      /environments\.0\.approvalsRequired: a positive whole number such as 2, not "2"/,
    ],
    ['approvalsRequired: 1.5', /environments\.0\.approvalsRequired: a positive whole number such as 2/],
    ['approvalsRequired: 0', /environments\.0\.approvalsRequired: a positive whole number such as 2/],
  ])('the file: %s', (extra, message) => {
    expect(() => loadWith({}, extra)).toThrow(message);
  });

  it.each(['true', '[2]', '0', '0x2', '1e1', '2.0', '-1'])('RMQ_APPROVALS_REQUIRED=%s', (value) => {
    expect(() => loadConfig({ RMQ_APPROVALS_REQUIRED: value, SLACK_APPROVERS: 'S0GROUP' })).toThrow(
      /RMQ_APPROVALS_REQUIRED: a positive whole number such as 2\./,
    );
    expect(
      loadConfig({ RMQ_APPROVALS_REQUIRED: '12', SLACK_APPROVERS: 'S0GROUP' }).environments[0]
        ?.approvalsRequired,
    ).toBe(12);
  });

  it.each([
    [
      'approvalsRequied: 3',
      /environments\.0: "approvalsRequied" is not a key here \(did you mean approvalsRequired\?\)/,
    ],
    [
      'breakglass: { allowed: false }',
      /environments\.0: "breakglass" is not a key here \(did you mean breakGlass\?\)/,
    ],
    [
      'breakGlass: { allowed: false, reviewwithin: 4h }',
      /environments\.0\.breakGlass: "reviewwithin" is not a key here \(did you mean reviewWithin\?\)/,
    ],
    [
      'zzz: 1',
      /environments\.0: "zzz" is not a key here \(the keys are name, url, userEnv, passwordEnv, mode,/,
    ],
  ])('an unknown key of an environment is named, with the nearest known one: %s', (extra, message) => {
    expect(() => loadWith({}, extra)).toThrow(message);
  });

  it('an unknown key at the top of the file is named', () => {
    const yaml =
      'environments:\n  - { name: a, url: http://a, userEnv: U, passwordEnv: P }\nenvironment: []\n';
    expect(() => loadConfig({ RMQ_ENVIRONMENTS: 'e.yml', U: 'u', P: 'p' }, () => yaml)).toThrow(
      /RMQ_ENVIRONMENTS \(e\.yml\): file: "environment" is not a key here \(did you mean environments\?\)/,
    );
  });

  it.each([
    [
      'approvers: [uapprover]',
      /environments\.0\.approvers\.0: "uapprover" is not a Slack user id \(U…, W…\) or user-group id \(S…\)/,
    ],
    ['approvers: [U1AA, "@bob"]', /environments\.0\.approvers\.1: "@bob" is not a Slack user id/],
    ['requesters: ["@bob"]', /environments\.0\.requesters\.0: "@bob" is not a Slack user id/],
    [
      'approvers: [UAPPROVER, UAPPROVER]',
      /environments\.0\.approvers\.1: UAPPROVER is listed twice: each id counts once/,
    ],
    ['requesters: [S0ONCALL, S0ONCALL]', /environments\.0\.requesters\.1: S0ONCALL is listed twice/],
  ])('approver and requester ids of the file: %s', (extra, message) => {
    expect(() => loadWith({}, extra)).toThrow(message);
  });

  it.each([
    [{ SLACK_APPROVERS: 'U1AA,uapprover' }, /SLACK_APPROVERS: "uapprover" is not a Slack user id/],
    [{ SLACK_APPROVERS: '@bob' }, /SLACK_APPROVERS: "@bob" is not a Slack user id/],
    [{ SLACK_REQUESTERS: '@bob' }, /SLACK_REQUESTERS: "@bob" is not a Slack user id/],
    [
      { SLACK_APPROVERS: 'UAPPROVER,UAPPROVER', RMQ_APPROVALS_REQUIRED: '2' },
      /SLACK_APPROVERS: UAPPROVER is listed twice: each id counts once/,
    ],
    [{ SLACK_REQUESTERS: 'U1AA,U1AA' }, /SLACK_REQUESTERS: U1AA is listed twice/],
  ])('approver and requester ids of the variables: %j', (vars, message) => {
    expect(() => loadConfig(vars)).toThrow(message);
  });

  it.each([
    // [variables, whether it starts]: only what is provably impossible is refused.
    [{ SLACK_APPROVERS: 'U1AA,U2BB', RMQ_APPROVALS_REQUIRED: '2' }, false],
    [{ SLACK_APPROVERS: 'U1AA,U2BB', RMQ_APPROVALS_REQUIRED: '2', SLACK_REQUESTERS: 'U9ZZ,U2BB' }, false],
    [{ SLACK_APPROVERS: 'U1AA,U2BB', RMQ_APPROVALS_REQUIRED: '2', SLACK_REQUESTERS: 'U9ZZ' }, true],
    // A requesters group may or may not hold an approver: unknown at start.
    [{ SLACK_APPROVERS: 'U1AA,U2BB', RMQ_APPROVALS_REQUIRED: '2', SLACK_REQUESTERS: 'S0ONCALL' }, true],
    // An approvers group may hold any number.
    [{ SLACK_APPROVERS: 'U1AA,S0SRE', RMQ_APPROVALS_REQUIRED: '2' }, true],
    [{ SLACK_APPROVERS: 'U1AA,U2BB,U3CC', RMQ_APPROVALS_REQUIRED: '2' }, true],
  ])('approvers whose own requests could never be approved: %j starts: %s', (vars, starts) => {
    const load = () => loadConfig(vars);
    if (starts) expect(load).not.toThrow();
    else
      expect(load).toThrow(
        /RMQ_APPROVALS_REQUIRED: 2 approvals required and 2 approvers configured \(U1AA, U2BB\), but (anyone may file requests|U2BB is among the requesters): a request of U(1AA|2BB) could never be approved, as nobody approves their own/,
      );
  });

  it('the same in the file, naming the environment', () => {
    expect(() => loadWith({}, 'approvers: [U1AA, U2BB]\n    approvalsRequired: 2')).toThrow(
      /RMQ_ENVIRONMENTS \(e\.yml\): environments\.0\.approvalsRequired \(environment "a"\): 2 approvals required and 2 approvers configured \(U1AA, U2BB\), but anyone may file requests/,
    );
    expect(
      loadWith({}, 'approvers: [U1AA, U2BB]\n    approvalsRequired: 2\n    requesters: [U9ZZ]')
        .environments[0]?.approvalsRequired,
    ).toBe(2);
  });
});

describe('loadTerminalConfig', () => {
  const file =
    'environments:\n  - name: a\n    url: http://a:15672\n    userEnv: U\n    passwordEnv: P\n    vhosts: [orders]\n    approvers: [U1AA]';
  const vars = {
    RMQ_ENVIRONMENTS: 'e.yml',
    U: 'u',
    P: 'p',
    RMQ_TIMEOUT: '2s',
    RMQ_MAX_BODY: '1MiB',
    REDIS_URL: 'redis://r:6379',
    RMQ_BOT_URL: 'http://bot:3000',
  };

  it('reads what the bot reads of the broker, the file, Redis and the bot, the same', () => {
    const bot = loadConfig(vars, () => file);
    const terminal = loadTerminalConfig(vars, () => file);
    expect(terminal).toEqual({
      environments: [
        {
          name: 'a',
          url: 'http://a:15672',
          urls: ['http://a:15672'],
          user: 'u',
          password: 'p',
          credentialsFrom: { user: 'U', password: 'P' },
          vhosts: ['orders'],
        },
      ],
      redisUrl: bot.redisUrl,
      questionBudgetMs: 2000,
      auditKey: undefined,
      bot: bot.bot,
      bodyLimits: { bodyBytes: 1024 ** 2 },
    });
    expect(bot.environments[0]).toMatchObject(terminal.environments[0] ?? {});
  });

  it.each([
    [{ RMQ_URL: 'localhost:15672' }, /RMQ_URL/],
    [{ RMQ_TIMEOUT: 'soon' }, /RMQ_TIMEOUT: a duration/],
    [{ REDIS_URL: 'http://x' }, /REDIS_URL/],
    [{ REDIS_SENTINELS: 'h:26379' }, /REDIS_SENTINELS and REDIS_SENTINEL_NAME go together/],
  ])('refuses what it reads as the bot does (%j)', (env, message) => {
    expect(() => loadTerminalConfig(env)).toThrow(message);
    expect(() => loadConfig(env)).toThrow(message);
  });

  it.each([
    { SLACK_APPROVERS: 'alice' },
    { RMQ_MODE: 'yolo' },
    { PORT: 'eighty' },
    { RMQ_APPROVALS_REQUIRED: '3' },
    { RMQ_API_TOKENS: 'ci:short' },
  ])("leaves the bot's own settings to the bot (%j: the bot refuses them, the terminal answers)", (env) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(loadTerminalConfig(env).environments[0]?.name).toBe('default');
  });

  it('refuses an environments file the bot refuses, its settings for the bot too (one file, one reading)', () => {
    const bad = file.replace('approvers: [U1AA]', 'approvers: [alice]');
    expect(() => loadTerminalConfig(vars, () => bad)).toThrow(/environments\.0\.approvers\.0: "alice"/);
  });
});
