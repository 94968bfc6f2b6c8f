/**
 * The preview against the real brokers: generated creates, edits and deletes of policies and
 * operator policies in one fresh vhost per broker. For each scenario: preview it, make the
 * change on the broker, wait until the broker reports, and compare EVERY object's reported
 * policy with the prediction — the predicted one, or one of a predicted tie's candidates.
 * Any object that changed and was not predicted fails the test and prints the case.
 *
 * User-policy changes are read back from the `disable_stats` listing, whose `policy` comes from
 * the queue record and is current at once. Operator policies are reported only by the stats
 * listing, which lags by seconds: those scenarios run in batches, and a batch ends by raising a
 * marker policy (`fresh-N`, top priority, alternate-exchange only, so no queue type vetoes it)
 * over every queue; once every queue's stats report the marker, they were emitted after the
 * batch's changes, and their `operator_policy` is compared with the composed predictions.
 *
 * Also checked on the way: a change the bot refuses is refused by the broker too (in a scratch
 * vhost), and a change the bot accepts is accepted by the broker.
 *
 * Seed: PREVIEW_SEED=<n> replays a run; the seed is printed.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { acceptedApplyTo } from '../../src/policy/keys.ts';
import {
  atLeast,
  type BrokerVersion,
  formatVersion,
  type ObjectKind,
  type Policy,
  type PolicyLayer,
} from '../../src/policy/types.ts';
import { type PreviewInput, type PreviewResult, preview } from '../../src/preview/preview.ts';
import type { LabClient } from '../../src/rabbit/lab.ts';
import { uniqueName, waitFor } from '../support/broker.ts';
import { brokersUp, clientFor, type TestBroker } from '../support/brokers.ts';
import { type Rng, rng } from '../support/rng.ts';

const USER_SCENARIOS = Number(process.env.PREVIEW_USER_SCENARIOS ?? 100);
const OPERATOR_BATCHES = Number(process.env.PREVIEW_OPERATOR_BATCHES ?? 5);
const PER_BATCH = 4;
const SEED = Number(process.env.PREVIEW_SEED ?? Date.now() % 1_000_000);

const SEGMENTS = ['orders', 'billing', 'audit', 'retry', 'dlq', 'events'] as const;
const PRIORITIES = [0, 1, 2, 3, 5] as const;

interface TestObject {
  readonly name: string;
  readonly kind: ObjectKind;
  readonly arguments: Record<string, unknown>;
}

function makeObjects(r: Rng): TestObject[] {
  const out: TestObject[] = [];
  const seen = new Set<string>();
  const queueKinds: ObjectKind[] = ['classic', 'classic', 'classic', 'quorum', 'quorum', 'stream'];
  while (out.length < 30) {
    const parts = Array.from({ length: 2 + r.int(2) }, () => r.pick(SEGMENTS));
    const name = parts.join('.');
    if (seen.has(`q:${name}`)) continue;
    seen.add(`q:${name}`);
    const kind = r.pick(queueKinds);
    const args: Record<string, unknown> = {};
    if (kind === 'classic' && r.chance(0.3))
      args[r.pick(['x-message-ttl', 'x-max-length'])] = r.pick([50, 5000]);
    if (kind === 'classic' && r.chance(0.2)) args['x-dead-letter-exchange'] = 'own.dlx';
    if (kind === 'quorum' && r.chance(0.3)) args['x-delivery-limit'] = 7;
    out.push({ name, kind, arguments: args });
  }
  for (const name of ['orders.in', 'billing.in', 'audit.out', 'events.fanout'])
    out.push({ name, kind: 'exchange', arguments: {} });
  return out;
}

function patternFor(r: Rng): string {
  const a = r.pick(SEGMENTS);
  const b = r.pick(SEGMENTS);
  // Lookaround: RE2 cannot read it, the backtracking engine does; predictions must hold.
  if (r.chance(0.04)) return r.pick([`^${a}(?=\\.)`, `(?<=\\.)${a}$`]);
  return r.pick([
    `^${a}\\.`,
    `^${a}\\.`,
    `^${a}\\.${b}$`,
    `^${a}\\.${b}`,
    `${a}`,
    `\\.${a}$`,
    '.*',
    '.',
    `^(${a}|${b})\\.`,
    `[.]${a}`,
    `^${a}\\.[a-z]+$`,
  ]);
}

/** Keys a user policy may set on this version, with a value; some veto some queue types. */
function userKeys(v: BrokerVersion): [string, unknown][] {
  const keys: [string, unknown][] = [
    ['max-length', 100],
    ['max-length', 250],
    ['message-ttl', 60_000],
    ['max-length-bytes', 1_000_000],
    ['expires', 86_400_000],
    ['dead-letter-exchange', 'dlx'],
    ['alternate-exchange', 'ae'],
    ['overflow', 'reject-publish'],
    ['delivery-limit', 10],
    ['max-age', '1D'],
    ['queue-mode', 'lazy'],
    ['initial-cluster-size', 1],
    ['queue-leader-locator', 'balanced'],
    ['max-in-memory-length', 10],
    ['dead-letter-strategy', 'at-most-once'],
  ];
  if (atLeast(v, 3, 12)) keys.push(['consumer-timeout', 3_600_000]);
  if (atLeast(v, 3, 13)) keys.push(['target-group-size', 3]);
  if (atLeast(v, 4, 3)) keys.push(['consumer-disconnected-timeout', 60_000]);
  if (atLeast(v, 4, 3, 1))
    keys.push(['delayed-retry-type', 'disabled'], ['delayed-retry-min', 1000], ['delayed-retry-max', 60_000]);
  return keys;
}

