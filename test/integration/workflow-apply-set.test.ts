/**
 * A change set applied as one, on the real Redis and the three brokers, the queues' messages
 * sampled (AMQP, exact) through the whole apply: the rename and two policies trading priorities
 * written in the safe order lose nothing (and the same steps in the other order do: the danger is
 * real); a set that fails half-way is rolled back whole, nothing left half-applied; a rollback the
 * broker interrupts is retried until it finishes, the request saying meanwhile where each policy
 * stands; a retry after a lost answer never writes a step twice; a set whose cut grew after its
 * approval goes stale (`loss-grew`) before its first write, and one whose cut did not is applied.
 */

import { describe, expect, it } from 'vitest';
import { AuditTrail } from '../../src/audit/trail.ts';
import { isChange } from '../../src/audit/types.ts';
import { fieldsOf, planChanges } from '../../src/plan/plan.ts';
import type { Policy } from '../../src/policy/types.ts';
import { ManagementClient } from '../../src/rabbit/client.ts';
import type { LabClient } from '../../src/rabbit/lab.ts';
import { requestMessage } from '../../src/slack/views/request.ts';
import { APPLY_DEFAULTS } from '../../src/workflow/apply/queue.ts';
import {
  type ParameterSetStep,
  type PolicySetStep,
  plannedSet,
  type SetStep,
  transitionOf,
} from '../../src/workflow/changeSet.ts';
import type { ChangeRequest, FileSetInput } from '../../src/workflow/types.ts';
import { brokerCredentials, waitFor, withVhost } from '../support/broker.ts';
import { brokersUp, CLUSTER, type TestBroker } from '../support/brokers.ts';
import { aloneOnCluster } from '../support/clusterHooks.ts';
import { type FakeBroker, startFakeBroker } from '../support/fakeBroker.ts';
import { renderedText as rendered } from '../support/fakeSlack.ts';
import { fewestMessages, liveShows, management, messages } from '../support/messages.ts';
import {
  APPROVER,
  auditDown,
  REQUESTER,
  settled,
  type WorkflowFixture,
  workflowHooks,
} from '../support/workflow.ts';

let admin: LabClient;
let fx: WorkflowFixture;
let trail: AuditTrail;

// The cluster too (scripts/cluster): a set written through one node of three, watched on it.
const { up } = await brokersUp({ cluster: true });

type Fields = NonNullable<PolicySetStep['before']>;
const fields = (p: Omit<Policy, 'vhost' | 'name'>): Fields => ({ ...p });
const step = (vhost: string, name: string, before: Fields | null, after: Fields | null): PolicySetStep => ({
  layer: 'user',
  vhost,
  name,
  before,
  after,
});

/** The queue's messages sampled through the apply (exact, not the statistics); the fewest seen. */
async function sampler(broker: TestBroker, vhost: string, queue: string) {
  const sampling = await fewestMessages(broker, vhost, [queue]);
  return {
    async stop() {
      const { fewest, rounds } = await sampling.stop();
      return { fewest: fewest.get(queue) ?? Number.POSITIVE_INFINITY, samples: rounds };
    },
  };
}

/** A client of the fault proxy that does not retry on its own: the job's retries are the ones seen. */
const throughFake = (url: string) =>
  new ManagementClient({
    url,
    ...brokerCredentials(),
    getRetries: 0,
    timeouts: { connectMs: 500, headersMs: 2000, bodyMs: 2000 },
  });

