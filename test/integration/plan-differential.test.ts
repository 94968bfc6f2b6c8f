/**
 * A definitions file planned, filed, approved and applied by the bot (`fileImport` as the bot's
 * import route and Slack run it, the workflow, its BullMQ apply job) on each real broker, the
 * queues' messages sampled over AMQP through the whole apply:
 *
 * - the issue's cases (test/support/planRows.ts): the order, the loss acknowledged in numbers
 *   (refused without), the end state the broker reports, and every queue's messages;
 * - a randomised differential: random worlds (queues with messages, policies and an operator
 *   policy with caps) and random files (renames, priorities moved, patterns and caps changed,
 *   policies dropped with or without --prune, new ones). After the apply, the broker's policies
 *   are the planned end state's, every queue reports the policies the end state gives it, a queue
 *   the plan said nothing about on the way never held fewer messages than the end state leaves,
 *   and what the end state cut is what the plan said it would.
 *
 * Seed: PLAN_SEED=<n> replays a run (printed); PLAN_WORLDS=<n> worlds per broker (default 5).
 */
import { describe, expect, it } from 'vitest';
import { fileImport } from '../../src/commands/import/import.ts';
import { readDefinitions } from '../../src/definitions/read.ts';
import { type Plan, planFile } from '../../src/plan/plan.ts';
import { removesData } from '../../src/policy/impact/impact.ts';
import type { LayerNames } from '../../src/policy/simulate/sequence.ts';
import type { Policy, PolicyLayer } from '../../src/policy/types.ts';
import type { LabClient } from '../../src/rabbit/lab.ts';
import { isWorkflowError } from '../../src/workflow/errors.ts';
import { brokerCredentials, uniqueName, waitFor } from '../support/broker.ts';
import { brokersUp, type TestBroker } from '../support/brokers.ts';
import { fewestMessages, management, messages } from '../support/messages.ts';
import { capNow, exportOf, type P, p, ROWS } from '../support/planRows.ts';
import { type Rng, rng } from '../support/rng.ts';
import {
  APPROVER,
  REQUESTER,
  settled,
  TEST_ENV,
  type WorkflowFixture,
  workflowHooks,
} from '../support/workflow.ts';

const { up } = await brokersUp();
const SEED = Number(process.env.PLAN_SEED ?? Date.now() % 1_000_000);
const WORLDS = Number(process.env.PLAN_WORLDS ?? 5);

let admin: LabClient;
let fx: WorkflowFixture;

interface World {
  readonly queues: Readonly<Record<string, number>>;
  readonly live: readonly P[];
  readonly file: readonly P[];
  readonly prune: boolean;
}

/** What the bot did with the world: the plan it filed, and what the queues held. */
interface Outcome {
  readonly plan: Plan;
  readonly initial: ReadonlyMap<string, number>;
  readonly fewest: ReadonlyMap<string, number>;
  readonly final: ReadonlyMap<string, number>;
}

const layerOf = (x: P): PolicyLayer => (x.operator ? 'operator' : 'user');
const key = (x: { name: string }, layer: PolicyLayer) => `${layer} ${x.name}`;

/** The policies the broker should hold once the set is applied: the file's, and the rest unless pruned. */
function endState(w: World): P[] {
  const inFile = new Set(w.file.map((x) => key(x, layerOf(x))));
  return [...w.file, ...(w.prune ? [] : w.live.filter((x) => !inFile.has(key(x, layerOf(x)))))];
}

/**
 * The names one layer can give the queue: the highest priority match, or every match sharing that
 * priority (a tie, such as a rename kept without --prune: the broker picks one); [null] for none.
 */
function winners(policies: readonly P[], queue: string, operator: boolean): (string | null)[] {
  const m = policies.filter((x) => (x.operator === true) === operator && new RegExp(x.pattern).test(queue));
  const top = Math.max(...m.map((x) => x.priority));
  return m.length
    ? m
        .filter((x) => x.priority === top)
        .map((x) => x.name)
        .sort()
    : [null];
}