function operatorKeys(v: BrokerVersion): [string, unknown][] {
  const keys: [string, unknown][] = [
    ['max-length', 50],
    ['max-length', 500],
    ['message-ttl', 30_000],
    ['max-length-bytes', 500_000],
    ['delivery-limit', 5],
    ['max-in-memory-length', 5],
  ];
  if (atLeast(v, 3, 12, 7)) keys.push(['overflow', 'drop-head'], ['queue-version', 2]);
  if (atLeast(v, 3, 13)) keys.push(['target-group-size', 2]);
  if (atLeast(v, 4, 3, 1)) keys.push(['delayed-retry-min', 2000], ['delayed-retry-max', 30_000]);
  return keys;
}

function definitionFor(r: Rng, layer: PolicyLayer, v: BrokerVersion): Record<string, unknown> {
  const pool = layer === 'user' ? userKeys(v) : operatorKeys(v);
  const def: Record<string, unknown> = {};
  const n = r.chance(0.6) ? 1 : 2;
  while (Object.keys(def).length < n) {
    const [k, value] = r.pick(pool);
    def[k] = value;
  }
  return def;
}

/** A definition or scope the broker of this version refuses. */
function invalidFields(r: Rng, v: BrokerVersion): { definition?: Record<string, unknown>; applyTo?: string } {
  const choices: (() => { definition?: Record<string, unknown>; applyTo?: string })[] = [
    () => ({ definition: { 'max-length': -1 } }),
    () => ({ definition: { 'max-lenght': 10 } }),
    () => ({ definition: { 'message-ttl': '60000' } }),
    () => ({ definition: { 'max-age': '0D' } }),
    () => ({ applyTo: 'everything' }),
  ];
  if (!atLeast(v, 3, 12)) choices.push(() => ({ applyTo: 'classic_queues' }));
  if (atLeast(v, 4)) choices.push(() => ({ definition: { 'ha-mode': 'all' } }));
  if (atLeast(v, 4, 3)) choices.push(() => ({ definition: { 'queue-master-locator': 'client-local' } }));
  if (atLeast(v, 4, 3, 1)) choices.push(() => ({ definition: { 'delayed-retry-type': 'all' } }));
  return r.pick(choices)();
}

interface Scenario {
  readonly input: PreviewInput;
  /** The broker-side write that makes the change. */
  readonly apply: () => Promise<void>;
}

