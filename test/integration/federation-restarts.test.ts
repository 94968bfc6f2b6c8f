/**
 * Which changes the broker answers by restarting a federation link that goes on (docs/broker-facts.md,
 * "Federation links restarted by a change"): the plan orders a set so that no step stops a link
 * its end state keeps, but a restart is the broker's own, and no order avoids it. Measured on the
 * brokers that run the federation plugin (4.0.5, 4.3.6), a link from one vhost to another of the
 * same broker: the link's `timestamp` (when it took its status) moves when it is restarted.
 */
import { describe, expect, it } from 'vitest';
import { brokerCredentials, managementCall, uniqueName, waitFor } from '../support/broker.ts';
import { BROKERS, reachable, type TestBroker } from '../support/brokers.ts';

const federated: TestBroker[] = [];
for (const b of BROKERS.slice(1)) if (await reachable(b)) federated.push(b);

/** How long a change is watched for a restart it may cause (a loaded machine restarts a link in seconds). */
const WATCH_MS = 8000;

describe.each(federated)('federation links restarted by a change on $label', (broker) => {
  it('an edit of the policy or of the set a link goes through, the deletion of another set, and the policy deleted and created again restart it; another upstream created, or the policy put again as it is, does not', async () => {
    const managed = managementCall(broker.url);
    const call = async (method: string, path: string, body?: unknown) =>
      (await managed(method, path, body)).json;
    const down = uniqueName('restart-down');
    const up = uniqueName('restart-up');
    const d = encodeURIComponent(down);
    const port = Number(new URL(broker.amqpUrl).port);
    const { user, password } = brokerCredentials();
    const uri = `amqp://${user}:${password}@127.0.0.1:${port}/${encodeURIComponent(up)}`;
    const stamp = async () => {
      const links = (await call('GET', `federation-links/${d}`)) as {
        exchange?: string;
        upstream?: string;
        status?: string;
        timestamp?: string;
      }[];
      const l = links.find((x) => x.exchange === 'fed.x' && x.upstream === 'up1');
      return l?.status === 'running' ? l.timestamp : undefined;
    };
    const policy = (definition: Record<string, unknown>) =>
      call('PUT', `policies/${d}/fed`, { pattern: '^fed\\.', 'apply-to': 'exchanges', definition });
    /** Whether `change` restarts fed.x <- up1: its stamp moves within WATCH_MS (the stamp counts seconds, so a second is let pass first). */
    const restarts = async (change: () => Promise<unknown>) => {
      const before = await waitFor(stamp, { deadlineMs: 30_000, what: 'fed.x <- up1 running' });
      const second = new Date().toISOString().slice(11, 19);
      await waitFor(() => new Date().toISOString().slice(11, 19) !== second, { intervalMs: 20 });
      await change();
      const moved = await waitFor(
        async () => {
          const now = await stamp();
          return now !== undefined && now !== before ? 'restarted' : undefined;
        },
        { deadlineMs: WATCH_MS, intervalMs: 50 },
      ).catch(() => 'kept');
      return moved === 'restarted';
    };
    await call('PUT', `vhosts/${d}`);
    await call('PUT', `vhosts/${encodeURIComponent(up)}`);
    try {
      await call('PUT', `exchanges/${d}/fed.x`, { type: 'topic', durable: true });
      for (const name of ['up1', 'up2'])
        await call('PUT', `parameters/federation-upstream/${d}/${name}`, { value: { uri } });
      await call('PUT', `parameters/federation-upstream-set/${d}/set1`, { value: [{ upstream: 'up1' }] });
      await call('PUT', `parameters/federation-upstream-set/${d}/set2`, { value: [{ upstream: 'up1' }] });
      await policy({ 'federation-upstream-set': 'set1' });
      const seen = {
        'another upstream created': await restarts(() =>
          call('PUT', `parameters/federation-upstream/${d}/up3`, { value: { uri } }),
        ),
        'the policy moved to another set of the same upstreams': await restarts(() =>
          policy({ 'federation-upstream-set': 'set2' }),
        ),
        'its set edited (an upstream added)': await restarts(() =>
          call('PUT', `parameters/federation-upstream-set/${d}/set2`, {
            value: [{ upstream: 'up1' }, { upstream: 'up2' }],
          }),
        ),
        'its policy edited (another key)': await restarts(() =>
          policy({ 'federation-upstream-set': 'set2', 'alternate-exchange': 'ae' }),
        ),
        'another set deleted': await restarts(() =>
          call('DELETE', `parameters/federation-upstream-set/${d}/set1`),
        ),
      };
      const again = {
        pattern: '^fed\\.',
        'apply-to': 'exchanges',
        definition: { 'federation-upstream-set': 'set2', 'alternate-exchange': 'ae' },
      };
      const recreated = {
        // The broker stores a PUT equal to the policy it holds and tells nobody (rabbit_runtime_parameters
        // set_any0, `{old, Term} -> ok`): "re-apply it as it is" restarts nothing.
        'the policy put again as it is': await restarts(() => call('PUT', `policies/${d}/fed`, again)),
        'the policy deleted and created again as it is': await restarts(async () => {
          await call('DELETE', `policies/${d}/fed`);
          await call('PUT', `policies/${d}/fed`, again);
        }),
      };
      expect(recreated).toEqual({
        'the policy put again as it is': false,
        'the policy deleted and created again as it is': true,
      });
      expect(seen).toEqual({
        'another upstream created': false,
        'the policy moved to another set of the same upstreams': true,
        'its set edited (an upstream added)': true,
        'its policy edited (another key)': true,
        'another set deleted': true,
      });
    } finally {
      await call('DELETE', `vhosts/${d}`).catch(() => undefined);
      await call('DELETE', `vhosts/${encodeURIComponent(up)}`).catch(() => undefined);
    }
  }, 120_000);
});
