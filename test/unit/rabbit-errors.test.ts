import { describe, expect, it } from 'vitest';
import {
  cleanReason,
  errorFromFailure,
  errorFromResponse,
  isRetryable,
  notAskedBecause,
  RabbitError,
  type RabbitErrorCode,
} from '../../src/rabbit/errors.ts';

const json = (v: unknown) => JSON.stringify(v);

describe('errorFromResponse', () => {
  const cases: { what: string; status: number; body: string; code: RabbitErrorCode; reason?: string }[] = [
    {
      what: 'bad credentials',
      status: 401,
      body: json({ error: 'not_authorized', reason: 'Login failed' }),
      code: 'unauthorized',
      reason: 'Login failed',
    },
    {
      what: 'authenticated but not allowed (British spelling)',
      status: 401,
      body: json({ error: 'not_authorised', reason: 'User not authorised to access object' }),
      code: 'forbidden',
      reason: 'User not authorised to access object',
    },
    {
      what: 'operator policy by a non-admin',
      status: 401,
      body: json({ error: 'not_authorised', reason: 'Not administrator user' }),
      code: 'forbidden',
    },
    { what: '401 without a body', status: 401, body: '', code: 'unauthorized' },
    { what: '403 from a proxy', status: 403, body: '<html>no</html>', code: 'forbidden' },
    {
      what: 'operator policy edits disabled',
      status: 405,
      body: json({
        error: 'method_not_allowed',
        reason: 'Broker settings disallow editing of operator policies.',
      }),
      code: 'forbidden',
      reason: 'Broker settings disallow editing of operator policies.',
    },
    { what: 'another 405', status: 405, body: '', code: 'refused-by-broker' },
    {
      what: 'unknown policy',
      status: 404,
      body: json({ error: 'Object Not Found', reason: 'Not Found' }),
      code: 'not-found',
      reason: 'Not Found',
    },
    {
      what: 'unknown vhost on PUT',
      status: 404,
      body: json({ error: 'not_found', reason: 'vhost_not_found' }),
      code: 'not-found',
      reason: 'vhost_not_found',
    },
    {
      what: 'bad regex',
      status: 400,
      body: json({
        error: 'bad_request',
        reason: 'Validation failed\n\npattern should be regular expression but is invalid: {"missing )",1}\n',
      }),
      code: 'refused-by-broker',
      reason: 'pattern should be regular expression but is invalid: {"missing )",1}',
    },
    {
      what: 'unknown key, HTML-escaped (user policies, 3.10–4.1)',
      status: 400,
      body: json({
        error: 'bad_request',
        reason:
          'Validation failed\n\n[{&lt;&lt;"max-lenght"&gt;&gt;,1}] are not recognised policy settings\n',
      }),
      code: 'refused-by-broker',
      reason: '[{<<"max-lenght">>,1}] are not recognised policy settings',
    },
    {
      what: 'unknown key, not escaped (operator policies)',
      status: 400,
      body: json({
        error: 'bad_request',
        reason: 'Validation failed\n\n[{<<"max-lenght">>,1}] are not recognised policy settings\n',
      }),
      code: 'refused-by-broker',
      reason: '[{<<"max-lenght">>,1}] are not recognised policy settings',
    },
    {
      what: 'body not JSON',
      status: 400,
      body: json({ error: 'bad_request', reason: 'not_json' }),
      code: 'refused-by-broker',
      reason: 'not_json',
    },
    { what: 'definition not an object: empty 500', status: 500, body: '', code: 'broker-error' },
    { what: '503 from a proxy', status: 503, body: 'Service Unavailable', code: 'broker-error' },
    { what: 'a 2xx is not an error', status: 200, body: '', code: 'bad-response' },
  ];

  it.each(cases)('$what -> $code', ({ status, body, code, reason }) => {
    const e = errorFromResponse('PUT', '/api/policies/%2F/p', status, body);
    expect(e).toBeInstanceOf(RabbitError);
    expect(e.code).toBe(code);
    expect(e.status).toBe(status);
    expect(e.method).toBe('PUT');
    expect(e.path).toBe('/api/policies/%2F/p');
    if (reason !== undefined) expect(e.reason).toBe(reason);
  });

  it('retries only what a second try can fix', () => {
    const retryable = (status: number) => errorFromResponse('GET', '/api/x', status, '').isRetryable;
    expect([500, 502, 503, 504].map(retryable)).toEqual([true, true, true, true]);
    expect([400, 401, 403, 404, 405].map(retryable)).toEqual([false, false, false, false, false]);
  });

  it('never puts credentials in the message', () => {
    const e = errorFromResponse(
      'GET',
      '/api/overview',
      401,
      json({ error: 'not_authorized', reason: 'Login failed' }),
    );
    expect(e.message).toBe('unauthorized: GET /api/overview: Login failed');
  });
});

