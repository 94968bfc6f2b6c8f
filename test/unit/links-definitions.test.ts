import { describe, expect, it } from 'vitest';
import { readDefinitions } from '../../src/definitions/index.ts';

/** The definitions reader keeps the parameters that ask for links: `links --against FILE`. */
describe('the parameters that ask for links, read from a file', () => {
  it("keeps an export's federation upstreams, sets and shovels with their values, the rest counted", () => {
    const read = readDefinitions(
      JSON.stringify({
        policies: [],
        parameters: [
          { component: 'federation-upstream', vhost: 'v', name: 'up', value: { uri: 'amqp://u:p@h' } },
          { component: 'federation-upstream-set', vhost: 'v', name: 's', value: [{ upstream: 'up' }] },
          { component: 'shovel', vhost: 'w', name: 'sh', value: { 'src-queue': 'a' } },
          { component: 'vhost-limits', vhost: 'v', name: 'limits', value: {} },
        ],
      }),
    );
    if (!read.ok) throw new Error(read.problem);
    expect(read.file.parameters.map((p) => [p.component, p.vhost, p.name, p.at])).toEqual([
      ['federation-upstream', 'v', 'up', 'parameters[0]'],
      ['federation-upstream-set', 'v', 's', 'parameters[1]'],
      ['shovel', 'w', 'sh', 'parameters[2]'],
    ]);
    expect(read.file.parameters[1]?.value).toEqual([{ upstream: 'up' }]);
  });

  it("reads the topology operator's Federation and Shovel manifests, vhost / by default", () => {
    const read = readDefinitions(
      [
        'kind: Federation',
        'spec: { name: up, vhost: v, uriSecret: { name: s }, ackMode: on-confirm }',
        '---',
        'kind: Shovel',
        'spec: { name: sh, srcQueue: a, uriSecret: { name: t } }',
      ].join('\n'),
    );
    if (!read.ok) throw new Error(read.problem);
    expect(read.file.parameters).toEqual([
      {
        component: 'federation-upstream',
        vhost: 'v',
        name: 'up',
        value: { 'ack-mode': 'on-confirm' },
        at: 'document 1',
        uriSecret: 's',
      },
      {
        component: 'shovel',
        vhost: '/',
        name: 'sh',
        value: { 'src-queue': 'a' },
        at: 'document 2',
        uriSecret: 't',
      },
    ]);
  });

  it('keeps only the vhost asked for', () => {
    const read = readDefinitions(
      JSON.stringify({
        parameters: [
          { component: 'shovel', vhost: 'v', name: 'a', value: {} },
          { component: 'shovel', vhost: 'w', name: 'b', value: {} },
        ],
      }),
      { vhost: 'w' },
    );
    if (!read.ok) throw new Error(read.problem);
    expect(read.file.parameters.map((p) => p.name)).toEqual(['b']);
  });
});
