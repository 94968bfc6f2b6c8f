/** The entrance of audit/: what the other folders of src/ use of it (inside, modules import each other directly). */
export { MAX_LINE_BYTES, MAX_LOG_BYTES, readAuditLog } from './log.ts';
export {
  expectedAfter,
  inShowingOrder,
  type Observation,
  type ObservedQueue,
  queuesToWatch,
  type WatchedQueue,
  WatchedQueueSchema,
  worthListing,
} from './observed.ts';
export { acceptedWords, observationWords, observedQueueWords } from './observedWords.ts';
export {
  madeAt,
  type Replayed,
  type ReplaySource,
  replay,
  type Span,
  type StateAt,
  stateAt,
} from './replay.ts';
export { gapWords, madeBetweenWords, snapshotWords } from './sealWords.ts';
export {
  AuditTrail,
  type AuditTrailOptions,
  canonicalJson,
  type LoggedRecords,
  recordDigest,
  recordHash,
} from './trail.ts';
export {
  type AgainstLog,
  type AuditEntry,
  type AuditObject,
  AuditObjectSchema,
  type AuditRecord,
  type ChangeEntry,
  type ChangeRecord,
  type FreezeRecord,
  type GapRecord,
  type HistoryQuery,
  ImpactTotalsSchema,
  IsoTime,
  isChange,
  LEFT_WORDS,
  type LinkRef,
  type LinksEntry,
  type LinksRecord,
  MAX_LINKS_KEPT,
  type OutsideImpact,
  PolicyFieldsSchema,
  type ReviewRecord,
  reviewRecordId,
  type SnapshotEntry,
  type SnapshotRecord,
  StepLinksSchema,
  type StoredLinks,
  subjectWords,
  type VerifyResult,
} from './types.ts';
export { approvalWords, breakGlassWords } from './whoWords.ts';
