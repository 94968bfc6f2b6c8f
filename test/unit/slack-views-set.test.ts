import { describe, expect, it } from 'vitest';
import { requestEntry } from '../../src/commands/requests/requests.ts';
import { setFile } from '../../src/slack/views/changeSet.ts';
import { requestMessage } from '../../src/slack/views/request.ts';
import { requestsView } from '../../src/slack/views/requests.ts';
import { appliedView } from '../../src/slack/views/setApplied.ts';
import type { PolicySetStep } from '../../src/workflow/changeSet.ts';
import type { ChangeRequest } from '../../src/workflow/types.ts';
import { checkMessage } from '../support/fakeSlack.ts';
import { renderedText } from '../support/harness.ts';

/**
 * A change set's approval message, pure: within Slack's limits for a set of 100 changes at the
 * name limit (255 bytes each), the loss first (the end state's, then the way's), then the changes
 * in the order of writing, and the whole plan in the attached file (every change, in order).
 */

const T0 = '2026-12-02T18:00:00.000Z';
const NAME = (i: number) => `${String(i).padStart(3, '0')}-${'p'.repeat(251)}`;

function setRequest(
  size: number,
  state: ChangeRequest['state'] = 'pending',
  vhostOf: (i: number) => string = () => 'v'.repeat(255),
): ChangeRequest {
  const fields = (priority: number) => ({
    pattern: `^orders\\.${'x'.repeat(200)}$`,
    applyTo: 'queues',
    priority,
    definition: { 'max-length': 5, 'dead-letter-exchange': 'd'.repeat(200) },
  });
  const steps: PolicySetStep[] = Array.from({ length: size }, (_, i) => ({
    layer: i % 3 === 0 ? 'operator' : 'user',
    vhost: vhostOf(i),
    name: NAME(i),
    // Creates (even), edits and deletes (odd, every fifth): a step always has a before or an after.
    before: i % 2 === 0 ? null : fields(i),
    after: i % 2 === 1 && i % 5 === 0 ? null : fields(i + 1),
  }));
  const first = steps[0] as PolicySetStep;
  return {
    id: 'r-set0123456789abcdef',
    env: 'prod',
    vhost: first.vhost,
    layer: first.layer,
    action: 'import',
    policy: 'definitions.json',
    before: first.before,
    after: first.after,
    set: {
      steps,
      source: `definitions-${'f'.repeat(300)}.json`,
      transitional: {
        messagesLost: 25,
        messagesDeadLettered: 0,
        queuesDeleted: 0,
        queuesRefusingPublishes: 0,
      },
      unchanged: 7,
    },
    preview: {
      brokerVersion: '4.3.6',
      summary: {
        objects: 4000,
        unpredictable: 0,
        risks: [],
        newTies: { count: 0, objects: [] },
        unanchoredCatch: null,
        groups: [],
        heldByOperator: 0,
        scanned: { queues: 4000, exchanges: 0 },
        impact: {
          totals: {
            messagesLost: 145,
            messagesDeadLettered: 0,
            queuesDeleted: 1,
            queuesRefusingPublishes: 0,
          },
          queues: Array.from({ length: 300 }, (_, i) => `q.${i}.${'n'.repeat(240)}`),
          sampledAt: null,
          objects: [],
          count: 300,
          unknown: 0,
          notes: [],
        },
      },
      warnings: [],
      diff: {
        action: 'create',
        layer: 'user',
        vhost: '/',
        name: 'x',
        fields: {},
        definition: {},
        unchanged: false,
      },
      objects: 4000,
      unpredictable: 0,
    },
    requester: { user: 'api:ci', reason: 'policies as code' },
    origin: { channel: 'C0CI' },
    approvalsChannel: 'C0APPROVALS',
    state,
    createdAt: T0,
    expiresAt: '2026-12-03T18:00:00.000Z',
    updatedAt: T0,
  } as ChangeRequest;
}

const requestsResult = (rs: ChangeRequest[]) => ({ requests: rs.map(requestEntry), frozen: [] });

