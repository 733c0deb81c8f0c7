/**
 * What `catalog-sync backfill` and its worker processes say to each other over the IPC channel (plain JSON:
 * no bigint crosses it). The parent hands out one range at a time; a worker reports progress and the outcome.
 */
import type { BackfillRange } from '../../contract/index.js';
import type { RangeOutcome } from '../index.js';
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

/** Parent to worker. */
export type ToWorker =
  | { readonly type: 'init'; readonly options: WorkerOptions }
  | { readonly type: 'range'; readonly range: BackfillRange }
  /** Stop the range in hand at once (its progress checkpointed), then wait for `exit`. */
  | { readonly type: 'stop' }
  | { readonly type: 'exit' };

/** Worker to parent. */
export type FromWorker =
  | { readonly type: 'ready' }
  /** Totals of the range in hand so far (this attempt only). */
  | {
      readonly type: 'progress';
      readonly n: number;
      readonly commits: number;
      readonly leaves: number;
      readonly bytes: number;
    }
  | { readonly type: 'outcome'; readonly outcome: RangeOutcome }
  | { readonly type: 'failed'; readonly n: number; readonly message: string; readonly code?: string };
