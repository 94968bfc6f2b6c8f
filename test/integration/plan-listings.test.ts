/**
 * `plan` lists each vhost of the file once for the whole set, however many changes it holds
 * (INTERFACE.md §2a, issue 26 item 2): the real broker behind a recording proxy, a file of two
 * vhosts planned with 1 change per vhost and with 12. The whole listings of each vhost (queues,
 * exchanges, policies) are as many either way; the live numbers come as pages of the broker's
 * name filter, the changed patterns joined in as few filters as the filter's limit allows (each
 * page makes the broker build the vhost's whole list; it computes statistics for the page alone:
 * a whole statistics listing costs 3.5-10x the records), one here per vhost, however many change.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readDefinitions } from '../../src/definitions/read.ts';
import { planFile } from '../../src/plan/plan.ts';
import { ManagementClient } from '../../src/rabbit/client.ts';
import type { LabClient } from '../../src/rabbit/lab.ts';
import { brokerCredentials, uniqueName } from '../support/broker.ts';
import { brokersUp, clientFor } from '../support/brokers.ts';
import { type FakeBroker, startFakeBroker } from '../support/fakeBroker.ts';
import { exportOf, p } from '../support/planRows.ts';

const { up } = await brokersUp();
const broker = up[0];
if (!broker) throw new Error('no broker up');

const vhosts = [uniqueName('plan-reads-a'), uniqueName('plan-reads-b')];
let admin: LabClient;
let proxy: FakeBroker;

beforeAll(async () => {
  admin = clientFor(broker);
  proxy = await startFakeBroker({ fallback: { kind: 'proxy', target: broker.url } });
  for (const vhost of vhosts) {
    await admin.putVhost(vhost);
    for (let i = 0; i < 12; i++) {
      await admin.putQueue(vhost, `svc${i}.work`, { kind: 'classic' });
      await admin.putPolicy('user', { vhost, ...p(`svc${i}`, `^svc${i}\\.`, 1, { 'max-length': 100 }) });
    }
  }
});

afterAll(async () => {
  for (const vhost of vhosts) await admin.deleteVhost(vhost);
  await admin.close();
  await proxy.close();
});

/** The file: every vhost's 12 policies, the first `changed` of them with a new cap. */
function file(changed: number): string {
  const docs = vhosts.map((vhost) =>
    JSON.parse(
      exportOf(
        vhost,
        Array.from({ length: 12 }, (_, i) =>
          p(`svc${i}`, `^svc${i}\\.`, 1, { 'max-length': i < changed ? 200 : 100 }),
        ),
      ),
    ),
  );
  return JSON.stringify({ policies: docs.flatMap((d) => d.policies) });
}

/** The requests a plan of `changed` changes per vhost makes, per vhost and path (no query). */
async function readsOf(changed: number): Promise<Record<string, number>> {
  const read = readDefinitions(file(changed));
  if (!read.ok) throw new Error(read.problem);
  const client = new ManagementClient({ url: proxy.url, ...brokerCredentials() });
  const from = proxy.requests.length;
  try {
    const r = await planFile(read.file, client, {});
    if (r.status !== 'planned') throw new Error(JSON.stringify(r));
    expect(r.plan.changes).toHaveLength(2 * changed);
  } finally {
    await client.close();
  }
  const counts: Record<string, number> = {};
  for (const req of proxy.requests.slice(from)) {
    const [path = '', query = ''] = req.url.split('?');
    const plain = decodeURIComponent(path.replace(/^\/api\//, ''));
    const page = new URLSearchParams(query).has('name') ? ' (a page of the name filter)' : '';
    for (const vhost of vhosts) {
      if (!plain.includes(vhost)) continue;
      const key = `${req.method} ${plain.replace(vhost, 'V')}${page}`;
      counts[key] = (counts[key] ?? 0) + 1;
    }
  }
  return counts;
}

const pages = (reads: Record<string, number>) =>
  Object.entries(reads)
    .filter(([k]) => k.endsWith('(a page of the name filter)'))
    .reduce((n, [, c]) => n + c, 0);
const whole = (reads: Record<string, number>) =>
  Object.fromEntries(Object.entries(reads).filter(([k]) => !k.endsWith('(a page of the name filter)')));

describe(`plan reads each vhost once for the whole set (${broker.label})`, () => {
  it('1 change per vhost and 12 per vhost: the same whole listings; one page of the joined patterns for the live numbers', async () => {
    const one = await readsOf(1);
    const twelve = await readsOf(12);
    expect(Object.keys(whole(one)).some((k) => k.startsWith('GET queues/V'))).toBe(true);
    expect(whole(twelve)).toEqual(whole(one));
    // The twelve changed patterns asked together: one page per vhost either way.
    expect(pages(one)).toBe(2 * 1);
    expect(pages(twelve)).toBe(2 * 1);
  });
});
