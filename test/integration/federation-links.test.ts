/**
 * Federation links on the running brokers: reading them on a broker without the federation
 * plugin (the machine's), as every preview does.
 */
import { describe, expect, it } from 'vitest';
import { brokersUp, inVhostOn } from '../support/brokers.ts';

const { up } = await brokersUp();
const machine = up.find((b) => b.label === 'machine');

describe.skipIf(!machine)("federation on a broker without the plugin (the machine's)", () => {
  it('reads no links, for / and for any other vhost, instead of failing on the 400 or 406 it answers', async () => {
    await inVhostOn(machine!, 'nofed', async (vhost, client) => {
      expect(await client.federation(vhost)).toEqual({
        upstreams: new Set(),
        upstreamSets: new Set(),
        links: null,
      });
      expect((await client.federation('/')).links).toBeNull();
    });
  });
});
