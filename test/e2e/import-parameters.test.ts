/**
 * Federation upstreams, upstream sets and shovels planned and imported with the policies, on what
 * users run (`bin/rmq.js`, the compiled bot `dist/main.js` on the fake Slack, a Redis of its own)
 * and real brokers: RabbitMQ 4.3.6 downstream (the bot's environment), 4.0.5 the upstream its
 * federation links and its shovel connect to, as a user of its own whose password is the secret.
 *
 * - `plan FILE`: the parameters in the order that stops no link the end state keeps (upstream, then
 *   set, then shovel, then the policy that names them; with --prune, a policy's federation key
 *   moved before the set it named is deleted), each step's links started and stopped, exit 4.
 * - `import FILE`, approved in Slack: the broker's parameters are the file's, the links run, the
 *   audit trail records each step with its links; a re-plan says nothing to change.
 * - A shovel the broker refuses (a malformed URI) rolls the whole set back: nothing of it remains.
 * - The password: in no plan text, `--json`, Slack call or upload, log line or audit record.
 */
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BotProcess, labBotEnv, spawnBot } from '../support/botProcess.ts';
import { brokerCredentials, managementCall, uniqueName, waitFor } from '../support/broker.ts';
import { BROKERS, reachable } from '../support/brokers.ts';
import { type Built, built } from '../support/built.ts';
import { runBuiltRmq } from '../support/cli.ts';
import { type FakeSlack, renderedText, startFakeSlack } from '../support/fakeSlack.ts';
import type { Harness } from '../support/harness.ts';
import { type RedisServer, startRedisServer } from '../support/redisServer.ts';
import { buttonsOf, requestFlow } from '../support/requestFlow.ts';
import { signedRequests } from '../support/slackRequests.ts';

const SECRET = 'import-params-signing-secret';
const TOKEN = 'ci-params-0123456789abcdef';
const [, UPSTREAM, DOWNSTREAM] = BROKERS as [unknown, (typeof BROKERS)[number], (typeof BROKERS)[number]];
const up = await Promise.all([reachable(UPSTREAM), reachable(DOWNSTREAM)]);
const ready = up.every(Boolean);
if (!ready) console.warn('import-parameters: skipped, it needs RabbitMQ 4.0.5 (15673) and 4.3.6 (15674) up');

const vhost = uniqueName('params');
const linkUser = uniqueName('fed-user');
/** The password the upstream's and the shovel's URIs carry: it must never be shown. */
const PASSWORD = `pw-${uniqueName('secret')}`;
const uri = (port: number) => `amqp://${linkUser}:${PASSWORD}@127.0.0.1:${port}/${encodeURIComponent(vhost)}`;
const UPSTREAM_URI = uri(5673);

const cwd = mkdtempSync(join(tmpdir(), 'rmq-params-'));
let pkg: Built;
let slack: FakeSlack;
let redis: RedisServer;
let bot: BotProcess;
let botUrl: string;

const v = encodeURIComponent(vhost);
const down = managementCall(DOWNSTREAM.url);
const upstreamApi = managementCall(UPSTREAM.url);

/** The downstream's parameters of `component` in the vhost, by name. */
async function parameters(component: string): Promise<Record<string, unknown>> {
  const { json } = await down('GET', `parameters/${component}/${v}`);
  return Object.fromEntries(
    ((json ?? []) as { name: string; value: unknown }[]).map((p) => [p.name, p.value]),
  );
}

/** The federation links the downstream reports in the vhost, as `object<-upstream`. */
async function federationLinks(): Promise<string[]> {
  const { json } = await down('GET', `federation-links/${v}`);
  return ((json ?? []) as { exchange?: string; upstream?: string }[])
    .map((l) => `${l.exchange}<-${l.upstream}`)
    .sort();
}

/** Each federation link the downstream reports in the vhost (`object<-upstream`), with its status and since when. */
async function federationLinkStamps(): Promise<Map<string, string>> {
  const { json } = await down('GET', `federation-links/${v}`);
  return new Map(
    ((json ?? []) as { exchange?: string; upstream?: string; status?: string; timestamp?: string }[]).map(
      (l) => [`${l.exchange}<-${l.upstream}`, `${l.status} since ${l.timestamp}`],
    ),
  );
}

