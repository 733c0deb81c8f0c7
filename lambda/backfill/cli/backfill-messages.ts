/**
 * What `catalog-sync backfill` hands its worker processes when they start (the messages themselves are the pool's,
 * lambda/runtime/cli/worker-messages.ts): the flags that build the same settings and stores as the parent.
 */
import type { RunOptions } from '../../runtime/cli/options.js';

/** The flags a worker needs to build the same settings and stores as the parent. */
export type WorkerOptions = Pick<
  RunOptions,
  | 'source'
  | 'cursorName'
  | 'dependsOn'
  | 'cursorTable'
  | 'bucket'
  | 'prefix'
  | 'dataDir'
  | 'start'
  | 'concurrency'
  | 'quarantine'
  | 'allowOrigin'
  | 'include'
  | 'exclude'
  | 'verbose'
> & {
  /** The parent's lease holder (`<pid>@<host>`): a worker renews the plan's lease only while it is the parent's. */
  readonly leaseHolder?: string;
};