describe.each(up)('a change set applied as one on $label', (broker) => {
  aloneOnCluster(broker === CLUSTER);
  workflowHooks(broker, (a, f) => {
    admin = a;
    fx = f;
    trail = new AuditTrail(f.redis, f.keyPrefix);
  });

  const fileSet = (steps: SetStep[], over: Partial<FileSetInput> = {}): FileSetInput => ({
    source: 'definitions.json',
    steps,
    brokerVersion: broker.label,
    requester: { user: REQUESTER, reason: 'policies as code' },
    origin: { channel: 'C0CI' },
    ...over,
  });

  const KEEP = fields({
    pattern: '^orders\\.audit$',
    applyTo: 'queues',
    priority: 10,
    definition: { 'max-length': 1000 },
  });
  const FALLBACK = fields({
    pattern: '^orders\\.',
    applyTo: 'queues',
    priority: 1,
    definition: { 'max-length': 5 },
  });

  /** The world: `keep` over orders.audit (30 messages), `fallback` below it. */
  async function renameWorld(vhost: string) {
    await admin.putQueue(vhost, 'orders.audit', { kind: 'classic' });
    await admin.putPolicy('user', { vhost, name: 'keep', ...KEEP });
    await admin.putPolicy('user', { vhost, name: 'fallback', ...FALLBACK });
    const m = await messages(broker, vhost);
    await m.publish('orders.audit', 30);
    await m.close();
  }

  async function applyWatched(vhost: string, steps: SetStep[]) {
    const wf = fx.workflow();
    const { request } = await wf.fileSet(fileSet(steps));
    const watch = await sampler(broker, vhost, 'orders.audit');
    await wf.decide(request.id, { kind: 'approve', user: APPROVER, reason: 'reviewed in the PR' });
    const done = await settled(wf, request.id);
    return { done, seen: await watch.stop() };
  }

  it('the rename: the new policy written before the old one is deleted; no message lost on the way', async () => {
    await withVhost(
      async (vhost) => {
        await renameWorld(vhost);
        await fx.worker(admin);
        const { done, seen } = await applyWatched(vhost, [
          step(vhost, 'keep-audit', null, KEEP),
          step(vhost, 'keep', KEEP, null),
        ]);
        expect(done.state).toBe('applied');
        expect(seen.samples).toBeGreaterThan(0);
        expect(seen.fewest).toBe(30);
        expect(await admin.getPolicy('user', vhost, 'keep')).toBeNull();
        expect(await admin.getPolicy('user', vhost, 'keep-audit')).toMatchObject(KEEP);
        const records = (await trail.list({ vhost })).filter(isChange);
        expect(records.map((r) => [r.action, r.policy, r.set])).toEqual(
          expect.arrayContaining([
            ['create', 'keep-audit', { id: done.id, index: 0, size: 2 }],
            ['delete', 'keep', { id: done.id, index: 1, size: 2 }],
          ]),
        );
        expect(records).toHaveLength(2);
        expect(records.every((r) => r.requester?.user === REQUESTER && r.approver?.user === APPROVER)).toBe(
          true,
        );
      },
      { client: admin },
    );
  });

  it('the same rename in the other order cuts the queue to the fallback cap (the danger the order avoids)', async () => {
    await withVhost(
      async (vhost) => {
        await renameWorld(vhost);
        await fx.worker(admin);
        const { done, seen } = await applyWatched(vhost, [
          step(vhost, 'keep', KEEP, null),
          step(vhost, 'keep-audit', null, KEEP),
        ]);
        expect(done.state).toBe('applied');
        expect(seen.fewest).toBe(5);
      },
      { client: admin },
    );
  });

  it('two policies trading priorities: the rising one first; the one between never wins', async () => {
    await withVhost(
      async (vhost) => {
        const A = fields({
          pattern: '^orders\\.',
          applyTo: 'queues',
          priority: 10,
          definition: { 'max-length': 1000 },
        });
        const B = fields({
          pattern: '^orders\\.audit$',
          applyTo: 'queues',
          priority: 5,
          definition: { 'max-length': 500 },
        });
        const MIDDLE = fields({
          pattern: '^orders\\.au',
          applyTo: 'queues',
          priority: 7,
          definition: { 'max-length': 5 },
        });
        await admin.putQueue(vhost, 'orders.audit', { kind: 'classic' });
        await admin.putPolicy('user', { vhost, name: 'a', ...A });
        await admin.putPolicy('user', { vhost, name: 'b', ...B });
        await admin.putPolicy('user', { vhost, name: 'middle', ...MIDDLE });
        const m = await messages(broker, vhost);
        await m.publish('orders.audit', 30);
        await m.close();
        await fx.worker(admin);
        const { done, seen } = await applyWatched(vhost, [
          step(vhost, 'b', B, { ...B, priority: 20 }),
          step(vhost, 'a', A, { ...A, priority: 1 }),
        ]);
        expect(done.state).toBe('applied');
        expect(seen.fewest).toBe(30);
        await waitFor(async () => (await admin.getQueue(vhost, 'orders.audit'))?.policy === 'b', {
          what: 'orders.audit governed by b',
        });
      },
      { client: admin },
    );
  });

  it('a write refused half-way: the steps written are rolled back in reverse, verified; failed, saying so', async () => {
    await withVhost(
      async (vhost) => {
        await renameWorld(vhost);
        const fake = await startFakeBroker({ fallback: { kind: 'proxy', target: broker.url } });
        fake.setRoute((url, method) => method === 'PUT' && url.includes('/second'), {
          kind: 'respond',
          status: 400,
          body: { error: 'bad_request', reason: 'injected refusal' },
        });
        const client = new ManagementClient({ url: fake.url, ...brokerCredentials() });
        try {
          await fx.worker(client);
          const { done, seen } = await applyWatched(vhost, [
            step(vhost, 'first', null, fields({ ...FALLBACK, priority: 2 })),
            step(vhost, 'keep', KEEP, { ...KEEP, definition: { 'max-length': 2000 } }),
            step(vhost, 'second', null, fields({ ...FALLBACK, priority: 3 })),
            step(vhost, 'third', null, fields({ ...FALLBACK, priority: 4 })),
          ]);
          expect(done.state).toBe('failed');
          expect(done.failure?.message).toContain('injected refusal');
          expect(done.failure?.message).toContain('2 of 4 steps written, 2 rolled back');
          expect(done.setProgress).toMatchObject({ size: 4, written: 2, undone: 2 });
          expect(seen.fewest).toBe(30);
          // Nothing half-applied: every policy as before the set.
          expect(await admin.getPolicy('user', vhost, 'first')).toBeNull();
          expect(await admin.getPolicy('user', vhost, 'keep')).toMatchObject(KEEP);
          expect(await admin.getPolicy('user', vhost, 'second')).toBeNull();
          expect(await admin.getPolicy('user', vhost, 'third')).toBeNull();
          const records = (await trail.list({ vhost })).filter(isChange);
          expect(records.map((r) => [r.action, r.policy, r.set?.index]).sort()).toEqual(
            [
              ['create', 'first', 0],
              ['edit', 'keep', 1],
              ['revert', 'first', 0],
              ['revert', 'keep', 1],
            ].sort(),
          );
          expect((await trail.verify()).ok).toBe(true);
          expect(fx.notifier.told.failed.map((r) => r.id)).toContain(done.id);
        } finally {
          await client.close();
          await fake.close();
        }
      },
      { client: admin },
    );
  });

  it('a parameter the broker refuses (its plugin not enabled, or a URI it cannot parse) rolls the whole set back; its password never said', async () => {
    const password = 'pw-never-said-0a9b8c';
    const param = (
      component: ParameterSetStep['component'],
      name: string,
      after: ParameterSetStep['after'],
    ) => ({ component, vhost: '', name, before: null, after }) as ParameterSetStep;
    await withVhost(
      async (vhost) => {
        await renameWorld(vhost);
        await fx.worker(admin);
        const at = <S extends SetStep>(s: S): S => ({ ...s, vhost });
        // A broker without the federation plugin refuses the upstream; one with it, the shovel (its
        // plugin missing, or a URI it cannot parse).
        const { done } = await applyWatched(vhost, [
          step(vhost, 'first', null, fields({ ...FALLBACK, priority: 2 })),
          at(param('federation-upstream', 'up', { uri: `amqp://fed:${password}@127.0.0.1:5673` })),
          at(
            param('shovel', 'broken', {
              'src-uri': 'amqp://',
              'src-queue': 'a',
              'dest-uri': `amqp://fed:${password}@nohost:bad:port`,
              'dest-queue': 'b',
            }),
          ),
        ]);
        expect(done.state).toBe('failed');
        expect(done.failure?.message).toMatch(/not found|not a valid URI/);
        expect(JSON.stringify(done.failure)).not.toContain(password);
        expect(await admin.getPolicy('user', vhost, 'first')).toBeNull();
        expect(await admin.parameters('federation-upstream', vhost)).toEqual([]);
        expect(await admin.parameters('shovel', vhost)).toEqual([]);
        const records = (await trail.list({ vhost })).filter(isChange);
        expect(records.map((r) => r.action).sort()).toEqual(
          records.length === 2 ? ['create', 'revert'] : ['create', 'create', 'revert', 'revert'],
        );
        expect(JSON.stringify(records)).not.toContain(password);
        expect((await trail.verify()).ok).toBe(true);
      },
      { client: admin },
    );
  });

  it('a rollback the broker interrupts is retried until it finishes; meanwhile the request says where each step stands', async () => {
    await withVhost(
      async (vhost) => {
        await renameWorld(vhost);
        const fake = await startFakeBroker({ fallback: { kind: 'proxy', target: broker.url } });
        // The second write is refused, and from then on the broker is gone.
        fake.setRoute(
          (url, method) => {
            if (method === 'PUT' && url.includes('/second')) {
              fake.setFallback({ kind: 'drop' });
              return true;
            }
            return false;
          },
          { kind: 'respond', status: 400, body: { error: 'bad_request', reason: 'injected refusal' } },
        );
        const client = throughFake(fake.url);
        try {
          await fx.worker(client, { rollbackRetryMs: 200 });
          const { wf, request } = await approveTwoCreates(vhost);
          const waiting = await waitFor(
            () => fx.notifier.told.states.find((s) => s.id === request.id && s.setProgress?.retrying),
            { what: 'the request told that the rollback waits' },
          );
          expect(waiting.state).toBe('applying');
          expect(waiting.setProgress).toMatchObject({ size: 2, written: 1, undone: 0 });
          expect(await admin.getPolicy('user', vhost, 'first')).not.toBeNull();
          fake.setRoute(null);
          fake.setFallback({ kind: 'proxy', target: broker.url });
          const done = await settled(wf, request.id);
          expect(done.state).toBe('failed');
          expect(done.setProgress).toMatchObject({ size: 2, written: 1, undone: 1 });
          expect(await admin.getPolicy('user', vhost, 'first')).toBeNull();
          expect(await admin.getPolicy('user', vhost, 'second')).toBeNull();
        } finally {
          await client.close();
          await fake.close();
        }
      },
      { client: admin },
    );
  });

  it('records that cannot be appended past the last try: the set waits applying, told why, then applied with each record once', async () => {
    await withVhost(
      async (vhost) => {
        // The first step's record goes in; the second's does not, until the outage ends.
        const outage = auditDown(fx, (id) => id.endsWith('-1'));
        await fx.worker(admin, { audit: outage.audit, rollbackRetryMs: 100 });
        const { wf, request } = await approveTwoCreates(vhost);
        const waiting = await waitFor(
          () => fx.notifier.told.states.find((s) => s.id === request.id && s.setProgress?.retrying),
          { what: 'the request told that its records wait' },
        );
        expect(waiting.state).toBe('applying');
        expect(waiting.setProgress).toMatchObject({
          size: 2,
          written: 2,
          undone: 0,
          retrying: { why: 'audit down' },
        });
        await waitFor(() => outage.tries >= APPLY_DEFAULTS.attempts + 2, {
          what: 'the append tried past the job’s tries',
        });
        expect((await wf.get(request.id))?.state).toBe('applying');
        outage.down = false;
        const done = await settled(wf, request.id);
        expect(done.state).toBe('applied');
        const records = (await trail.list({ vhost })).filter(isChange);
        expect(records.map((r) => [r.policy, r.set?.index])).toEqual(
          expect.arrayContaining([
            ['first', 0],
            ['second', 1],
          ]),
        );
        expect(records).toHaveLength(2);
        expect(fx.notifier.told.failed).toEqual([]);
      },
      { client: admin },
    );
  });

  /** Every write the bot announced to the watchers, to compare with the trail (the watcher keeps quiet for each). */
  function announcements() {
    const made: { policy: string; after: string }[] = [];
    const announceWrite = async (_env: string, a: { name: string }, after: Policy | null) => {
      made.push({ policy: a.name, after: JSON.stringify(fieldsOf(after)) });
    };
    return { made, announceWrite };
  }

  /** The request's message in the approvals channel, as Slack shows its text. */
  const slackText = (r: ChangeRequest) => {
    const m = requestMessage(r);
    return rendered({ text: m.text, blocks: m.blocks });
  };
  const fieldsOfRecord = (r: { after: Fields | null }) =>
    JSON.stringify(r.after && fieldsOf({ vhost: '', name: '', ...r.after }));
  const first = broker === up[0];

  it.runIf(first)(
    'a write whose outcome is not known (its answer lost, then its reads dropped) is read again until the broker answers, then rolled back and recorded; the set never ends while a step is not known',
    async () => {
      await withVhost(
        async (vhost) => {
          const fake = await startFakeBroker({ fallback: { kind: 'proxy', target: broker.url } });
          const x2 = `/api/policies/${encodeURIComponent(vhost)}/x2`;
          let puts = 0;
          let droppedReads = 0;
          // The connection carrying PUT x2 killed until the job's last try; that one forwarded and
          // its answer thrown away; then six reads of x2 dropped.
          fake.setRoute((url, method) => {
            if (method === 'PUT' && url === x2) {
              puts++;
              return puts < APPLY_DEFAULTS.attempts
                ? { kind: 'drop' }
                : { kind: 'proxy-drop', target: broker.url };
            }
            if (method === 'GET' && url === x2 && puts >= APPLY_DEFAULTS.attempts && droppedReads < 6) {
              droppedReads++;
              return { kind: 'drop' };
            }
            return false;
          });
          const client = throughFake(fake.url);
          const told = announcements();
          try {
            await fx.worker(client, { rollbackRetryMs: 20, announceWrite: told.announceWrite });
            const wf = fx.workflow();
            const { request } = await wf.fileSet(
              fileSet([
                step(vhost, 'x1', null, fields({ ...FALLBACK, priority: 2 })),
                step(vhost, 'x2', null, fields({ ...FALLBACK, priority: 3 })),
                step(vhost, 'x3', null, fields({ ...FALLBACK, priority: 4 })),
              ]),
            );
            await wf.decide(request.id, { kind: 'approve', user: APPROVER, reason: 'ok' });
            const done = await settled(wf, request.id);
            // The broker: nothing of the set left.
            for (const name of ['x1', 'x2', 'x3'])
              expect(await admin.getPolicy('user', vhost, name)).toBeNull();
            expect(droppedReads).toBe(6);
            // Meanwhile the request said x2 was not known, and its message showed it.
            const unknown = fx.notifier.told.states.filter(
              (s) => s.id === request.id && s.setProgress?.unknown?.includes(1),
            );
            expect(unknown.length).toBeGreaterThan(0);
            expect(slackText(unknown.at(-1) as ChangeRequest)).toContain('2. create policy `x2`');
            expect(slackText(unknown.at(-1) as ChangeRequest)).toContain('*not known*');
            // The request and its message: x2 was written (its answer lost) and rolled back.
            expect(done.state).toBe('failed');
            expect(done.failure?.message).toContain('2 of 3 steps written, 2 rolled back');
            expect(done.setProgress).toMatchObject({ size: 3, written: 2, undone: 2 });
            expect(done.setProgress?.unknown).toBeUndefined();
            const text = slackText(done);
            expect(text).toContain('2 of 3 steps written, 2 rolled back');
            expect(text).toMatch(/2\. create policy `x2` in `[^`]+` · _undone_/);
            expect(text).toMatch(/3\. create policy `x3` in `[^`]+` · _as planned \(not written\)_/);
            // The trail: intact, and holding every write the bot made and announced, and each undo.
            const records = (await trail.list({ vhost })).filter(isChange);
            expect(records.map((r) => [r.action, r.policy]).sort()).toEqual([
              ['create', 'x1'],
              ['create', 'x2'],
              ['revert', 'x1'],
              ['revert', 'x2'],
            ]);
            expect((await trail.verify()).ok).toBe(true);
            for (const a of told.made)
              expect(
                records.some((r) => r.policy === a.policy && fieldsOfRecord(r) === a.after),
                `${a.policy} -> ${a.after} in the trail`,
              ).toBe(true);
          } finally {
            await client.close();
            await fake.close();
          }
        },
        { client: admin },
      );
    },
    120_000,
  );

  it.runIf(first)(
    'a step changed by someone else before the rollback reaches it is left as they made it, and recorded as left (not as undone): the trail, the request and its message say what the broker holds',
    async () => {
      await withVhost(
        async (vhost) => {
          const RACE = fields({
            pattern: '^race\\.a$',
            applyTo: 'queues',
            priority: 5,
            definition: { 'max-length': 88 },
          });
          await admin.putPolicy('user', { vhost, name: 'race-a', ...RACE });
          const fake = await startFakeBroker({ fallback: { kind: 'proxy', target: broker.url } });
          fake.setRoute((url, method) => method === 'PUT' && url.endsWith('/third'), {
            kind: 'respond',
            status: 400,
            body: { error: 'bad_request', reason: 'injected refusal' },
          });
          const client = throughFake(fake.url);
          const told = announcements();
          try {
            await fx.worker(client, {
              announceWrite: async (env, a, after) => {
                await told.announceWrite(env, a, after);
                // Someone sets race-a to 123 on the broker just before the third write is refused.
                if (a.name === 'third')
                  await admin.putPolicy('user', {
                    vhost,
                    name: 'race-a',
                    ...RACE,
                    definition: { 'max-length': 123 },
                  });
              },
            });
            const wf = fx.workflow();
            const { request } = await wf.fileSet(
              fileSet([
                step(vhost, 'race-x', null, fields({ ...FALLBACK, priority: 2 })),
                step(vhost, 'race-a', RACE, { ...RACE, definition: { 'max-length': 99 } }),
                step(vhost, 'third', null, fields({ ...FALLBACK, priority: 4 })),
              ]),
            );
            await wf.decide(request.id, { kind: 'approve', user: APPROVER, reason: 'ok' });
            const done = await settled(wf, request.id);
            // The broker: race-a as the other person made it, race-x undone, third never written.
            expect(await admin.getPolicy('user', vhost, 'race-a')).toMatchObject({
              definition: { 'max-length': 123 },
            });
            expect(await admin.getPolicy('user', vhost, 'race-x')).toBeNull();
            expect(await admin.getPolicy('user', vhost, 'third')).toBeNull();
            // The request: failed, saying race-a was left, with what the broker holds.
            expect(done.state).toBe('failed');
            expect(done.failure?.message).toContain(
              '2 of 3 steps written, 1 rolled back, 1 left as changed outside this request (race-a)',
            );
            expect(done.setProgress?.left).toEqual([
              { step: 1, holds: { ...RACE, definition: { 'max-length': 123 } } },
            ]);
            const text = slackText(done);
            expect(text).toContain('left as changed outside this request*, not undone: the broker holds');
            expect(text).toContain('`max-length` = `123`');
            expect(text).not.toMatch(/2\. edit policy `race-a` in `[^`]+` · _undone_/);
            // The trail: no undo of race-a; a record that it was left, holding 123.
            const records = (await trail.list({ vhost })).filter(isChange);
            expect(records.map((r) => [r.action, r.policy]).sort()).toEqual([
              ['create', 'race-x'],
              ['edit', 'race-a'],
              ['left', 'race-a'],
              ['revert', 'race-x'],
            ]);
            const left = records.find((r) => r.action === 'left');
            expect(left).toMatchObject({
              set: { id: done.id, index: 1, size: 3 },
              before: RACE,
              after: { definition: { 'max-length': 123 } },
            });
            expect((await trail.verify()).ok).toBe(true);
          } finally {
            await client.close();
            await fake.close();
          }
        },
        { client: admin },
      );
    },
    60_000,
  );

  /** Two creates (`first`, then `second`) filed and approved. */
  async function approveTwoCreates(vhost: string) {
    const wf = fx.workflow();
    const { request } = await wf.fileSet(
      fileSet([
        step(vhost, 'first', null, fields({ ...FALLBACK, priority: 2 })),
        step(vhost, 'second', null, fields({ ...FALLBACK, priority: 3 })),
      ]),
    );
    await wf.decide(request.id, { kind: 'approve', user: APPROVER, reason: 'ok' });
    return { wf, request };
  }

  /**
   * Two creates (`first`, then `second`) filed, approved and applied through a fake broker in
   * front of this one, which answers as `route` says (given the fake); `check` reads the request
   * once settled.
   */
  async function twoCreatesThroughFake(
    vhost: string,
    route: (fake: FakeBroker) => Parameters<FakeBroker['setRoute']>,
    check: (done: ChangeRequest, fake: FakeBroker) => Promise<void>,
  ) {
    const fake = await startFakeBroker({ fallback: { kind: 'proxy', target: broker.url } });
    fake.setRoute(...route(fake));
    const client = throughFake(fake.url);
    try {
      await fx.worker(client);
      const { wf, request } = await approveTwoCreates(vhost);
      await check(await settled(wf, request.id), fake);
    } finally {
      await client.close();
      await fake.close();
    }
  }

  it('the broker refusing the poll of a written step (final): rolled back and failed, not left half written', async () => {
    await withVhost(
      async (vhost) => {
        let wroteFirst = false;
        await twoCreatesThroughFake(
          vhost,
          () => [
            (url, method) => {
              if (method === 'PUT' && url.includes('/first')) wroteFirst = true;
              return wroteFirst && method === 'GET' && url.startsWith('/api/queues/');
            },
            // A 4xx is final at once (the user lost its right to list the queues, say).
            { kind: 'respond', status: 403, body: { error: 'not_authorised', reason: 'injected' } },
          ],
          async (done) => {
            expect(done.state).toBe('failed');
            expect(done.setProgress).toMatchObject({ size: 2, written: 1, undone: 1 });
            expect(await admin.getPolicy('user', vhost, 'first')).toBeNull();
            expect(await admin.getPolicy('user', vhost, 'second')).toBeNull();
            const records = (await trail.list({ vhost })).filter(isChange);
            expect(records.map((r) => [r.action, r.policy]).sort()).toEqual([
              ['create', 'first'],
              ['revert', 'first'],
            ]);
          },
        );
      },
      { client: admin },
    );
  });

  it('a try that starts after a written step polls for it before the next write', async () => {
    await withVhost(
      async (vhost) => {
        let wroteFirst = false;
        let failed = -1;
        await twoCreatesThroughFake(
          vhost,
          (fake) => [
            // The first poll after the first write fails once: the try ends there, and the queue tries again.
            (url, method) => {
              if (method === 'PUT' && url.includes('/first')) wroteFirst = true;
              if (failed < 0 && wroteFirst && method === 'GET' && url.startsWith('/api/queues/')) {
                failed = fake.requests.length;
                return true;
              }
              return false;
            },
            { kind: 'respond', status: 500, body: { error: 'internal', reason: 'injected' } },
          ],
          async (done, fake) => {
            expect(done.state).toBe('applied');
            expect(failed).toBeGreaterThanOrEqual(0);
            const after = fake.requests.slice(failed + 1);
            const second = after.findIndex((q) => q.method === 'PUT' && q.url.includes('/second'));
            expect(second).toBeGreaterThan(0);
            // Between the failed poll and the next write: the retry polled the queues again.
            expect(
              after.slice(0, second).some((q) => q.method === 'GET' && q.url.startsWith('/api/queues/')),
            ).toBe(true);
            expect(fake.requests.filter((q) => q.method === 'PUT' && q.url.includes('/first'))).toHaveLength(
              1,
            );
          },
        );
      },
      { client: admin },
    );
  });

  it('a write whose answer was lost: the retry finds it written and goes on; no step written twice', async () => {
    await withVhost(
      async (vhost) => {
        await renameWorld(vhost);
        const fake = await startFakeBroker({ fallback: { kind: 'proxy', target: broker.url } });
        let dropped = false;
        fake.setRoute(
          (url, method) => {
            if (!dropped && method === 'PUT' && url.includes('/keep-audit')) {
              dropped = true;
              return true;
            }
            return false;
          },
          { kind: 'proxy-drop', target: broker.url },
        );
        const client = throughFake(fake.url);
        try {
          // Two replicas' workers on the same queue.
          await fx.worker(client);
          await fx.worker(client);
          const { done, seen } = await applyWatched(vhost, [
            step(vhost, 'keep-audit', null, KEEP),
            step(vhost, 'keep', KEEP, null),
          ]);
          expect(done.state).toBe('applied');
          expect(seen.fewest).toBe(30);
          const writes = fake.requests
            .filter((q) => q.method === 'PUT' || q.method === 'DELETE')
            .map((q) => q.method);
          expect(writes).toEqual(['PUT', 'DELETE']);
          expect(await trail.list({ vhost })).toHaveLength(2);
        } finally {
          await client.close();
          await fake.close();
        }
      },
      { client: admin },
    );
  });

  it('a policy changed outside after the approval: stale before the first write: nothing written, the outside change kept', async () => {
    await withVhost(
      async (vhost) => {
        await renameWorld(vhost);
        await fx.worker(admin);
        const wf = fx.workflow();
        const { request } = await wf.fileSet(
          fileSet([step(vhost, 'keep-audit', null, KEEP), step(vhost, 'keep', KEEP, null)]),
        );
        await admin.putPolicy('user', { vhost, name: 'keep', ...KEEP, priority: 11 });
        await wf.decide(request.id, { kind: 'approve', user: APPROVER, reason: 'ok' });
        const done = await settled(wf, request.id);
        expect(done.state).toBe('stale');
        expect(done.setProgress).toMatchObject({ written: 0, undone: 0 });
        expect(await admin.getPolicy('user', vhost, 'keep-audit')).toBeNull();
        expect(await admin.getPolicy('user', vhost, 'keep')).toMatchObject({ priority: 11 });
      },
      { client: admin },
    );
  });
  /**
   * A set of two planned and filed as the bot files it (`plannedSet`): `cap` cuts orders.audit
   * (30 messages) to 5, a cut of 25 its approver acknowledges; `more` messages are published before
   * the approval, and the statistics awaited, so the job plans it again on the queue as it is then.
   */
  async function capSetApproved(vhost: string, more: number) {
    const CAP = fields({
      pattern: '^orders\\.audit$',
      applyTo: 'queues',
      priority: 10,
      definition: { 'max-length': 5 },
    });
    const TTL = fields({
      pattern: '^billing\\.',
      applyTo: 'queues',
      priority: 1,
      definition: { 'message-ttl': 60_000 },
    });
    const api = management(broker, vhost);
    await api.queue('orders.audit', 'classic');
    const amqp = await messages(broker, vhost);
    try {
      await amqp.publish('orders.audit', 30);
      await liveShows(admin, vhost, { 'orders.audit': { ready: 30 } });
      const steps = [step(vhost, 'cap', null, CAP), step(vhost, 'ttl', null, TTL)];
      const result = await planChanges([vhost], () => steps.map(transitionOf), admin);
      if (result.status !== 'planned') throw new Error(`not planned: ${result.status}`);
      const planned = plannedSet(result.plan);
      expect(planned.impact.messagesLost).toBe(25);
      await fx.worker(admin);
      const wf = fx.workflow();
      const { request } = await wf.fileSet(fileSet([...planned.steps] as PolicySetStep[], planned));
      if (more > 0) {
        await amqp.publish('orders.audit', more);
        await liveShows(admin, vhost, { 'orders.audit': { ready: 30 + more } });
      }
      await wf.decide(request.id, {
        kind: 'approve',
        user: APPROVER,
        reason: 'a cut of 25 accepted',
        acknowledgedLoss: true,
      });
      return { done: await settled(wf, request.id), api };
    } finally {
      await amqp.close();
    }
  }

  it('a set whose cut grew after its approval: stale (`loss-grew`) before the first write, nothing written', async () => {
    await withVhost(
      async (vhost) => {
        const { done, api } = await capSetApproved(vhost, 470);
        expect(done).toMatchObject({ state: 'stale', staleBecause: 'loss-grew' });
        expect(done.setProgress).toMatchObject({ written: 0, undone: 0 });
        expect(await admin.listPolicies(vhost)).toEqual([]);
        expect(await api.peek('orders.audit')).toBe(500);
        expect(await trail.list({ vhost })).toEqual([]);
      },
      { client: admin },
    );
  }, 120_000);

  it('a set whose cut did not grow: applied as approved', async () => {
    await withVhost(
      async (vhost) => {
        const { done, api } = await capSetApproved(vhost, 0);
        expect(done.state).toBe('applied');
        expect((await admin.listPolicies(vhost)).map((p) => p.name).sort()).toEqual(['cap', 'ttl']);
        expect(await api.peek('orders.audit')).toBe(5);
      },
      { client: admin },
    );
  }, 120_000);
});
