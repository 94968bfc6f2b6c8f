import { Writable } from 'node:stream';
import { expect, it } from 'vitest';
import { createLogger } from '../../src/log/log.ts';

it('never writes secrets, wherever they sit in a log line', () => {
  let out = '';
  const sink = new Writable({
    write(chunk, _enc, done) {
      out += String(chunk);
      done();
    },
  });
  const log = createLogger('info', sink as never);
  log.info(
    { password: 'p4ss', env: { password: 'p4ss2' }, headers: { authorization: 'Basic Z3Vlc3Q=' } },
    'call',
  );
  log.info(
    { config: { slack: { botToken: 'xoxb-1', signingSecret: 's3cr3t', appToken: 'xapp-1' } } },
    'boot',
  );
  for (const secret of ['p4ss', 'p4ss2', 'Z3Vlc3Q=', 'xoxb-1', 's3cr3t', 'xapp-1'])
    expect(out).not.toContain(secret);
  expect(out).toContain('[redacted]');
});