function restApi(broker: TestBroker, vhost: string) {
  const { user, password } = brokerCredentials();
  const auth = `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
  return async (queue: string) => {
    const res = await fetch(
      new URL(`/api/queues/${encodeURIComponent(vhost)}/${encodeURIComponent(queue)}`, broker.url),
      { headers: { authorization: auth }, signal: AbortSignal.timeout(30_000) },
    );
    const q = (await res.json()) as { policy?: string | null; operator_policy?: string | null };
    return { policy: q.policy || null, operatorPolicy: q.operator_policy || null };
  };
}

const sorted = (xs: readonly Policy[]) =>
  [...xs]
    .map(({ name, pattern, applyTo, priority, definition }) => ({
      name,
      pattern,
      applyTo,
      priority,
      definition,
    }))
    .sort((a, b) => a.name.localeCompare(b.name));

/** Sets the world up, files the file through the bot, approves it (acknowledging its loss), applies it, watching. */
async function throughTheBot(broker: TestBroker, w: World, what: string): Promise<Outcome | 'nothing'> {
  const vhost = uniqueName('plan-diff');
  await admin.putVhost(vhost);
  const amqp = await messages(broker, vhost);
  try {
    const api = management(broker, vhost);
    for (const x of w.live) await admin.putPolicy(layerOf(x), { ...x, vhost });
    const initial = new Map<string, number>();
    for (const [q, n] of Object.entries(w.queues)) {
      await api.queue(q, 'classic');
      await amqp.publish(q, n);
      initial.set(q, Math.min(n, capNow(w.live, q)));
    }
    for (const [q, n] of initial) await api.settled(q, n);
    const file = exportOf(vhost, w.file);
    // The statistics lag: filed once a plan of the same file reads every queue's messages as they are.
    await waitFor(
      async () => {
        const read = readDefinitions(file);
        if (!read.ok) throw new Error(read.problem);
        const r = await planFile(read.file, admin, { prune: w.prune });
        if (r.status !== 'planned') throw new Error(JSON.stringify(r));
        return r.plan.vhosts[0]?.objects.every(
          (o) => o.kind !== 'classic' || o.now?.messages === initial.get(o.name),
        );
      },
      { what: `${what}: a plan with the statistics in` },
    );
    const wf = fx.workflow();
    const outcome = await fileImport(
      { workflow: wf, broker: () => ({ name: TEST_ENV, broker: admin }) },
      { source: 'definitions.json', file, reason: 'policies as code', prune: w.prune },
      REQUESTER,
      { channel: 'C0CI' },
    );
    if (outcome.status === 'refused' && outcome.code === 'nothing-to-do') return 'nothing';
    if (outcome.status !== 'filed') throw new Error(`${what}: ${JSON.stringify(outcome)}`);
    const { request, plan } = outcome;
    const loss = request.preview.summary.impact?.totals;
    const approve = { kind: 'approve' as const, user: APPROVER, reason: 'read the plan' };
    if (loss && removesData(loss)) {
      // The loss is acknowledged in numbers, as for one change: not approved without.
      const refused = await wf.decide(request.id, approve).then(
        () => 'approved',
        (err: unknown) => (isWorkflowError(err) ? err.code : String(err)),
      );
      expect(refused, what).toBe('loss-not-acknowledged');
    }
    const sampling = await fewestMessages(broker, vhost, [...initial.keys()]);
    let done: Awaited<ReturnType<typeof settled>>;
    let fewest: ReadonlyMap<string, number>;
    try {
      await wf.decide(request.id, { ...approve, acknowledgedLoss: true });
      done = await settled(wf, request.id);
    } finally {
      // Stopped on a failure too: its loop would keep the run from ending.
      fewest = (await sampling.stop()).fewest;
    }
    expect(
      done.state,
      `${what}: ${JSON.stringify({ progress: done.setProgress, failure: done.failure })}`,
    ).toBe('applied');

    // The broker's policies are the planned end state's.
    const end = endState(w);
    const ofLayer = (layer: PolicyLayer) =>
      sorted(end.filter((x) => layerOf(x) === layer).map((x) => ({ ...x, vhost })));
    expect(sorted(await admin.listPolicies(vhost)), `${what}: policies`).toEqual(ofLayer('user'));
    expect(sorted(await admin.listOperatorPolicies(vhost)), `${what}: operator policies`).toEqual(
      ofLayer('operator'),
    );
    // Every queue reports what the end state gives it, as the plan said.
    const reported = restApi(broker, vhost);
    for (const q of initial.keys()) {
      const user = winners(end, q, false);
      const operator = winners(end, q, true);
      await waitFor(
        async () => {
          const got = await reported(q);
          return user.includes(got.policy) && operator.includes(got.operatorPolicy);
        },
        { what: `${what}: ${q} under one of ${JSON.stringify({ user, operator })}` },
      );
      const planned = plan.vhosts[0]?.objects.find((o) => o.name === q);
      if (planned) {
        const names = (l: LayerNames) => (l.candidates ? [...l.candidates].sort() : [l.policy]);
        expect(names(planned.after), `${what}: ${q}`).toEqual(user);
        if (operator.length === 1) expect(planned.after.operatorPolicy, `${what}: ${q}`).toBe(operator[0]);
      }
    }
    const final = new Map<string, number>();
    for (const [q, n] of initial) {
      const kept = Math.min(n, capNow(end, q));
      const onTheWay = plan.transitional.some((t) => t.name === q);
      if (!onTheWay) await api.settled(q, kept);
      // Read from the queue itself: the statistics may not show a cut made a moment ago.
      final.set(q, onTheWay ? await amqp.count(q) : kept);
    }
    return { plan, initial, fewest, final };
  } finally {
    await amqp.close();
    await admin.deleteVhost(vhost);
  }
}

/** What the plan said the end state drops from the queue. */
const endDrop = (plan: Plan, q: string) =>
  (plan.vhosts[0]?.objects.find((o) => o.name === q)?.impact ?? []).reduce(
    (n, x) => n + (x.effect === 'drop' ? x.messages : 0),
    0,
  );

/** The checks every world passes: nothing lost the plan did not announce, the end state's cut as planned. */
function checkMessages(o: Outcome, end: readonly P[], what: string): void {
  for (const [q, n] of o.initial) {
    const kept = Math.min(n, capNow(end, q));
    const onTheWay = o.plan.transitional.some((t) => t.name === q);
    if (onTheWay) {
      expect(o.final.get(q), `${what}: ${q} announced on the way`).toBeLessThanOrEqual(kept);
      continue;
    }
    expect(o.fewest.get(q), `${what}: ${q} never below what the end state keeps`).toBe(kept);
    expect(o.final.get(q), `${what}: ${q} after`).toBe(kept);
    expect(endDrop(o.plan, q), `${what}: ${q} the end state's cut, as planned`).toBe(n - kept);
  }
}

