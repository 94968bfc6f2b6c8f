#!/usr/bin/env node
/**
 * bench/cliFloor: the floor `rmq which NAME --vhost V` is measured against in bench/cli.ts. A bare
 * Node process that makes the same five calls `which` makes, as `which` makes them, with Node's
 * own HTTP client and nothing of the project's: `/api/overview`, the queue, the vhost's policies
 * and operator policies at once on a keep-alive agent, then the exchange the queue dead-letters
 * to; each answer read whole and `JSON.parse`d; one line written; exit 0.
 *
 *   RMQ_URL=… RMQ_USER=… RMQ_PASSWORD=… node bench/cliFloor.cjs NAME VHOST
 *
 * CommonJS, as `bin/rmq.js` is: an ES module entry costs every Node start ~3 ms more (its loader),
 * which would lower the ratio without `rmq` doing anything faster. Any status but 200 (404 for the
 * exchange) fails it, so a fast wrong answer is no figure; a broker that does not answer in 10 s too.
 */
'use strict';
const http = require('node:http');

const [name, vhost] = process.argv.slice(2);
if (!name || !vhost || !process.env.RMQ_URL) {
  process.stderr.write('usage: RMQ_URL=… RMQ_USER=… RMQ_PASSWORD=… node bench/cliFloor.cjs NAME VHOST\n');
  process.exit(2);
}
const url = new URL(process.env.RMQ_URL);
const user = process.env.RMQ_USER ?? 'guest';
const password = process.env.RMQ_PASSWORD ?? 'guest';
const authorization = `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
const agent = new http.Agent({ keepAlive: true });
const v = encodeURIComponent(vhost);

/** The answer's JSON, or null for a 404 where `missingOk`. */
function get(path, missingOk = false) {
  return new Promise((resolve, reject) => {
    const req = http.get(
      { hostname: url.hostname, port: url.port, path, agent, headers: { authorization }, timeout: 10_000 },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => {
          body += chunk;
        });
        res.on('end', () => {
          if (res.statusCode === 200) resolve(JSON.parse(body));
          else if (res.statusCode === 404 && missingOk) resolve(null);
          else reject(new Error(`GET ${path}: HTTP ${res.statusCode}`));
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`GET ${path}: no answer in 10 s`)));
    req.on('error', reject);
  });
}

async function main() {
  const [overview, queue, policies] = await Promise.all([
    get('/api/overview?disable_stats=true'),
    get(`/api/queues/${v}/${encodeURIComponent(name)}`),
    get(`/api/policies/${v}`),
    get(`/api/operator-policies/${v}`),
  ]);
  // The dead-letter exchange the queue uses, from the broker's statistics (bench/cli waits for them).
  const dlx = queue.effective_policy_definition?.['dead-letter-exchange'];
  if (typeof dlx !== 'string')
    throw new Error(`the broker reports no dead-letter exchange for ${name} (yet)`);
  const exchange = await get(`/api/exchanges/${v}/${encodeURIComponent(dlx)}`, true);
  process.stdout.write(
    `${name} in ${vhost} (broker ${overview.rabbitmq_version}): ${queue.policy}, ${policies.length} policies; dead-letter exchange ${dlx}${exchange ? '' : ' (missing)'}\n`,
  );
  agent.destroy();
}

main().catch((err) => {
  process.stderr.write(`cliFloor: ${err.message}\n`);
  process.exitCode = 1;
  agent.destroy();
});
