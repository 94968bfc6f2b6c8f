/**
 * `links --against FILE` on 4.3.6 (scripts/broker-4.3): the team's file is the inventory. A
 * definitions export's policies and parameters, and the topology operator's Policy, Federation and
 * Shovel manifests, say which links should exist; what the broker runs is matched against that:
 * the file's link that does not run is missing, the broker's link the file does not ask for is
 * unexpected. On the brokers without the federation and shovel plugins (scripts/broker-plain,
 * scripts/broker-plain-4.3), the file's links are missing, each because its plugin is not enabled.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { links } from '../../src/commands/links/index.ts';
import { readDefinitions } from '../../src/definitions/index.ts';
import { brokerCredentials, waitFor } from '../support/broker.ts';
import { brokersUp, inVhostOn, PLAIN, PLAIN_43, type TestBroker, upOf } from '../support/brokers.ts';
import { built, repoRoot } from '../support/built.ts';
import { runBuiltRmq } from '../support/cli.ts';
import { amqpUrl } from '../support/messages.ts';

const { up } = await brokersUp();
const broker = up.find((b) => b.label === 'rabbitmq-4.3');
const { up: plain } = await upOf([PLAIN, PLAIN_43]);

describe.skipIf(!broker)('links --against FILE (4.3.6)', () => {
  const b = broker as TestBroker;

  it('an export and a folder of manifests each say which links should exist', async () => {
    await inVhostOn(b, 'links-against-up', async (upVhost, upClient) => {
      await inVhostOn(b, 'links-against', async (vhost, client) => {
        const { user, password } = brokerCredentials();
        const uri = amqpUrl(b, upVhost);
        for (const x of ['orders', 'refunds']) {
          await upClient.putExchange(upVhost, x, 'fanout');
          await client.putExchange(vhost, x, 'fanout');
        }
        // The broker runs a link for refunds only.
        await client.putParameter({
          component: 'federation-upstream',
          vhost: vhost,
          name: 'dc1',
          value: { uri },
        });
        await client.putPolicy('user', {
          vhost,
          name: 'fed-refunds',
          pattern: '^refunds$',
          applyTo: 'exchanges',
          priority: 0,
          definition: { 'federation-upstream': 'dc1' },
        });
        await waitFor(
          async () => {
            const r = await links({ vhost }, client, { env: 'test' });
            return r.counts.running === 1;
          },
          { what: 'the refunds link to run' },
        );
        // The file asks for orders instead, and a shovel.
        const exported = JSON.stringify({
          policies: [
            {
              vhost,
              name: 'fed-orders',
              pattern: '^orders$',
              'apply-to': 'exchanges',
              priority: 0,
              definition: { 'federation-upstream': 'dc1' },
            },
          ],
          parameters: [
            { component: 'federation-upstream', vhost, name: 'dc1', value: { uri } },
            {
              component: 'shovel',
              vhost,
              name: 'drain',
              value: { 'src-uri': 'amqp://', 'src-queue': 'a', 'dest-uri': 'amqp://', 'dest-queue': 'b' },
            },
          ],
        });
        const read = readDefinitions(exported);
        if (!read.ok) throw new Error(read.problem);
        const r = await links({ vhost, against: 'defs.json' }, client, { env: 'test', file: read.file });
        const rows = r.links.map((l) => [l.kind, l.object, l.upstream, l.state, l.expected]);
        expect(rows).toEqual(
          expect.arrayContaining([
            ['exchange', 'orders', 'dc1', 'missing', true],
            ['shovel', 'drain', null, 'missing', true],
            ['exchange', 'refunds', 'dc1', 'unexpected', false],
          ]),
        );
        expect(r.against).toBe('defs.json');

        // The same as manifests (a folder of them, as kubectl reads one), through what users run.
        const dir = mkdtempSync(join(tmpdir(), 'rmq-links-against-'));
        try {
          writeFileSync(
            join(dir, 'links.yaml'),
            [
              'kind: Policy',
              `spec: { name: fed-orders, vhost: ${JSON.stringify(vhost)}, pattern: "^orders$", applyTo: exchanges, definition: { federation-upstream: dc1 } }`,
              '---',
              'kind: Federation',
              `spec: { name: dc1, vhost: ${JSON.stringify(vhost)}, uriSecret: { name: dc1-uri } }`,
              '---',
              'kind: Shovel',
              `spec: { name: drain, vhost: ${JSON.stringify(vhost)}, uriSecret: { name: drain-uri }, srcQueue: a, destQueue: b }`,
            ].join('\n'),
          );
          const { bin } = await built();
          const run = await runBuiltRmq(
            bin,
            ['links', '--against', join(dir, 'links.yaml'), '--json'],
            { RMQ_URL: b.url, RMQ_USER: user, RMQ_PASSWORD: password },
            repoRoot,
          );
          expect(run.code, run.err).toBe(1);
          const doc = JSON.parse(run.out) as { vhosts: string[]; counts: Record<string, number> };
          expect(doc.vhosts).toEqual([vhost]);
          expect(doc.counts).toMatchObject({ expected: 2, missing: 2, unexpected: 1 });
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      });
    });
  }, 90_000);
});

describe.skipIf(plain.length === 0).each(plain)('links --against FILE where no plugin runs ($label)', (b) => {
  it("says each link of the file missing because its plugin is not enabled, not unknown; exit 1; the file's password not shown", async () => {
    await inVhostOn(b, 'links-noplugin', async (vhost, client) => {
      await client.putExchange(vhost, 'orders', 'fanout');
      const secret = 'Plugin-off-secret';
      const dir = mkdtempSync(join(tmpdir(), 'rmq-links-noplugin-'));
      try {
        const file = join(dir, 'definitions.json');
        writeFileSync(
          file,
          JSON.stringify({
            policies: [
              {
                vhost,
                name: 'fed',
                pattern: '^orders$',
                'apply-to': 'exchanges',
                priority: 0,
                definition: { 'federation-upstream': 'dc1' },
              },
            ],
            parameters: [
              {
                component: 'federation-upstream',
                vhost,
                name: 'dc1',
                value: { uri: `amqp://u:${secret}@far.example/v` },
              },
              {
                component: 'shovel',
                vhost,
                name: 'drain',
                value: { 'src-uri': 'amqp://', 'src-queue': 'a', 'dest-uri': 'amqp://', 'dest-queue': 'b' },
              },
            ],
          }),
        );
        const { bin } = await built();
        const { user, password } = brokerCredentials();
        const env = { RMQ_URL: b.url, RMQ_USER: user, RMQ_PASSWORD: password };
        const json = await runBuiltRmq(bin, ['links', '--against', file, '--json'], env, repoRoot);
        expect(json.code, json.err).toBe(1);
        const doc = JSON.parse(json.out) as {
          links: { kind: string; object: string; state: string; reason: string; next: string }[];
          counts: Record<string, number>;
        };
        expect(doc.links.map((l) => [l.kind, l.object, l.state, l.reason])).toEqual([
          ['exchange', 'orders', 'missing', 'the federation plugin is not enabled'],
          ['shovel', 'drain', 'missing', 'the shovel plugin is not enabled'],
        ]);
        expect(doc.links[1]?.next).toBe(
          'Enable rabbitmq_shovel and rabbitmq_shovel_management on every node.',
        );
        expect(doc.counts).toMatchObject({ expected: 2, missing: 2, unknown: 0 });
        const text = await runBuiltRmq(bin, ['links', '--against', file], env, repoRoot);
        expect(text.code, text.err).toBe(1);
        expect(text.out).toContain('MISSING    shovel "drain"');
        expect(text.out).toContain(
          'Enable rabbitmq_federation and rabbitmq_federation_management on every node.',
        );
        const failOn = await runBuiltRmq(
          bin,
          ['links', '--against', file, '--fail-on', 'missing'],
          env,
          repoRoot,
        );
        expect(failOn.code, failOn.err).toBe(4);
        for (const run of [json, text, failOn]) expect(run.out + run.err).not.toContain(secret);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }, 60_000);
});