function scenarioFor(
  r: Rng,
  layer: PolicyLayer,
  vhost: string,
  policies: readonly Policy[],
  client: LabClient,
  v: BrokerVersion,
  counter: { n: number },
): Scenario {
  const existing = policies.filter((p) => !p.name.startsWith('fresh-'));
  const action =
    existing.length < 3
      ? 'create'
      : existing.length > 9
        ? r.pick(['delete', 'edit'] as const)
        : r.pick(['create', 'edit', 'delete'] as const);
  const base = { layer, vhost };
  if (action === 'delete') {
    const p = r.pick(existing);
    return {
      input: { ...base, action, name: p.name, fields: {} },
      apply: () => client.deletePolicy(layer, vhost, p.name),
    };
  }
  const invalid = r.chance(0.08) ? invalidFields(r, v) : {};
  if (action === 'create') {
    const name = `${layer === 'user' ? 'p' : 'op'}-${counter.n++}`;
    const fields = {
      pattern: patternFor(r),
      applyTo: invalid.applyTo ?? r.pick(acceptedApplyTo(v)),
      priority: r.pick(PRIORITIES),
      definition: invalid.definition ?? definitionFor(r, layer, v),
    };
    return {
      input: { ...base, action, name, fields },
      apply: async () => {
        await client.putPolicy(layer, { vhost, name, ...fields });
      },
    };
  }
  const p = r.pick(existing);
  const fields: PreviewInput['fields'] = {};
  const mutable = fields as Record<string, unknown>;
  while (Object.keys(fields).length === 0) {
    if (r.chance(0.4)) mutable.pattern = patternFor(r);
    if (r.chance(0.3) || invalid.applyTo) mutable.applyTo = invalid.applyTo ?? r.pick(acceptedApplyTo(v));
    if (r.chance(0.4)) mutable.priority = r.pick(PRIORITIES);
    if (r.chance(0.4) || invalid.definition)
      mutable.definition = invalid.definition ?? definitionFor(r, layer, v);
  }
  return {
    input: { ...base, action, name: p.name, fields },
    apply: async () => {
      await client.putPolicy(layer, {
        vhost,
        name: p.name,
        pattern: (fields.pattern as string | undefined) ?? p.pattern,
        applyTo: (fields.applyTo as string | undefined) ?? p.applyTo,
        priority: (fields.priority as number | undefined) ?? p.priority,
        definition: (fields.definition as Record<string, unknown> | undefined) ?? p.definition,
      });
    },
  };
}

const key = (kind: ObjectKind | string, name: string) => `${kind === 'exchange' ? 'x' : 'q'}:${name}`;

/** Every object's user policy, from the record-backed listing (current at once). */
async function userState(client: LabClient, vhost: string): Promise<Map<string, string | null>> {
  const out = new Map<string, string | null>();
  for await (const q of client.streamQueues(vhost, { stats: false }))
    out.set(key('queue', q.name), q.policy ?? null);
  for await (const e of client.streamExchanges(vhost)) out.set(key('exchange', e.name), e.policy);
  return out;
}

/** What the preview allows each object to report after the change; `*` for unpredictable. */
function allowedAfter(result: PreviewResult, layer: PolicyLayer): Map<string, readonly string[] | '*'> {
  const out = new Map<string, readonly string[] | '*'>();
  if (result.status !== 'answered') return out;
  for (const o of result.objects) {
    const after = o.after.candidates ?? [o.after.policy ?? '(none)'];
    out.set(key(o.kind, o.name), after);
  }
  for (const u of result.unpredictable) {
    out.set(key(u.kind === 'exchange' ? 'exchange' : 'queue', u.name), '*');
    if (layer === 'operator') out.set(key('queue', u.name), '*');
  }
  return out;
}

const show = (v: string | null | undefined) => v ?? '(none)';

interface Tally {
  broker: string;
  scenarios: number;
  operatorScenarios: number;
  agreed: number;
  refusedBoth: number;
  ties: number;
  unpredictable: number;
  objectsChecked: number;
}

const tallies: Tally[] = [];

const { up, skipped } = await brokersUp();

afterAll(() => {
  console.log(`\npreview differential (seed ${SEED}):`);
  for (const t of tallies) {
    console.log(
      `  ${t.broker}: ${t.scenarios} user-policy + ${t.operatorScenarios} operator-policy scenarios, ${t.agreed} agreed ` +
        `(${t.refusedBoth} refused by bot and broker alike; ${t.ties} predicted ties; ${t.unpredictable} objects unpredictable; ${t.objectsChecked} object checks)`,
    );
  }
  for (const b of skipped) console.log(`  ${b.label}: SKIPPED (not running)`);
});

