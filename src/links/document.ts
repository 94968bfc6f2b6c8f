import { advisoriesFor } from './advisories.ts';
import { classify, countLinks } from './classify.ts';
import { expectedLinks } from './expected.ts';
import { linkRisks } from './risks.ts';
import type { LinkRow, LinkState, LinksDocument, LinksWorld } from './types.ts';

/** The order rows are shown in: what needs a person first, the running ones last. */
const STATE_ORDER: readonly LinkState[] = [
  'missing',
  'stopped',
  'stuck',
  'unknown',
  'unexpected',
  'starting',
  'running',
];

const byConcern = (a: LinkRow, b: LinkRow) =>
  STATE_ORDER.indexOf(a.state) - STATE_ORDER.indexOf(b.state) ||
  a.vhost.localeCompare(b.vhost) ||
  a.kind.localeCompare(b.kind) ||
  a.object.localeCompare(b.object) ||
  (a.upstream ?? '').localeCompare(b.upstream ?? '');

/**
 * The whole answer from what the broker reports: every link that should exist and what runs,
 * matched and classified, the worst first; the risky settings; the advisories for its version.
 * A pure function of its input: the watcher and the planner call it as the command does.
 */
export function linksDocument(world: LinksWorld): LinksDocument {
  const expected = world.expected ?? expectedLinks(world);
  const links = classify(expected, world.reported, world.plugins, world.now).sort(byConcern);
  return {
    links,
    risks: linkRisks(world.upstreams, world.shovels, expected),
    advisories: advisoriesFor(world.version),
    counts: countLinks(links),
  };
}
