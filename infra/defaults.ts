/**
 * The defaults of a {@link CatalogSync} that belong to the deployment. The engine's settings, the run-log
 * days and the metrics namespace are the contract's (lambda/contract/settings.ts).
 */
import { Duration } from 'aws-cdk-lib';

/**
 * Memory of the function: the setting that makes a million leaves cheapest, and of the cheapest the fastest
 * (`bench/lambda-cost.ts` from the benchmark's 0.89 ms of CPU a leaf; docs/performance.md, "Cost on Lambda").
 * Lambda gives CPU in proportion to memory (one vCPU at 1,769 MB), so below the knee where the network binds
 * (about 510 MB: 32 leaves in flight over 100 ms of GET + PUT) GB-seconds per leaf do not depend on memory;
 * above it the function waits longer than it computes and costs more for nothing. Peak RSS of a 30,000-leaf
 * slice is 135 MB. Raise it with `memoryMb` if your leaves are larger or your network faster.
 */
export const DEFAULT_MEMORY_MB = 512;

/**
 * Time limit of one run. The handler stops taking new work 5–30 s before it (see `safetyMarginMs`), then
 * checkpoints. Five minutes is one schedule tick, so runs never pile up.
 * TODO(bench): revisit with the benchmark's figures (bench/) once they are written.
 */
export const DEFAULT_TIMEOUT = Duration.minutes(5);

/** Time between two runs. */
export const DEFAULT_SCHEDULE = Duration.minutes(5);

/** How long a scheduled event may wait to be run before it is dropped (to the DLQ): the next tick takes over. */
export const DEFAULT_MAX_EVENT_AGE = Duration.minutes(2);

/** Cursor lag above which the lag alarm fires (after `lagAlarmPeriods` schedule periods in a row). */
export const DEFAULT_LAG_THRESHOLD = Duration.hours(1);

/**
 * Range workers the backfill's Distributed Map runs at once (its `MaxConcurrency`). One worker at one vCPU takes
 * about 300 leaves/s (the engine's measured rate; CPU-bound, not network-bound), so 24 workers take about
 * 7,200 leaves/s: nuget.org's 12 million leaves in about 28 minutes. That is also the load on the source: about
 * 7,200 GETs/s, and never more than 24 × CONCURRENCY (32) = 768 requests in flight; and about 7,200 PUTs/s into
 * S3, twice what one S3 prefix partition takes (3,500/s) until S3 splits it: the workers take the 503 SlowDowns
 * as back-pressure. 24 of the account's 1,000 default Lambda concurrency. (docs/deploy.md, Backfill.)
 */
export const DEFAULT_BACKFILL_MAX_CONCURRENCY = 24;

/**
 * Ranges per worker invocation (the ItemBatcher's `MaxItemsPerBatch`). A range is about 5,000 leaves, about
 * 17 s of one worker: 4 ranges make an invocation of about a minute, so cold starts and state transitions are
 * few, while the last batches still spread over every worker.
 */
export const DEFAULT_BACKFILL_BATCH_SIZE = 4;

/** Memory of the range worker: 1,769 MB is one full vCPU, and the worker is CPU-bound (JSON parsing, TLS). */
export const DEFAULT_BACKFILL_WORKER_MEMORY_MB = 1_769;

/** Time limit of one worker invocation: Lambda's most. A batch not done by then is looped back (checkpointed). */
export const DEFAULT_BACKFILL_WORKER_TIMEOUT = Duration.minutes(15);

/** How often one batch may come back not done before the execution fails (each pass runs up to the timeout). */
export const DEFAULT_BACKFILL_MAX_PASSES = 20;
