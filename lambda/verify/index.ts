/**
 * The verify wing's engine: the audit of a mirror against the catalog, and its repair; the drift report of the
 * private feed against the mirror, and its repair. Faces (the CLI's `verify`) import it through this module.
 */
export { auditMirror, type AuditDeps, type AuditFinding, type AuditOptions, type AuditSummary } from './audit.js';
export { repairCommits, type RepairOutcome } from './audit-repair.js';
export {
  auditFeed,
  type FeedAudit,
  type FeedAuditOptions,
  type FeedAuditSummary,
  type FeedAuditTarget,
} from './feed-audit.js';
export { describeFeedFinding, isDrift, type FeedEntryField, type FeedFinding } from './feed-findings.js';
export { repairFeed } from './feed-repair.js';