const upstreamValue = { uri: UPSTREAM_URI, 'ack-mode': 'on-confirm', 'max-hops': 1 };
const shovelValue = {
  'src-uri': `amqp:///${v}`,
  'src-queue': 'sh.src',
  'dest-uri': uri(5673),
  'dest-queue': 'sh.dest',
};
const fedPolicy = (set: string) => ({
  vhost,
  name: 'fed',
  pattern: '^fed\\.',
  'apply-to': 'exchanges',
  priority: 0,
  definition: { 'federation-upstream-set': set },
});

/** The first file: an upstream, a set of it, a shovel, and the policy that federates fed.x through the set. */
const first = {
  parameters: [
    { vhost, component: 'federation-upstream', name: 'up1', value: upstreamValue },
    { vhost, component: 'federation-upstream-set', name: 'set1', value: [{ upstream: 'up1' }] },
    { vhost, component: 'shovel', name: 'sh1', value: shovelValue },
  ],
  policies: [fedPolicy('set1')],
};

/** The second: a second upstream, the policy moved to a new set of both, the old set pruned. */
const second = {
  parameters: [
    { vhost, component: 'federation-upstream', name: 'up1', value: upstreamValue },
    { vhost, component: 'federation-upstream', name: 'up2', value: { ...upstreamValue, 'max-hops': 2 } },
    {
      vhost,
      component: 'federation-upstream-set',
      name: 'set2',
      value: [{ upstream: 'up1' }, { upstream: 'up2' }],
    },
    { vhost, component: 'shovel', name: 'sh1', value: shovelValue },
  ],
  policies: [fedPolicy('set2')],
};

/** The third: a new upstream and policy, and a shovel whose URI the broker refuses. */
const third = {
  parameters: [
    ...second.parameters,
    { vhost, component: 'federation-upstream', name: 'up3', value: { uri: uri(5673) } },
    {
      vhost,
      component: 'shovel',
      name: 'broken',
      value: { ...shovelValue, 'dest-uri': `amqp://${linkUser}:${PASSWORD}@nohost:bad:port` },
    },
  ],
  policies: [
    ...second.policies,
    {
      ...fedPolicy('set2'),
      name: 'other',
      pattern: '^other\\.',
      definition: { 'federation-upstream': 'up3' },
    },
  ],
};

function file(name: string, content: object): string {
  const path = join(cwd, name);
  writeFileSync(path, JSON.stringify(content));
  return path;
}

const rmq = (args: readonly string[]) => {
  const { user, password } = brokerCredentials();
  return runBuiltRmq(
    pkg.bin,
    args,
    {
      RMQ_BOT_URL: botUrl,
      RMQ_BOT_TOKEN: TOKEN,
      RMQ_URL: DOWNSTREAM.url,
      RMQ_USER: user,
      RMQ_PASSWORD: password,
      REDIS_URL: redis.url,
    },
    cwd,
  );
};

/** Everything said anywhere: the outputs below, every Slack call and upload, the bot's log. */
const said: string[] = [];
const heard = (s: string) => {
  said.push(s);
  return s;
};

/** The approval posts, in order. */
const posts: string[] = [];

/** Imports `path` with --prune and approves it in Slack; the request's id. */
async function importApproved(path: string, reason: string): Promise<string> {
  const mark = slack.calls.length;
  const run = await rmq(['import', path, '--prune', '--reason', reason, '--json']);
  heard(run.out + run.err);
  expect(run.err).toBe('');
  expect(run.code).toBe(0);
  const id = JSON.parse(run.out).request.id as string;
  const post = await waitFor(
    () =>
      slack.calls
        .slice(mark)
        .find((c) => c.method === 'chat.postMessage' && buttonsOf(c).some((b) => b.value === id)),
    { what: 'the set posted for approval' },
  );
  const h = { slack, ...signedRequests(botUrl, SECRET, slack) } as unknown as Harness;
  posts.push(renderedText(post.args));
  const decided = await requestFlow(h).decide(
    'U0APPROVER',
    'approve',
    { id, ts: String(post.response?.ts) },
    'links reviewed',
  );
  expect(decided.status).toBe(200);
  return id;
}

