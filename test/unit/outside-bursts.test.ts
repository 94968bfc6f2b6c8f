/**
 * Bursts of changes made outside the bot (src/watch/outside.ts), with the trail and Slack as
 * recorders: a first start's comparison finding 300 differences in one vhost is one post of 300
 * records (and 300 appends); changes of two vhosts, or of two actors, are posts of their own;
 * a post that fails is retried and then said in the log, never dropped silently; a trail that
 * refuses a change's every try is not tried for the rest of its burst, and a stop tries each once.
 */
import { describe, expect, it } from 'vitest';
import type { ChangeEntry, ChangeRecord } from '../../src/audit/types.ts';
import { createLogger } from '../../src/log/log.ts';
import type { Policy } from '../../src/policy/types.ts';
import { outsideRecorder } from '../../src/watch/outside.ts';
import type { OutsideChange } from '../../src/watch/watcher.ts';

const policy = (vhost: string, n: number): Policy => ({
  vhost,
  name: `p${n}`,
  pattern: `^p${n}\\.`,
  applyTo: 'queues',
  priority: 0,
  definition: { 'max-length': n },
});

const change = (vhost: string, n: number, actor: string | null = null): OutsideChange => ({
  env: 'prod',
  layer: 'user',
  vhost,
  name: `p${n}`,
  before: null,
  after: policy(vhost, n),
  actor,
  source: actor ? 'events' : 'start',
  at: new Date(Date.UTC(2026, 11, 1)),
});

function harness(failPosts = 0, failAppends = 0) {
  const appended: ChangeEntry[] = [];
  const posts: ChangeRecord[][] = [];
  const lines: string[] = [];
  let failing = failPosts;
  let appendsFailing = failAppends;
  let appendsTried = 0;
  let postsTried = 0;
  const recorder = outsideRecorder({
    // The broker cannot be listed: recorded without the objects' effects, as when it is down.
    brokerFor: () => {
      throw new Error('no broker in this test');
    },
    approvalsChannelOf: () => 'C0APPROVALS',
    trail: {
      append: async (e) => {
        appendsTried++;
        if (appendsFailing-- > 0) throw new Error('Redis is gone');
        appended.push(e);
        return { ...e, prev: '', hash: String(appended.length) } as ChangeRecord;
      },
    },
    notifier: {
      outside: async (records) => {
        postsTried++;
        if (failing-- > 0) throw new Error('Slack is down');
        posts.push([...records]);
      },
    },
    log: createLogger('info', { write: (l: string) => void lines.push(l) }),
    attempts: 2,
    retryBaseMs: 1,
    windowMs: 20,
  });
  return { recorder, appended, posts, lines, appendsTried: () => appendsTried, postsTried: () => postsTried };
}

const said = (lines: readonly string[]) =>
  lines.map((l) => JSON.parse(l) as { msg: string; records?: string[]; policies?: string[] });

/** Until `f` holds, polled; never a fixed sleep. */
async function until(f: () => boolean): Promise<void> {
  for (const deadline = Date.now() + 5_000; !f(); ) {
    if (Date.now() > deadline) throw new Error('not in 5 s');
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe('bursts of outside changes', () => {
  it('a first start finding 300 differences in one vhost: 300 records, one post', async () => {
    const h = harness();
    for (let n = 0; n < 300; n++) h.recorder.record(change('orders', n));
    await h.recorder.flush();
    expect(h.appended).toHaveLength(300);
    expect(h.posts).toHaveLength(1);
    expect(h.posts[0]?.map((r) => r.policy)).toEqual(Array.from({ length: 300 }, (_, n) => `p${n}`));
  });

  it('two vhosts, or two actors, are posts of their own; a burst ends after its window', async () => {
    const h = harness();
    h.recorder.record(change('a', 1, 'alice'));
    h.recorder.record(change('a', 2, 'bob'));
    h.recorder.record(change('b', 3, 'alice'));
    h.recorder.record(change('a', 4, 'alice'));
    // Not flushed: the window (20 ms) ends each burst by itself.
    await new Promise((r) => setTimeout(r, 200));
    await h.recorder.flush();
    const byPost = h.posts.map((p) => p.map((r) => `${r.vhost}/${r.policy}/${r.actor}`)).sort();
    expect(byPost).toEqual([['a/p1/alice', 'a/p4/alice'], ['a/p2/bob'], ['b/p3/alice']]);
  });

  it('a post that keeps failing is said in the log with its records, after its retries', async () => {
    const h = harness(5);
    h.recorder.record(change('orders', 1));
    h.recorder.record(change('orders', 2));
    // The burst ends by its window (not at a stop, where each is tried once).
    const notPosted = () =>
      said(h.lines).find((l) => l.msg === 'recorded, but not posted to the approvals channel');
    await until(() => notPosted() !== undefined);
    expect(h.appended).toHaveLength(2);
    expect(h.posts).toHaveLength(0);
    expect(notPosted()?.records).toHaveLength(2);
    expect(h.postsTried()).toBe(2);
  });

  it('a trail that refuses every try of one change: the rest of its burst is said, not tried', async () => {
    const h = harness(0, Number.POSITIVE_INFINITY);
    for (let n = 1; n <= 5; n++) h.recorder.record(change('orders', n));
    const notRecorded = () =>
      said(h.lines).find((l) => l.msg === '5 changes outside the bot could not be recorded');
    await until(() => notRecorded() !== undefined);
    expect(notRecorded()?.policies).toEqual(['p1', 'p2', 'p3', 'p4', 'p5']);
    // The first change's 2 tries, none for the other four; nothing posted.
    expect(h.appendsTried()).toBe(2);
    expect(h.posts).toHaveLength(0);
  });

  it('at a stop (flush) each append and post is tried once: a trail that is gone holds no stop', async () => {
    const h = harness(0, Number.POSITIVE_INFINITY);
    h.recorder.record(change('orders', 1));
    await h.recorder.flush();
    expect(h.appendsTried()).toBe(1);
    expect(said(h.lines).map((l) => l.msg)).toContain('a change outside the bot could not be recorded');
  });
});