describe('cleanReason', () => {
  it.each([
    ['Validation failed\n\n-1 is not a valid maximum length\n', '-1 is not a valid maximum length'],
    ['&lt;&lt;"10"&gt;&gt; is not a valid maximum length', '<<"10">> is not a valid maximum length'],
    ['&quot;a&quot; &amp; b', '"a" & b'],
    // one pass: an escaped ampersand followed by "lt;" stays literal
    ['&amp;lt;', '&lt;'],
    ['  plain  ', 'plain'],
  ])('%j -> %j', (raw, clean) => {
    expect(cleanReason(raw)).toBe(clean);
  });
});

describe('errorFromFailure', () => {
  const withCode = (code: string, message = code) => Object.assign(new Error(message), { code });

  it.each([
    ['UND_ERR_CONNECT_TIMEOUT', 'timeout'],
    ['UND_ERR_HEADERS_TIMEOUT', 'timeout'],
    ['UND_ERR_BODY_TIMEOUT', 'timeout'],
    ['ETIMEDOUT', 'timeout'],
    ['ECONNREFUSED', 'unreachable'],
    ['ECONNRESET', 'unreachable'],
    ['UND_ERR_SOCKET', 'unreachable'],
    ['ENOTFOUND', 'unreachable'],
  ])('%s -> %s', (code, expected) => {
    const e = errorFromFailure('GET', '/api/overview', withCode(code));
    expect(e.code).toBe(expected);
    expect(e.isRetryable).toBe(true);
    expect(e.status).toBeUndefined();
  });

  it('looks at the cause too', () => {
    const e = errorFromFailure(
      'GET',
      '/x',
      new TypeError('fetch failed', { cause: withCode('ECONNREFUSED') }),
    );
    expect(e.code).toBe('unreachable');
  });

  it('an AbortSignal timeout is a timeout', () => {
    expect(errorFromFailure('GET', '/x', new DOMException('t', 'TimeoutError')).code).toBe('timeout');
  });

  it('unparseable JSON is a bad response, not retried', () => {
    const e = errorFromFailure('GET', '/x', new SyntaxError('Unexpected token'));
    expect(e.code).toBe('bad-response');
    expect(isRetryable(e)).toBe(false);
  });

  it('passes RabbitErrors through', () => {
    const original = new RabbitError({ code: 'not-found', method: 'GET', path: '/x', status: 404 });
    expect(errorFromFailure('GET', '/y', original)).toBe(original);
  });

  it('isRetryable is false for anything that is not a RabbitError', () => {
    expect(isRetryable(new Error('x'))).toBe(false);
    expect(isRetryable(undefined)).toBe(false);
  });
});

describe('notAskedBecause', () => {
  const failure = (code: RabbitErrorCode, reason?: string) =>
    new RabbitError({ code, method: 'GET', path: '/api/x', ...(reason ? { reason } : {}) });

  it.each([
    ['unreachable', 'unreachable'],
    ['timeout', 'timeout'],
    ['unauthorized', 'unauthorized'],
    ['forbidden', 'forbidden'],
    ['refused-by-broker', 'refused-by-broker'],
    ['broker-error', 'broker-error'],
    ['bad-response', 'broker-error'],
    ['too-large', 'too-large'],
  ] as const)('%s: the broker was not asked, why %s', (code, why) => {
    expect(notAskedBecause(failure(code))).toEqual({ why });
    expect(notAskedBecause(failure(code, 'the reason'))).toEqual({ why, reason: 'the reason' });
  });

  it('leaves a missing vhost or object to the caller, and throws nothing else into an answer', () => {
    expect(notAskedBecause(failure('not-found'))).toBeUndefined();
    expect(notAskedBecause(new TypeError('a bug'))).toBeUndefined();
    expect(notAskedBecause(Object.assign(new Error('x'), { code: 'toString' }))).toBeUndefined();
  });
});

describe('a refused login names where the credentials came from', () => {
  const from = { user: 'PROD_USER', password: 'PROD_PASSWORD' };
  const body = json({ error: 'not_authorized', reason: 'Login failed' });

  it('names the variables the client was given, after the broker’s reason', () => {
    const err = errorFromResponse('GET', '/api/whoami', 401, body, from);
    expect(notAskedBecause(err)).toEqual({
      why: 'unauthorized',
      reason: 'Login failed: check PROD_PASSWORD and PROD_USER',
    });
  });

  it('names nothing when the client was not told, and never on a permission refusal', () => {
    expect(notAskedBecause(errorFromResponse('GET', '/api/whoami', 401, body))).toEqual({
      why: 'unauthorized',
      reason: 'Login failed',
    });
    const forbidden = errorFromResponse(
      'GET',
      '/api/policies/x',
      401,
      json({ error: 'not_authorised', reason: 'Not management user' }),
      from,
    );
    expect(notAskedBecause(forbidden)).toEqual({ why: 'forbidden', reason: 'Not management user' });
  });
});
