/**
 * The verify wing's engine: the audit of a mirror against the catalog, and its repair. Faces (the CLI's `verify`)
 * import it through this module.
 */
export { auditMirror, type AuditDeps, type AuditFinding, type AuditOptions, type AuditSummary } from './audit.js';
export { repairCommits, type RepairOutcome } from './audit-repair.js';
