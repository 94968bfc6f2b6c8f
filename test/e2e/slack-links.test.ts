import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { LabClient } from '../../src/rabbit/lab.ts';
import { brokerCredentials, brokerUrl, waitFor } from '../support/broker.ts';
import { built, repoRoot } from '../support/built.ts';
import { runBuiltRmq } from '../support/cli.ts';
import { renderedText } from '../support/harness.ts';
import { type ProcessHarness, startProcessHarness } from '../support/processHarness.ts';

/**
 * `/rmq links` and `/rmq which` on links, as Slack calls them, through `dist/main.js` on the lab's
 * broker: an upstream that refuses (its URI carrying a password), a policy naming an upstream that
 * does not exist, a shovel that cannot connect. The password is never shown: not in Slack, not in
 * the bot's log, not in the terminal's text or `--json` (`bin/rmq.js`).
 */

const SECRET = 'Sw0rdfish-links-e2e';

let h: ProcessHarness;
let client: LabClient;

beforeAll(async () => {
  h = await startProcessHarness();
  client = new LabClient({ url: brokerUrl(), ...brokerCredentials() });
  const vhost = h.vhost;
  await client.putParameter('federation-upstream', vhost, 'dc2', {
    uri: `amqp://links:${SECRET}@127.0.0.1:1/dc2`,
    'ack-mode': 'no-ack',
  });
  await client.putExchange(vhost, 'links.orders', 'fanout');
  await client.putExchange(vhost, 'links.ghost', 'fanout');
  await client.putPolicy('user', {
    vhost,
    name: 'links-fed',
    pattern: '^links\\.orders$',
    applyTo: 'exchanges',
    priority: 50,
    definition: { 'federation-upstream': 'dc2' },
  });
  await client.putPolicy('user', {
    vhost,
    name: 'links-ghost',
    pattern: '^links\\.ghost$',
    applyTo: 'exchanges',
    priority: 50,
    definition: { 'federation-upstream': 'ghost' },
  });
  await client.putParameter('shovel', vhost, 'links-drain', {
    'src-uri': `amqp://links:${SECRET}@127.0.0.1:1`,
    'src-queue': 'nowhere',
    'dest-uri': 'amqp://',
    'dest-queue': 'landing',
  });
  // The link has tried and failed: the broker reports its error.
  await waitFor(
    async () => {
      const links = await client.federationLinkList(vhost);
      return (
        Array.isArray(links) && links.some((l) => l.object === 'links.orders' && l.status !== 'starting')
      );
    },
    { deadlineMs: 30_000, what: 'the refused link to report its error' },
  );
}, 120_000);
afterAll(async () => {
  await client?.close();
  await h?.stop();
});
afterEach(() => {
  expect(h.slack.rejections()).toEqual([]);
});

describe('links in Slack, through dist/main.js', () => {
  it('/rmq links: what does not run first, with why and the next step; no password', async () => {
    const { response, responseUrl } = await h.command(`links --vhost ${h.vhost}`);
    expect(response.status).toBe(200);
    const answer = await h.answerTo(responseUrl);
    expect(answer.args.response_type).toBe('in_channel');
    const shown = renderedText(answer.args);
    // The shovel that cannot connect: 3.10.8 reports it `starting` while it retries, then `terminated`.
    expect(shown).toMatch(/\*Links of vhost\* `[^`]+`: 3 expected: 0 running, (1 starting, )?1 missing, [12] stopped/);
    expect(shown).toMatch(/\* · shovel `links-drain` on `/);
    expect(shown).toMatch(/:red_circle: \*missing\* · exchange `links.ghost` ← upstream `ghost`/);
    expect(shown).toMatch(/the upstream "ghost" does not exist/);
    expect(shown).toMatch(/:red_circle: \*stopped\* · exchange `links.orders` ← upstream `dc2`/);
    expect(shown).toMatch(/_Next:_/);
    expect(shown).toMatch(/`ack-mode` `no-ack`/);
    expect(shown).toMatch(/amqp:\/\/links:\*\*\*@127\.0\.0\.1:1\/dc2/);
    expect(shown).not.toContain(SECRET);
  });

  it('/rmq which names the links of a federated exchange', async () => {
    const { responseUrl } = await h.command(`which links.orders --kind exchange --vhost ${h.vhost}`);
    const shown = renderedText((await h.answerTo(responseUrl)).args);
    expect(shown).toMatch(/\*Federation links\* \(1 should run\)/);
    expect(shown).toMatch(/\*stopped\* · exchange `links.orders` ← upstream `dc2`/);
    expect(shown).not.toContain(SECRET);
  });

  it('the bot never logs the password', () => {
    const logs = h.logs();
    expect(logs.some((l) => l.includes('links answered'))).toBe(true);
    for (const line of logs) expect(line).not.toContain(SECRET);
  });

  it('the terminal never prints it, in text or --json, on any exit', async () => {
    const { bin } = await built();
    const { user, password } = brokerCredentials();
    const env = { RMQ_URL: brokerUrl(), RMQ_USER: user, RMQ_PASSWORD: password };
    const runs = await Promise.all([
      runBuiltRmq(bin, ['links', '--vhost', h.vhost], env, repoRoot),
      runBuiltRmq(bin, ['links', '--vhost', h.vhost, '--json'], env, repoRoot),
      runBuiltRmq(bin, ['links', '--vhost', h.vhost, '--fail-on', 'risk', '--json'], env, repoRoot),
      runBuiltRmq(
        bin,
        ['which', 'links.orders', '--kind', 'exchange', '--vhost', h.vhost, '--json'],
        env,
        repoRoot,
      ),
    ]);
    expect(runs.map((r) => r.code)).toEqual([1, 1, 4, 0]);
    const doc = JSON.parse(runs[1]?.out ?? '') as {
      counts: Record<string, number>;
      links: { state: string }[];
    };
    expect(doc.counts).toMatchObject({ expected: 3, missing: 1, running: 0 });
    expect(doc.counts.stopped).toBeGreaterThanOrEqual(1);
    for (const r of runs) expect(r.out + r.err).not.toContain(SECRET);
  });
});