// ---- random worlds ------------------------------------------------------------------------------

const QUEUES = ['a.x', 'a.y', 'b.x', 'b.y'];
const PATTERNS = ['^a\\.', '^b\\.', '\\.x$', '\\.y$', '.*', '^a\\.x$', '^b\\.y$'];
const CAPS = [3, 8, 20, 1000];

function randomWorld(r: Rng): World {
  for (;;) {
    const free = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11];
    const take = () => free.splice(r.int(free.length), 1)[0] as number;
    const live: P[] = Array.from({ length: 2 + r.int(3) }, (_, i) =>
      p(`p${i}`, r.pick(PATTERNS), take(), { 'max-length': r.pick(CAPS) }),
    );
    if (r.chance(0.5))
      live.push({ ...p('op', r.pick(PATTERNS), 0, { 'max-length': r.pick([10, 25]) }), operator: true });
    const prune = r.chance(0.5);
    const file: P[] = [];
    for (const x of live) {
      const fate = r.pick(['keep', 'rename', 'priority', 'pattern', 'cap', 'drop'] as const);
      if (fate === 'keep') file.push(x);
      else if (fate === 'rename') file.push({ ...x, name: `${x.name}-renamed` });
      else if (fate === 'priority' && !x.operator) file.push({ ...x, priority: take() });
      else if (fate === 'pattern') file.push({ ...x, pattern: r.pick(PATTERNS) });
      else if (fate === 'cap') file.push({ ...x, definition: { 'max-length': r.pick(CAPS) } });
      else if (fate !== 'drop') file.push(x);
    }
    for (const name of ['new', 'newer'])
      if (r.chance(0.5)) file.push(p(name, r.pick(PATTERNS), take(), { 'max-length': r.pick(CAPS) }));
    const queues = Object.fromEntries(QUEUES.map((q) => [q, r.int(31)]));
    const w: World = { queues, live, file, prune };
    // No tie in the end state: which policy the broker picks there is not defined.
    const distinct = (xs: readonly P[]) => new Set(xs.map((x) => x.priority)).size === xs.length;
    const end = endState(w);
    if (
      distinct(end.filter((x) => !x.operator)) &&
      distinct(end.filter((x) => x.operator)) &&
      file.length > 0
    )
      return w;
  }
}