describe.each(up.map((b) => [b.label, b] as [string, TestBroker]))(
  'preview differential on %s',
  (_label, broker) => {
    it('predicts what every object reports after generated creates, edits and deletes', async () => {
      const client = clientFor(broker);
      const { version } = await client.overview();
      const vhost = uniqueName('preview-diff');
      const scratch = uniqueName('preview-scratch');
      const r = rng(SEED + (broker.label === 'machine' ? 0 : 7919));
      const tally: Tally = {
        broker: `${broker.label} ${formatVersion(version)}`,
        scenarios: 0,
        operatorScenarios: 0,
        agreed: 0,
        refusedBoth: 0,
        ties: 0,
        unpredictable: 0,
        objectsChecked: 0,
      };
      tallies.push(tally);
      const counter = { n: 0 };
      try {
        await client.putVhost(vhost);
        await client.putVhost(scratch);
        const objects = makeObjects(r);
        await Promise.all(
          objects.map((o) =>
            o.kind === 'exchange'
              ? client.putExchange(vhost, o.name, 'direct')
              : client.putQueue(vhost, o.name, { kind: o.kind, arguments: o.arguments }),
          ),
        );

        /** Did the broker accept this change? Tried in the scratch vhost, then undone. */
        const brokerAccepts = async (
          s: Scenario,
          layer: PolicyLayer,
          policies: readonly Policy[],
        ): Promise<boolean> => {
          const { input } = s;
          const cur = policies.find((p) => p.name === input.name);
          const f = input.fields;
          try {
            await client.putPolicy(layer, {
              vhost: scratch,
              name: 'probe',
              pattern: (f.pattern as string | undefined) ?? cur?.pattern ?? '^x',
              applyTo: (f.applyTo as string | undefined) ?? cur?.applyTo ?? 'all',
              priority: (f.priority as number | undefined) ?? cur?.priority ?? 0,
              definition: (f.definition as Record<string, unknown> | undefined) ?? cur?.definition ?? {},
            });
            await client.deletePolicy(layer, scratch, 'probe');
            return true;
          } catch {
            return false;
          }
        };

        /** Runs one scenario's preview; applies it when the bot accepts. Returns the preview, or null when refused. */
        const runScenario = async (s: Scenario, layer: PolicyLayer): Promise<PreviewResult | null> => {
          const policies =
            layer === 'user' ? await client.listPolicies(vhost) : await client.listOperatorPolicies(vhost);
          const result = await preview(s.input, client);
          const context = () =>
            `seed ${SEED}, ${broker.label}: ${JSON.stringify(s.input)}\n${JSON.stringify(result, null, 1).slice(0, 4000)}`;
          if (result.status === 'not-asked') throw new Error(`broker not asked: ${context()}`);
          const brokerRule =
            result.status === 'refused' &&
            result.refusals.every(
              (p) => !['name-taken', 'no-such-policy', 'wrong-layer', 'nothing-to-change'].includes(p.code),
            );
          if (result.status === 'refused') {
            if (brokerRule) {
              const accepted = await brokerAccepts(s, layer, policies);
              expect(accepted, `the bot refused what the broker accepts: ${context()}`).toBe(false);
            }
            tally.refusedBoth++;
            return null;
          }
          try {
            await s.apply();
          } catch (e) {
            throw new Error(
              `the bot accepted what the broker refused (${(e as Error).message}): ${context()}`,
            );
          }
          return result;
        };

        // --- user policies: one scenario at a time, read back from the record-backed listing ---
        for (let i = 0; i < 4; i++) {
          const s = scenarioFor(r, 'user', vhost, await client.listPolicies(vhost), client, version, counter);
          if (s.input.action === 'create' && !(await runScenario(s, 'user'))) i--;
        }
        while (tally.scenarios < USER_SCENARIOS) {
          const s = scenarioFor(r, 'user', vhost, await client.listPolicies(vhost), client, version, counter);
          const before = await userState(client, vhost);
          const result = await runScenario(s, 'user');
          tally.scenarios++;
          if (!result) {
            tally.agreed++;
            continue;
          }
          const allowed = allowedAfter(result, 'user');
          if (result.status === 'answered') {
            tally.ties += result.objects.filter((o) => o.after.candidates).length;
            tally.unpredictable += result.unpredictable.length;
          }
          const mismatches = (now: Map<string, string | null>) => {
            const out: string[] = [];
            for (const [k, was] of before) {
              const is = now.get(k) ?? null;
              const ok = allowed.get(k);
              if (ok === '*') continue;
              if (ok === undefined) {
                if (is !== was) out.push(`${k}: changed ${show(was)} -> ${show(is)}, not predicted`);
              } else if (!ok.includes(show(is))) {
                out.push(`${k}: predicted ${ok.join(' | ')}, broker reports ${show(is)} (was ${show(was)})`);
              }
            }
            return out;
          };
          let last: string[] = [];
          try {
            await waitFor(
              async () => {
                last = mismatches(await userState(client, vhost));
                return last.length === 0;
              },
              { deadlineMs: 4_000, intervalMs: 100, what: 'the broker to report the predicted policies' },
            );
          } catch {
            throw new Error(
              `seed ${SEED}, ${broker.label}, scenario ${tally.scenarios}: ${JSON.stringify(s.input)}\n${last.join('\n')}\npreview: ${JSON.stringify(result.status === 'answered' ? { objects: result.objects.map((o) => [o.name, o.before, o.after]), unpredictable: result.unpredictable } : result)}`,
            );
          }
          tally.objectsChecked += before.size;
          tally.agreed++;
        }

        // --- operator policies: in batches, read back from the stats listing once per batch ---
        let marker = 0;
        /** Raises a new top-priority marker and waits until every queue's stats report it. */
        const freshOperatorState = async (): Promise<Map<string, string | null>> => {
          const name = `fresh-${marker}`;
          await client.putPolicy('user', {
            vhost,
            name,
            pattern: '.*',
            applyTo: 'queues',
            priority: 1000 + marker,
            definition: { 'alternate-exchange': 'fresh' },
          });
          marker++;
          return waitFor(
            async () => {
              const out = new Map<string, string | null>();
              for await (const q of client.streamQueues(vhost, { stats: true })) {
                if (q.policy !== name) return false;
                out.set(key('queue', q.name), q.operatorPolicy ?? null);
              }
              return out;
            },
            { deadlineMs: 45_000, intervalMs: 500, what: `every queue's statistics to report ${name}` },
          );
        };
        for (let i = 0; i < 2; i++) {
          const s = scenarioFor(
            r,
            'operator',
            vhost,
            await client.listOperatorPolicies(vhost),
            client,
            version,
            counter,
          );
          if (s.input.action === 'create') await runScenario(s, 'operator');
        }
        let state = await freshOperatorState();
        const history: string[] = [];
        for (let batch = 0; batch < OPERATOR_BATCHES; batch++) {
          const expected = new Map<string, readonly string[] | '*'>(
            [...state].map(([k, v]) => [k, [show(v)]]),
          );
          const inputs: string[] = [];
          for (let j = 0; j < PER_BATCH; j++) {
            const s = scenarioFor(
              r,
              'operator',
              vhost,
              await client.listOperatorPolicies(vhost),
              client,
              version,
              counter,
            );
            const result = await runScenario(s, 'operator');
            tally.operatorScenarios++;
            inputs.push(JSON.stringify(s.input));
            if (result?.status === 'answered') {
              inputs.push(
                `  -> ${JSON.stringify(result.objects.map((o) => [o.kind, o.name, o.before, o.after]))} unpredictable ${JSON.stringify(result.unpredictable.map((u) => u.name))}`,
              );
            }
            if (!result) continue;
            if (result.status === 'answered') {
              tally.ties += result.objects.filter((o) => o.after.candidates).length;
              tally.unpredictable += result.unpredictable.length;
            }
            for (const [k, v] of allowedAfter(result, 'operator')) if (k.startsWith('q:')) expected.set(k, v);
          }
          const now = await freshOperatorState();
          const wrong: string[] = [];
          for (const [k, ok] of expected) {
            const is = now.get(k) ?? null;
            if (ok !== '*' && !ok.includes(show(is)))
              wrong.push(
                `${k}: predicted ${ok.join(' | ')}, broker reports ${show(is)} (was ${show(state.get(k))})`,
              );
          }
          history.push(`batch ${batch}`, ...inputs);
          const policiesNow = (await client.listOperatorPolicies(vhost)).map((p) => [
            p.name,
            p.pattern,
            p.applyTo,
            p.priority,
            p.definition,
          ]);
          expect(
            wrong,
            `seed ${SEED}, ${broker.label}, operator batch ${batch}:\n${process.env.PREVIEW_TRACE ? history.join('\n') : inputs.join('\n')}\noperator policies now: ${JSON.stringify(policiesNow)}\n${wrong.join('\n')}`,
          ).toEqual([]);
          tally.objectsChecked += expected.size;
          tally.agreed += PER_BATCH;
          state = now;
        }
      } finally {
        await client.deleteVhost(vhost);
        await client.deleteVhost(scratch);
        await client.close();
      }
    }, 300_000);
  },
);