describe('a change set in the approvals channel', () => {
  it.each(['pending', 'applying', 'applied', 'failed'] as const)(
    'a set of 100 changes at the name limit stays within Slack’s limits (%s)',
    (state) => {
      const m = requestMessage(setRequest(100, state), { fileAttached: true });
      expect(checkMessage({ text: m.text, blocks: m.blocks }, { maxText: 4000 })).toBeNull();
      expect(m.blocks.length).toBeLessThanOrEqual(50);
    },
  );

  it('the loss first (the end state, then the way), then the changes in the order of writing, the rest in the file', () => {
    const text = renderedText({
      text: '',
      blocks: requestMessage(setRequest(100), { fileAttached: true }).blocks,
    });
    const at = (s: string) => {
      const i = text.indexOf(s);
      expect(i, s).toBeGreaterThanOrEqual(0);
      return i;
    };
    expect(at('145 messages')).toBeLessThan(at('*On the way*'));
    expect(at('*On the way*')).toBeLessThan(at('in the order of writing'));
    expect(at('25 messages lost')).toBeLessThan(at('1. '));
    expect(at('1. ')).toBeLessThan(at('2. '));
    expect(text).toMatch(/_…and \d+ more_/);
    expect(text).toContain('Every change, in order, is in the attached file.');
  });

  it('a set gone stale on a larger loss says so as a set: nothing applied, plan the file again (no fresh numbers posted)', () => {
    const r = { ...setRequest(3, 'stale'), staleBecause: 'loss-grew' as const };
    const text = renderedText({ text: '', blocks: requestMessage(r).blocks });
    expect(text).toContain(
      'Stale — not applied*: the set would now remove more than the approval accepted (more messages, or another queue). Nothing was applied; plan the file again and import it to go ahead.',
    );
    expect(text).not.toContain('the fresh numbers were posted');
  });

  it('a set gone stale because a policy changed says so as a set: no fresh preview is posted, what was written is rolled back', () => {
    const r = { ...setRequest(3, 'stale'), staleBecause: 'policy-changed' as const };
    const text = renderedText({ text: '', blocks: requestMessage(r).blocks });
    expect(text).toContain(
      'Stale — not applied*: a policy the set touches is no longer as planned. Nothing more was written, and any step already written was rolled back; plan the file again and import it to go ahead.',
    );
    expect(text).not.toContain('A fresh preview was posted');
  });

  it('a set waiting to go on (its rollback or its records) says since when and why, the why as written', () => {
    const why = 'audit down <!here> *now* \u202Egnp.exe';
    const r = {
      ...setRequest(3, 'applying'),
      setProgress: { size: 3, written: 2, undone: 0, retrying: { why, at: T0 } },
    };
    const m = requestMessage(r);
    const text = renderedText({ text: '', blocks: m.blocks });
    expect(text).toContain('*Waiting to go on* since <!date^');
    expect(text).toContain('It tries again by itself; each change below says where it stands.');
    expect(text).not.toContain('<!here>');
    expect(text).not.toContain('\u202E');
    expect(checkMessage({ text: m.text, blocks: m.blocks }, { maxText: 4000 })).toBeNull();
    // Applied (or any other state): no longer waiting, nothing said.
    const done = renderedText({ text: '', blocks: requestMessage({ ...r, state: 'applied' }).blocks });
    expect(done).not.toContain('Waiting to go on');
  });

  it('a set over many vhosts names each in its header, or counts them when they do not fit (never its first alone)', () => {
    const header = (r: ChangeRequest) => renderedText({ text: '', blocks: requestMessage(r).blocks });
    const three = header(setRequest(6, 'pending', (i) => ['orders', 'billing', 'audit'][i % 3] as string));
    expect(three).toContain('*Environment* `prod` · vhosts `orders`, `billing`, `audit`');
    const fifty = setRequest(
      100,
      'pending',
      (i) => `tenant-${String(i % 50).padStart(2, '0')}-${'v'.repeat(60)}`,
    );
    const text = header(fifty);
    expect(text).toContain('*Environment* `prod` · 50 vhosts (each in the attached file)');
    expect(requestMessage(fifty).text).toContain('in prod (50 vhosts');
    const m = requestMessage(fifty);
    expect(checkMessage({ text: m.text, blocks: m.blocks }, { maxText: 4000 })).toBeNull();
  });

  it('a step left by the rollback and a step not known are shown above the list, with what the broker holds, within Slack’s limits', () => {
    const holds = {
      pattern: `^race\\.${'y'.repeat(300)}$`,
      applyTo: 'queues',
      priority: 5,
      definition: {
        'max-length': 123,
        'dead-letter-exchange': 'x'.repeat(500),
        'message-ttl': 1,
        expires: 2,
      },
    };
    const r = {
      ...setRequest(100, 'applying'),
      setProgress: {
        size: 100,
        written: 60,
        undone: 30,
        left: [
          { step: 40, holds },
          { step: 45, holds: null },
        ],
        unknown: [60],
        retrying: { why: 'socket hang up', at: T0 },
      },
    };
    const m = requestMessage(r, { fileAttached: true });
    expect(checkMessage({ text: m.text, blocks: m.blocks }, { maxText: 4000 })).toBeNull();
    const text = renderedText({ text: '', blocks: m.blocks });
    const attention = text.slice(text.indexOf('*Not as the set would have them:*'));
    expect(attention).toMatch(
      /^\*Not as the set would have them:\*\n41\. .*left as changed outside this request\*, not undone: the broker holds pattern `\^race/,
    );
    expect(attention).toContain('`max-length` = `123`');
    expect(attention).toMatch(/\n46\. .*the broker holds no policy/);
    expect(attention).toMatch(/\n61\. .*\*not known\*: the broker did not answer/);
    expect(text).toMatch(/\n1\. .* · _written_/);
  });

  it('a set applied is posted with every change and its audit record (its diff), the rest in the file, one Revert for the whole set', () => {
    const last = {
      id: 'a-r-set0123456789abcdef-6',
      at: T0,
      appliedAt: T0,
      env: 'prod',
      prev: '',
      hash: '',
      vhost: 'v',
      policy: 'p',
      operator: false,
      action: 'create' as const,
      requester: { user: 'api:ci', reason: 'policies as code' },
      approvers: [{ user: 'U0APPROVER', reason: 'reviewed' }],
      before: null,
      after: null,
      objects: [],
      unpredictable: 0,
    };
    const seven = appliedView(setRequest(7, 'applied'), last);
    const text = renderedText({ text: seven.text, blocks: seven.blocks });
    for (let i = 0; i < 7; i++) {
      expect(text).toContain(`*${i + 1}. `);
      expect(text).toContain(`\`a-r-set0123456789abcdef-${i}\``);
    }
    expect(text).toContain('*Applied:* import of 7 policy changes from');
    expect(seven.file).toBeUndefined();
    const revert = seven.blocks.flatMap((b) => (b.type === 'actions' ? b.elements : []));
    expect(revert).toHaveLength(1);
    expect(revert[0]).toMatchObject({ action_id: 'rmq_audit_revert', value: last.id });
    const hundred = appliedView(setRequest(100, 'applied'), { ...last, id: 'a-r-set0123456789abcdef-99' });
    expect(checkMessage({ text: hundred.text, blocks: hundred.blocks }, { maxText: 4000 })).toBeNull();
    expect(renderedText({ text: '', blocks: hundred.blocks })).toContain('…and 90 more changes');
    expect(hundred.file?.content.split('\n').filter((l) => /^\d+\. /.test(l))).toHaveLength(100);
  });

  it('`requests` lists a set as a set: its file, how many changes, its vhosts', () => {
    const r = setRequest(6, 'pending', (i) => ['orders', 'billing'][i % 2] as string);
    const m = requestsView(requestsResult([r]));
    const text = renderedText({ text: m.text, blocks: m.blocks });
    expect(text).toContain('*import* of 6 policy changes from `definitions-');
    expect(text).toContain('in `prod` (vhosts `orders`, `billing`)');
  });

  it('the attached file holds every change, in the order of writing', () => {
    const file = setFile(setRequest(100) as ChangeRequest & { set: NonNullable<ChangeRequest['set']> });
    const numbered = file.content.split('\n').filter((l) => /^\d+\. /.test(l));
    expect(numbered).toHaveLength(100);
    numbered.forEach((l, i) => {
      expect(l.startsWith(`${i + 1}. `)).toBe(true);
      expect(l).toContain(NAME(i));
    });
  });
});

describe('a set filed with its loss unknown', () => {
  it('its approval message leads with "Loss unknown", inside Slack limits; without it, as before', () => {
    const r = setRequest(60);
    const unknown: ChangeRequest = {
      ...r,
      preview: {
        ...r.preview,
        unread: [
          {
            what: 'queue-statistics',
            vhost: 'orders',
            why: 'timeout',
            detail: 'no answer',
            budgetMs: 15_000,
          },
        ],
      },
    };
    const m = requestMessage(unknown);
    expect(checkMessage({ ...m })).toBeNull();
    expect(
      m.text.startsWith("Loss unknown: the queues' statistics (messages, consumers) of vhost `orders`"),
    ).toBe(true);
    expect(JSON.stringify(m.blocks[0])).toContain('timeout after 15 s');
    expect(requestMessage(r).text.startsWith('Loss unknown')).toBe(false);
  });
});