/** Waits until the request `id` is no longer open (applied, failed or stale). */
async function settled(id: string): Promise<void> {
  await waitFor(
    async () => {
      const open = JSON.parse((await rmq(['requests', '--json'])).out) as { requests: { id: string }[] };
      return !open.requests.some((r) => r.id === id);
    },
    { deadlineMs: 60_000, what: `request ${id} to finish` },
  );
}

beforeAll(async () => {
  if (!ready) return;
  pkg = await built();
  [slack, redis] = await Promise.all([startFakeSlack(), startRedisServer()]);
  await down('PUT', `vhosts/${v}`);
  await upstreamApi('PUT', `vhosts/${v}`);
  await upstreamApi('PUT', `users/${encodeURIComponent(linkUser)}`, { password: PASSWORD, tags: '' });
  await upstreamApi('PUT', `permissions/${v}/${encodeURIComponent(linkUser)}`, {
    configure: '.*',
    write: '.*',
    read: '.*',
  });
  await down('PUT', `exchanges/${v}/fed.x`, { type: 'topic', durable: true });
  await down('PUT', `exchanges/${v}/other.x`, { type: 'topic', durable: true });
  await down('PUT', `queues/${v}/sh.src`, { durable: true });
  await upstreamApi('PUT', `queues/${v}/sh.dest`, { durable: true });
  const env = labBotEnv({
    cwd,
    environmentsYaml: `environments:\n  - { name: lab, url: "${DOWNSTREAM.url}", userEnv: LAB_USER, passwordEnv: LAB_PASSWORD, approvers: [U0APPROVER], approvalsChannel: C0APPROVALS, vhosts: ${JSON.stringify([vhost])} }\n`,
    slack,
    redisUrl: redis.url,
    signingSecret: SECRET,
  });
  bot = spawnBot(realpathSync(join(pkg.outdir, 'main.js')), { ...env, RMQ_API_TOKENS: `ci:${TOKEN}` }, cwd);
  botUrl = `http://127.0.0.1:${await bot.listening()}`;
}, 180_000);

afterAll(async () => {
  if (!ready) return;
  bot?.child.kill('SIGKILL');
  await Promise.allSettled([
    slack?.close(),
    redis?.stop(),
    down('DELETE', `vhosts/${v}`),
    upstreamApi('DELETE', `vhosts/${v}`),
    upstreamApi('DELETE', `users/${encodeURIComponent(linkUser)}`),
  ]);
  rmSync(cwd, { recursive: true, force: true });
});