describe.each(up)('a definitions file filed, approved and applied by the bot on $label', (broker) => {
  workflowHooks(broker, (a, f) => {
    admin = a;
    fx = f;
  });

  it.each(ROWS.map((r) => [r.what, r] as const))(
    '%s',
    async (what, row) => {
      await fx.worker(admin);
      const w: World = { queues: row.queues, live: row.live, file: row.file, prune: row.prune ?? false };
      const o = await throughTheBot(broker, w, what);
      if (o === 'nothing') throw new Error(`${what}: nothing to change`);
      expect(o.plan.changes.map((s) => s.name)).toEqual(row.order);
      expect(o.plan.impact.messagesLost + o.plan.impact.messagesDeadLettered).toBe(row.lost);
      expect(o.plan.transitional.map((t) => [t.name, t.step])).toEqual(
        row.transitional.map((t) => [t.name, t.step]),
      );
      for (const [q, n] of Object.entries(row.after)) expect(o.final.get(q), `${what}: ${q}`).toBe(n);
      checkMessages(o, endState(w), what);
    },
    120_000,
  );

  it('random worlds and files: the broker ends as planned, and loses nothing on the way the plan did not say', async () => {
    const seed = SEED + up.indexOf(broker) * 7919;
    console.log(`plan differential on ${broker.label}: seed ${seed} (PLAN_SEED=${SEED})`);
    const r = rng(seed);
    await fx.worker(admin);
    let applied = 0;
    let steps = 0;
    let cutting = 0;
    let onTheWay = 0;
    for (let i = 0; i < WORLDS; i++) {
      const w = randomWorld(r);
      const what = `seed ${SEED}, ${broker.label}, world ${i}: ${JSON.stringify(w)}`;
      const o = await throughTheBot(broker, w, what);
      if (o === 'nothing') continue;
      applied++;
      steps += o.plan.changes.length;
      if (removesData(o.plan.impact)) cutting++;
      if (o.plan.transitional.length) onTheWay++;
      checkMessages(o, endState(w), what);
    }
    console.log(
      `plan differential on ${broker.label}: ${applied} of ${WORLDS} worlds applied (${steps} steps), ${cutting} with an end state that cuts, ${onTheWay} with a loss on the way`,
    );
    expect(applied).toBeGreaterThan(0);
  }, 600_000);
});
