import { advisoriesFor } from './advisories.ts';
import { classify, countLinks } from './classify.ts';
import { expectedLinks } from './expected.ts';
import { linkRisks } from './risks.ts';
import type { LinkRow, LinkState, LinksDocument, LinksWorld } from './types.ts';
import { stuckAsWatched } from './watched.ts';

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

/** By code unit, as the broker sorts its listings (not by locale: cheaper, and the same everywhere). */
const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

const RANK = Object.fromEntries(STATE_ORDER.map((s, i) => [s, i])) as Record<LinkState, number>;

const byConcern = (a: LinkRow, b: LinkRow) =>
  RANK[a.state] - RANK[b.state] ||
  compare(a.vhost, b.vhost) ||
  compare(a.kind, b.kind) ||
  compare(a.object, b.object) ||
  compare(a.upstream ?? '', b.upstream ?? '');

/**
 * The whole answer from what the broker reports: every link that should exist and what runs,
 * matched and classified, the worst first; the risky settings; the advisories for its version.
 * A pure function of its input: the watcher and the planner call it as the command does.
 */
export function linksDocument(world: LinksWorld): LinksDocument {
  const expected = world.expected ?? expectedLinks(world);
  const rows = classify(expected, world.reported, world.plugins, world.now);
  const links = (world.watched ? stuckAsWatched(rows, world.watched, world.now) : rows).sort(byConcern);
  return {
    links,
    risks: linkRisks(world.upstreams, world.shovels, expected),
    advisories: advisoriesFor(world.version),
    counts: countLinks(links),
  };
}