describe.runIf(ready)(
  'federation upstreams, upstream sets and shovels planned and imported with the policies',
  () => {
    it('plan: the parameters before the policy that names them, each step with the links it starts; the password never shown', async () => {
      const path = file('first.json', first);
      const text = await rmq(['plan', path, '--detailed-exitcode']);
      heard(text.out + text.err);
      expect(text.code).toBe(4);
      const at = (s: string) => text.out.indexOf(s);
      expect(at('1. create federation upstream "up1"')).toBeGreaterThan(0);
      expect(at('2. create federation upstream set "set1"')).toBeGreaterThan(
        at('1. create federation upstream "up1"'),
      );
      expect(at('3. create shovel "sh1"')).toBeGreaterThan(at('2. create federation upstream set'));
      expect(at('4. create policy "fed"')).toBeGreaterThan(at('3. create shovel "sh1"'));
      expect(text.out).toContain('starts 1 link: shovel "sh1"');
      expect(text.out).toContain('starts 1 link: exchange "fed.x" from upstream "up1"');
      expect(text.out).toContain(`amqp://${linkUser}:***@127.0.0.1:5673/`);

      const json = await rmq(['plan', path, '--json']);
      heard(json.out + json.err);
      const changes = JSON.parse(json.out).changes as {
        component: string;
        name: string;
        after: unknown;
        links: { start: { kind: string; object: string; upstream: string | null }[]; stop: unknown[] };
      }[];
      expect(changes.map((c) => [c.component, c.name])).toEqual([
        ['federation-upstream', 'up1'],
        ['federation-upstream-set', 'set1'],
        ['shovel', 'sh1'],
        ['policy', 'fed'],
      ]);
      expect(changes[0]?.after).toEqual({
        ...upstreamValue,
        uri: `amqp://${linkUser}:***@127.0.0.1:5673/${v}`,
      });
      expect(changes[3]?.links).toEqual({
        start: [{ kind: 'exchange', vhost, object: 'fed.x', upstream: 'up1', policy: 'fed' }],
        stop: [],
      });
      expect(json.out).not.toContain(PASSWORD);
    });

    it('imported and approved: the broker holds the file’s parameters, the links run, each step audited with its links; a re-plan has nothing to change', async () => {
      const id = await importApproved(file('first.json', first), 'federate fed.x');
      await waitFor(async () => (await federationLinks()).includes('fed.x<-up1'), {
        deadlineMs: 60_000,
        what: 'the link fed.x <- up1 reported',
      });
      expect(await parameters('federation-upstream')).toEqual({ up1: upstreamValue });
      expect(await parameters('federation-upstream-set')).toEqual({ set1: [{ upstream: 'up1' }] });
      expect(await parameters('shovel')).toEqual({ sh1: shovelValue });
      const history = await rmq(['history', '--vhost', vhost, '--json']);
      heard(history.out);
      const entries = JSON.parse(history.out).entries as {
        requestId: string;
        policy: string;
        component?: string;
        value?: { after: unknown };
        links?: { start: { object: string }[] };
      }[];
      const mine = entries.filter((e) => e.requestId === id);
      expect(mine.map((e) => [e.component ?? 'policy', e.policy]).sort()).toEqual([
        ['federation-upstream', 'up1'],
        ['federation-upstream-set', 'set1'],
        ['policy', 'fed'],
        ['shovel', 'sh1'],
      ]);
      expect(mine.find((e) => e.policy === 'fed')?.links?.start.map((l) => l.object)).toEqual(['fed.x']);
      expect(mine.find((e) => e.policy === 'up1')?.value?.after).toMatchObject({
        uri: expect.stringContaining(':***@'),
      });
      expect((await rmq(['history', '--verify'])).code).toBe(0);
      const text = heard((await rmq(['history', '--vhost', vhost])).out);
      expect(text).toContain('create federation upstream "up1"');
      expect(text).toContain(`"uri":"amqp://${linkUser}:***@127.0.0.1:5673/${v}"`);
      // The approval said what each step starts, the password masked.
      expect(posts[0]).toContain('3. create shovel `sh1`');
      expect(posts[0]).toContain('starts 1 link: exchange `fed.x` from upstream `up1`');

      const again = await rmq(['plan', file('first.json', first), '--detailed-exitcode']);
      heard(again.out);
      expect(again.code).toBe(0);
      expect(again.out).toContain('0 to change, 4 unchanged: nothing to do.');
    }, 180_000);

    it('--prune moves the policy to a new set before the old one is deleted: no state on the way stops a link the end keeps, and the broker takes each', async () => {
      const path = file('second.json', second);
      const json = await rmq(['plan', path, '--prune', '--json']);
      heard(json.out);
      const changes = JSON.parse(json.out).changes as {
        action: string;
        component: string;
        name: string;
        links: {
          start: { object: string; upstream: string | null }[];
          stop: { object: string; upstream: string | null }[];
        };
      }[];
      expect(changes.map((c) => [c.action, c.component, c.name])).toEqual([
        ['create', 'federation-upstream', 'up2'],
        ['create', 'federation-upstream-set', 'set2'],
        ['edit', 'policy', 'fed'],
        ['delete', 'federation-upstream-set', 'set1'],
      ]);
      const key = (l: { object: string; upstream: string | null }) => `${l.object}<-${l.upstream}`;
      // The end state keeps fed.x <- up1 and adds fed.x <- up2: no step stops either.
      expect(changes.flatMap((c) => c.links.stop.map(key))).toEqual([]);
      expect(changes.flatMap((c) => c.links.start.map(key))).toEqual(['fed.x<-up2']);

      // The broker takes every state on the way (each step written, in the plan's order, none
      // refused), and the end state runs both links. A link the end state keeps is still
      // restarted for a moment by the broker when its policy or its set is edited (4.3.6:
      // docs/broker-facts.md): no order avoids that, so what is proven is the plan's, above.
      const id = await importApproved(path, 'second upstream');
      await settled(id);
      const trail = JSON.parse((await rmq(['history', '--vhost', vhost, '--json'])).out) as {
        entries: { requestId: string; action: string; policy: string; set?: { index: number } }[];
      };
      expect(
        trail.entries
          .filter((e) => e.requestId === id)
          .sort((a, b) => (a.set?.index ?? 0) - (b.set?.index ?? 0))
          .map((e) => [e.action, e.policy]),
      ).toEqual([
        ['create', 'up2'],
        ['create', 'set2'],
        ['edit', 'fed'],
        ['delete', 'set1'],
      ]);
      await waitFor(
        async () => {
          const links = await federationLinkStamps();
          return ['fed.x<-up1', 'fed.x<-up2'].every((l) => links.get(l)?.startsWith('running '));
        },
        { deadlineMs: 60_000, what: 'fed.x <- up1 and fed.x <- up2 running' },
      );
      expect(Object.keys(await parameters('federation-upstream-set'))).toEqual(['set2']);
      expect(Object.keys(await parameters('federation-upstream')).sort()).toEqual(['up1', 'up2']);
    }, 180_000);

    it('--prune deletes only what the file holds the kind of: a file of one shovel leaves the policies, upstreams and sets', async () => {
      const only = file('shovel-only.json', {
        parameters: [{ vhost, component: 'shovel', name: 'sh2', value: shovelValue }],
      });
      const json = await rmq(['plan', only, '--prune', '--json']);
      heard(json.out);
      const changes = JSON.parse(json.out).changes as { action: string; component: string; name: string }[];
      expect(changes.map((c) => [c.action, c.component, c.name])).toEqual([
        ['create', 'shovel', 'sh2'],
        ['delete', 'shovel', 'sh1'],
      ]);
    });

    it('a shovel the broker refuses rolls the whole set back: nothing of it remains, and its words hide the password', async () => {
      const before = {
        upstreams: await parameters('federation-upstream'),
        shovels: await parameters('shovel'),
        other: (await down('GET', `policies/${v}/other`)).status,
      };
      const path = file('third.json', third);
      const plan = await rmq(['plan', path, '--prune']);
      heard(plan.out);
      expect(plan.out).toMatch(
        /create federation upstream "up3"[\s\S]*create shovel "broken"[\s\S]*create policy "other"/,
      );
      const id = await importApproved(path, 'a broken shovel');
      const failed = await waitFor(
        () =>
          slack.calls.find(
            (c) =>
              c.method === 'chat.postMessage' &&
              JSON.stringify(c.args).includes(id) &&
              /not applied|failed/i.test(JSON.stringify(c.args)),
          ),
        { deadlineMs: 60_000, what: 'the failure posted' },
      );
      expect(JSON.stringify(failed.args)).toContain('not a valid URI');
      await settled(id);
      expect(await parameters('federation-upstream')).toEqual(before.upstreams);
      expect(await parameters('shovel')).toEqual(before.shovels);
      expect((await down('GET', `policies/${v}/other`)).status).toBe(before.other);
      const history = await rmq(['history', '--vhost', vhost, '--json']);
      heard(history.out);
      const entries = JSON.parse(history.out).entries as {
        requestId: string;
        action: string;
        policy: string;
      }[];
      expect(entries.filter((e) => e.requestId === id).map((e) => [e.action, e.policy])).toEqual([
        ['revert', 'up3'],
        ['create', 'up3'],
      ]);
    }, 180_000);

    it('the password is nowhere: plan, --json, history, every Slack call and upload, the bot’s log', () => {
      const slackSaid = JSON.stringify(slack.calls) + JSON.stringify(slack.uploads());
      expect(slackSaid).toContain(`${linkUser}:***@`);
      for (const s of [...said, slackSaid, bot.output()]) expect(s).not.toContain(PASSWORD);
    });
  },
);
