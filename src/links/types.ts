import type { BrokerVersion, Policy } from '../policy/index.ts';

/**
 * What the links rules read and say. Everything in is what the broker reports (or a definitions
 * file says), already parsed; everything out is plain data, the `links --json` document's parts.
 */

/** A federation link serves an exchange or a queue; a shovel is named by its parameter. */
export type LinkKind = 'exchange' | 'queue' | 'shovel';

/**
 * `missing` and `unexpected` are never a status the broker gives: they are the difference between
 * what should run and what is reported. `unknown`: the running links could not be read.
 */
export type LinkState = 'running' | 'starting' | 'stuck' | 'stopped' | 'missing' | 'unexpected' | 'unknown';

/** An exchange or queue, with the user policy in force as the broker reports it (`null`: none). */
export interface LinkedObject {
  readonly vhost: string;
  readonly name: string;
  readonly kind: 'exchange' | 'queue';
  readonly policy: string | null;
  /** An internal exchange (`amq.rabbitmq.trace`): the plugin federates none (4.0.5, 4.3.6). */
  readonly internal?: boolean;
}

/** A runtime parameter as the broker stores it: a federation upstream, an upstream set, a shovel. */
export interface Parameter {
  readonly vhost: string;
  readonly name: string;
  readonly value: unknown;
}

/** What asks for links: the objects and their policies in force, and the parameters. */
export interface LinkSources {
  readonly objects: readonly LinkedObject[];
  /** The user policies of the vhosts (operator policies carry no federation keys). */
  readonly policies: readonly Policy[];
  readonly upstreams: readonly Parameter[];
  readonly upstreamSets: readonly Parameter[];
  readonly shovels: readonly Parameter[];
}

/** What a policy names that the vhost does not have: the link cannot start. */
export interface AbsentTarget {
  readonly what: 'upstream' | 'upstream-set';
  readonly name: string;
  /** The upstream set that named the upstream, when one did. */
  readonly set?: string;
}

/** A link that should exist. */
export interface ExpectedLink {
  readonly kind: LinkKind;
  readonly vhost: string;
  /** The federated exchange or queue; a shovel's name. */
  readonly object: string;
  /** The upstream (federation); null for a shovel, or for an upstream set that does not exist. */
  readonly upstream: string | null;
  /** The policy that asks for it; null for a shovel. */
  readonly policy: string | null;
  /** Set when what the policy names does not exist: the link cannot run. */
  readonly absent?: AbsentTarget;
}

/** A federation link as `GET /api/federation-links` reports it (any node). */
export interface ReportedFederationLink {
  readonly vhost: string;
  readonly kind: 'exchange' | 'queue';
  readonly object: string;
  readonly upstream: string;
  readonly node: string | null;
  /** As the broker gives it: `starting`, `running`, `shutdown`, `error`. */
  readonly status: string;
  /** The broker's error, as written. */
  readonly error: string | null;
  /** The broker's `timestamp` (when the link took this status), as written: `2026-12-05 0:20:26`. */
  readonly timestamp: string | null;
}

/** A shovel as `GET /api/shovels` reports it. */
export interface ReportedShovel {
  readonly vhost: string;
  readonly name: string;
  readonly node: string | null;
  /** `dynamic` (a `shovel` parameter) or `static` (a node's configuration). */
  readonly type: string;
  /** As the broker gives it: `starting`, `running`, `terminated`. */
  readonly state: string;
  readonly reason: string | null;
  readonly timestamp: string | null;
}

/** What runs, as reported; `null` with the reason when it could not be read. */
export interface Reported {
  readonly federation: readonly ReportedFederationLink[] | null;
  readonly federationWhy?: string;
  readonly shovels: readonly ReportedShovel[] | null;
  readonly shovelsWhy?: string;
}

/** Whether each plugin is enabled; undefined when not known. */
export interface LinkPlugins {
  readonly federation: boolean | undefined;
  readonly shovel: boolean | undefined;
}

/** A link as the watch recorded it down. */
export interface WatchedDown {
  /** `missing`, `stopped` or `stuck`, at the watch's last reading that saw it down. */
  readonly state: string;
  /** When the watch first saw it not running (ISO). */
  readonly since: string;
  /** The broker's last error for it while down, as written (masked); null or absent: none seen. */
  readonly error?: string | null;
}

/** What `links` reads of the bot's watch of one environment. */
export interface LinksAsWatched {
  /**
   * When the watch's unbroken run of readings began (ISO): before it, no reading saw the link, so
   * no record says it did not run then.
   */
  readonly from: string;
  /** The links recorded down, by linkKey. */
  readonly down: ReadonlyMap<string, WatchedDown>;
}

/** Everything one `links` answer reads. */
export interface LinksWorld extends LinkSources {
  readonly reported: Reported;
  readonly plugins: LinkPlugins;
  /** The broker's version, for the advisories; null when not known. */
  readonly version: BrokerVersion | null;
  /** Now, in ms since the epoch (a link `starting` for over a minute is stuck). */
  readonly now: number;
  /**
   * The expected links instead of those the sources ask for (`--against FILE`: what the file
   * says should exist). The risks still read `upstreams` and `shovels`.
   */
  readonly expected?: readonly ExpectedLink[];
  /** What the bot's watch recorded of the links down (src/links/watched.ts); absent: not read. */
  readonly watched?: LinksAsWatched;
}

/** One row of the answer: a link that should exist, runs, or both. */
export interface LinkRow {
  readonly kind: LinkKind;
  readonly vhost: string;
  readonly object: string;
  readonly upstream: string | null;
  readonly policy: string | null;
  readonly expected: boolean;
  readonly state: LinkState;
  readonly node: string | null;
  /** The broker's error (as written), or why the link is missing. */
  readonly reason: string | null;
  /** The broker's status as written; null when nothing is reported. */
  readonly status: string | null;
  /** The runbook's next step, one line; null for a running link. */
  readonly next: string | null;
}

/** A setting of an upstream or a shovel that loses or piles up messages. */
export interface LinkRisk {
  readonly kind: 'upstream' | 'shovel';
  readonly vhost: string;
  readonly name: string;
  readonly key: string;
  /** The value as set (URIs masked); null when the default is the risk. */
  readonly value: unknown;
  readonly why: string;
}

export interface AdvisoryVerdict {
  readonly id: string;
  /** null: the broker's version was not read, so nothing is claimed. */
  readonly affected: boolean | null;
  readonly fixedIn: string;
  readonly why: string;
  readonly source: string;
}

export interface LinkCounts {
  readonly expected: number;
  readonly running: number;
  readonly starting: number;
  readonly missing: number;
  readonly stopped: number;
  readonly stuck: number;
  readonly unexpected: number;
  readonly unknown: number;
}

/** The `links` answer's rules part: the command adds `env` and `vhosts`. */
export interface LinksDocument {
  readonly links: readonly LinkRow[];
  readonly risks: readonly LinkRisk[];
  readonly advisories: readonly AdvisoryVerdict[];
  readonly counts: LinkCounts;
}
