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
  type HistoryQuery,
  ImpactTotalsSchema,
  IsoTime,
  isChange,
  LEFT_WORDS,
  type LinksEntry,
  type LinksRecord,
  type OutsideImpact,
  PolicyFieldsSchema,
  type ReviewRecord,
  reviewRecordId,
  type VerifyResult,
} from './types.ts';
export { approvalWords, breakGlassWords } from './whoWords.ts';
