/**
 * The backfill's vocabulary (contract: "Backfill"): the plan, its ranges and each range's state, and where
 * they are kept. A backfill cuts the catalog's pages into ranges of commits `(lo, hi]` that run in parallel
 * (a Step Functions Distributed Map on AWS, processes on one machine); when every range is done the cursor
 * moves to the plan's bound.
 */
import type { RunSummary } from './run-summary.js';

/** Sort-key prefix of a backfill's items in the cursor table: `backfill#<id>` and `backfill#<id>#range#<n>`. */
export const BACKFILL_SK_PREFIX = 'backfill#';

/** The sort key of a plan's item: `backfill#<id>`. */
export function backfillSortKey(backfillId: string): string {
  return `${BACKFILL_SK_PREFIX}${backfillId}`;
}

/** The sort key of a range's item: `backfill#<id>#range#<n>` (n decimal, unpadded, 0-based). */
export function rangeSortKey(backfillId: string, n: number): string {
  return `${BACKFILL_SK_PREFIX}${backfillId}#range#${n}`;
}

/** The key of a plan's ranges file (a JSON array of {@link BackfillRange}): `<prefix>backfill/<id>/ranges.json`. */
export function backfillRangesKey(prefix: string, backfillId: string): string {
  return `${prefix}backfill/${backfillId}/ranges.json`;
}

/**
 * The sort key of a cursor's "active plan" item: which plan of the cursor is being planned or run, so that two
 * planners at once make one plan (each claims it with a conditional write; the loser is told which plan runs).
 * Not under {@link BACKFILL_SK_PREFIX}: the newest-plan Query never sees it.
 */
export const BACKFILL_ACTIVE_SK = 'backfill-active';

/** Where a Distributed Map's ResultWriter writes the results of each map run: `<prefix>backfill/map-runs/`. */
export function backfillResultsPrefix(prefix: string): string {
  return `${prefix}backfill/map-runs/`;
}

/**
 * Step Functions passes at most 256 KiB (262,144 bytes) as a state's input or output. A batch of ranges (the
 * ItemBatcher's `MaxInputBytesPerBatch`) is kept to 192 KiB of it: the child execution's state adds its result.
 */
export const MAX_BATCH_INPUT_BYTES = 192 * 1024;

/**
 * The most bytes one range item (as JSON) may take: a batch of the default 4 ranges fits
 * {@link MAX_BATCH_INPUT_BYTES}. A plan with a larger range is refused (it could not be handed to a worker).
 */
export const MAX_RANGE_ITEM_BYTES = MAX_BATCH_INPUT_BYTES / 4;

/**
 * A range is closed once its own pages take this many bytes as JSON, whatever their leaves (a feed of small pages
 * would otherwise make huge items): with the lookahead (a page or two) it stays below {@link MAX_RANGE_ITEM_BYTES}.
 * On nuget.org (about 300 bytes a page of up to 550 leaves) that is about 100 pages, 50,000 leaves.
 */
export const RANGE_PAGE_BYTES = 32 * 1024;

/** The largest `rangeLeaves` a plan takes (`--range-leaves`, the execution's input). */
export const MAX_RANGE_LEAVES = 100_000;

/** A page as a range worker needs it: enough to fetch it with the stale-copy rule, without the index. */
export interface BackfillPage {
  readonly url: string;
  readonly commitId: string;
  /** The page's newest commit, as the index entry wrote it. */
  readonly commitTimeStamp: string;
  readonly count: number;
}

/** One item of the plan: what the Distributed Map hands a worker. */
export interface BackfillRange {
  readonly backfillId: string;
  /** 0-based. */
  readonly n: number;
  /** Exclusive bound, 7 fractional digits. */
  readonly lo: string;
  /** Inclusive bound, 7 fractional digits. */
  readonly hi: string;
  /** Sum of its own pages' counts: an estimate for progress. */
  readonly leaves: number;
  /**
   * Its own pages (newest commit in (lo, hi]) oldest first, then the lookahead: every page whose newest commit is
   * the smallest one after hi (a commit split across pages may continue there).
   */
  readonly pages: readonly BackfillPage[];
}

/** A plan's status. */
export const BackfillStatus = { running: 'running', finished: 'finished', abandoned: 'abandoned' } as const;
/** One of {@link BackfillStatus}'s values. */
export type BackfillStatus = (typeof BackfillStatus)[keyof typeof BackfillStatus];

/** A backfill's plan: the item `backfill#<id>` (or the local plan file), without the ranges. */
export interface BackfillPlan {
  /** A kuuid id: plans of one cursor sort by time. */
  readonly backfillId: string;
  readonly cursorName: string;
  readonly source: string;
  readonly prefix: string;
  /** The stored cursor when planned: range 0's lo (7 fractional digits). */
  readonly start: string;
  /** B: the index head when planned, or `--until` (7 fractional digits). */
  readonly bound: string;
  /** How many ranges. */
  readonly ranges: number;
  /** Sum of the ranges' leaf estimates. */
  readonly leaves: number;
  /** ISO time. */
  readonly createdAt: string;
  readonly status: BackfillStatus;
  /**
   * Epoch ms until which the backfill holds off the follower of its cursor: someone works on the plan until then,
   * so another planner is refused; a plan whose lease lapsed is taken up again by the next planner.
   */
  readonly leaseUntil: number;
  /**
   * Who took the lease last, when a planner named itself (the CLI: `<pid>@<host>`, taken over when that process is
   * gone; on AWS the execution's ARN, named to a second execution).
   */
  readonly leaseHolder?: string;
  /** The `until` the plan was asked for (7 digits), when one was given: a rerun asking another is refused. */
  readonly until?: string;
  /** The `rangeLeaves` the ranges were cut with: a rerun asking another is refused. */
  readonly rangeLeaves?: number;
  /** ISO time, once abandoned (`backfill --abandon`): its ranges are never run again. */
  readonly abandonedAt?: string;
  /** ISO time, once finished. */
  readonly finishedAt?: string;
  /** The run summary the finish logged, once finished: a second finish returns it. */
  readonly summary?: RunSummary;
}

/** What a range has stored so far (and a run summary's counters). */
export interface BackfillTotals {
  readonly commits: number;
  readonly leaves: number;
  readonly deletes: number;
  readonly quarantined: number;
  readonly bytes: number;
}

/** Totals of nothing. */
export const ZERO_TOTALS: BackfillTotals = { commits: 0, leaves: 0, deletes: 0, quarantined: 0, bytes: 0 };

/** The sum of two totals. */
export function addTotals(a: BackfillTotals, b: BackfillTotals): BackfillTotals {
  return {
    commits: a.commits + b.commits,
    leaves: a.leaves + b.leaves,
    deletes: a.deletes + b.deletes,
    quarantined: a.quarantined + b.quarantined,
    bytes: a.bytes + b.bytes,
  };
}

/** A range's state: the item `backfill#<id>#range#<n>` (or the local range file). */
export interface RangeState extends BackfillTotals {
  readonly n: number;
  readonly done: boolean;
  /** Newest commit of the range completed so far (7 digits): the resume point. */
  readonly progress?: string;
  readonly progressCommitId?: string;
  /** ISO time of the last write. */
  readonly updatedAt: string;
}
