import { atLeast, type BrokerVersion } from '../policy/index.ts';
import type { AdvisoryVerdict } from './types.ts';

/**
 * The security advisories for links, as data: each with the releases that fixed it (one per
 * series), the source it was read from and when. A version is affected when its series has a
 * later fix, or when it is older than every fixed series; a series newer than every fix is not.
 * An advisory whose source names no fixed release affects every version: nothing here shows a
 * release safe, and its advice ("unless patched") then holds for all.
 */
export interface Advisory {
  readonly id: string;
  /** `major.minor.patch` of each series' first fixed release; empty when the source gives none. */
  readonly fixedIn: readonly string[];
  readonly why: string;
  readonly source: string;
  /** When the source was read (YYYY-MM-DD). */
  readonly read: string;
}

const RUNBOOK = 'AceMQ, RabbitMQ federation and shovel runbook (the operating checklist)';
const READ = '2026-12-05';

export const LINK_ADVISORIES: readonly Advisory[] = [
  {
    id: 'GHSA-6gmw-wxch-cvvc',
    fixedIn: ['3.13.19', '4.0.24', '4.1.15', '4.2.10', '4.3.5'],
    why: 'monitoring users could read shovel source and destination passwords through the HTTP API; rotate link credentials after patching.',
    source: RUNBOOK,
    read: READ,
  },
  {
    id: 'GHSA-x5h5-588r-cv55',
    fixedIn: ['3.13.15', '4.0.20', '4.1.11', '4.2.6', '4.3.0'],
    why: 'AMQP 1.0 shovel URI passwords were shown in the shovel status.',
    source: RUNBOOK,
    read: READ,
  },
  {
    id: 'GHSA-42pc-678q-v8qj',
    fixedIn: ['3.13.18', '4.0.24', '4.1.14', '4.2.9', '4.3.3'],
    why: 'a federation upstream with a direct connection skipped vhost authorization: a policymaker of one vhost could drain messages of another.',
    source: RUNBOOK,
    read: READ,
  },
  {
    id: 'GHSA-g5v3-w5xg-62q2',
    fixedIn: ['4.3.0'],
    why: 'a user with only the monitoring tag could restart federation links (4.3.0 requires policymaker).',
    source: RUNBOOK,
    read: READ,
  },
  {
    id: 'GHSA-7jc3-73v6-rjvc',
    fixedIn: ['4.3.0'],
    why: 'a user with only the monitoring tag could delete or restart dynamic shovels (4.3.0 requires policymaker).',
    source: RUNBOOK,
    read: READ,
  },
  {
    id: 'GHSA-9wm4-9m6g-w38x',
    fixedIn: [],
    why: 'DEBUG logging wrote decrypted shovel URIs to the logs: keep DEBUG off on nodes running shovels unless patched.',
    source: RUNBOOK,
    read: READ,
  },
  {
    id: 'GHSA-q44f-9vc5-grh7',
    fixedIn: [],
    why: 'crash reports wrote decrypted shovel URIs to the logs.',
    source: RUNBOOK,
    read: READ,
  },
];

const parse = (v: string): BrokerVersion => {
  const [major = 0, minor = 0, patch = 0] = v.split('.').map(Number);
  return { major, minor, patch };
};

/** Whether `version` is affected (every version, when no fixed release is known). */
export function affected(a: Advisory, version: BrokerVersion): boolean {
  if (a.fixedIn.length === 0) return true;
  const fixes = a.fixedIn.map(parse);
  const series = fixes.find((f) => f.major === version.major && f.minor === version.minor);
  if (series) return !atLeast(version, series.major, series.minor, series.patch);
  const newest = fixes.reduce((a, b) => (atLeast(a, b.major, b.minor) ? a : b));
  return !atLeast(version, newest.major, newest.minor);
}

/** What `fixedIn` says of an advisory whose source names no fixed release. */
export const NO_FIX_KNOWN = 'no fixed release known: every version taken as affected';

/** An advisory's fix, in words: "fixed in 4.0.24, 4.3.5", or that none is known. */
export const fixWords = (v: AdvisoryVerdict): string =>
  v.fixedIn === NO_FIX_KNOWN ? 'no fixed release known' : `fixed in ${v.fixedIn}`;

/** Every advisory judged against the broker's version (`affected: null` throughout when it is not known). */
export function advisoriesFor(
  version: BrokerVersion | null,
  table: readonly Advisory[] = LINK_ADVISORIES,
): AdvisoryVerdict[] {
  return table.map((a) => ({
    id: a.id,
    affected: version ? affected(a, version) : null,
    fixedIn: a.fixedIn.length ? a.fixedIn.join(', ') : NO_FIX_KNOWN,
    why: a.why,
    source: `${a.source}, read ${a.read}`,
  }));
}
