/** The entrance of links/: what the other folders of src/ use of it (inside, modules import each other directly). */
export { type Advisory, advisoriesFor, fixWords, LINK_ADVISORIES } from './advisories.ts';
export {
  classify,
  countLinks,
  maskReason,
  NO_LINKS,
  reasonFromBroker,
  STUCK_AFTER_MS,
  timestampMs,
} from './classify.ts';
export { linksDocument } from './document.ts';
export { expectedLinks, linkKey, linksChanged, setMembers, upstreamsWanted } from './expected.ts';
export { type LinkFacts, nextStep, recreateCommand, recreatePolicyOf } from './nextStep.ts';
export { linkRisks, shovelRisks, upstreamRisks, uriHost } from './risks.ts';
export type {
  AbsentTarget,
  AdvisoryVerdict,
  ExpectedLink,
  LinkCounts,
  LinkedObject,
  LinkKind,
  LinkPlugins,
  LinkRisk,
  LinkRow,
  LinkSources,
  LinkState,
  LinksAsWatched,
  LinksDocument,
  LinksWorld,
  Parameter,
  Reported,
  ReportedFederationLink,
  ReportedShovel,
  WatchedDown,
} from './types.ts';
export { STARTING_RETRIES_WORDS, stuckAsWatched } from './watched.ts';
