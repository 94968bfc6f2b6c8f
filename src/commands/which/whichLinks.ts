import { classify, expectedLinks, type LinkRow, type Parameter, type Reported } from '../../links/index.ts';
import type { Policy } from '../../policy/index.ts';

/** What `which` reads of the broker for an object's links (ManagementClient has it; a fake may not). */
export interface WhichLinksBroker {
  parameters?(
    component: 'federation-upstream' | 'federation-upstream-set',
    vhost: string,
  ): Promise<Parameter[]>;
  federationLinkList?(vhost: string): Promise<Reported['federation'] | string>;
  plugins?(): Promise<ReadonlySet<string> | undefined>;
}

/**
 * The federation links of one object whose policy in force sets a federation key: each that
 * should run, whether it runs and on which node (src/links/, as `links` says it). Three requests,
 * asked only for such an object. `notRead`: why the running links could not be read.
 */
export async function linksOfObject(
  broker: WhichLinksBroker,
  object: { vhost: string; name: string; kind: 'exchange' | 'queue' },
  policy: Policy,
  now: number,
): Promise<{ links: LinkRow[]; notRead?: string } | undefined> {
  if (!broker.parameters || !broker.federationLinkList) return undefined;
  const [upstreams, upstreamSets, reported] = await Promise.all([
    broker.parameters('federation-upstream', object.vhost),
    broker.parameters('federation-upstream-set', object.vhost),
    broker.federationLinkList(object.vhost),
  ]);
  const expected = expectedLinks({
    objects: [{ ...object, policy: policy.name }],
    policies: [policy],
    upstreams,
    upstreamSets,
    shovels: [],
  });
  const mine = typeof reported === 'string' || reported === null ? null : reported;
  // Not served: the management part is off; the plugin itself, when the broker says so.
  const plugins = reported === null ? await broker.plugins?.().catch(() => undefined) : undefined;
  const links = classify(
    expected,
    {
      federation: mine?.filter((l) => l.kind === object.kind && l.object === object.name) ?? null,
      ...(typeof reported === 'string' ? { federationWhy: reported } : {}),
      shovels: [],
    },
    { federation: plugins?.has('federation'), shovel: undefined },
    now,
  );
  return typeof reported === 'string' ? { links, notRead: reported } : { links };
}
