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
 * Range workers the backfill's Distributed Map runs at once (its `MaxConcurrency`). One worker makes about 320
 * leaves/s, bound by its 32 leaves in flight at about 100 ms a leaf (GET and PUT), not by its vCPU (which would
 * allow about 900 at 1.1 ms of CPU a leaf), so 24 workers could take about 7,680 leaves/s. What binds is S3: a
 * new bucket takes 3,500 PUT/s per prefix partition, so nuget.org's 12 million leaves (16 million PUTs with the
 * manifests) take about 77 minutes on a new bucket, whatever the concurrency, and about 27 minutes only on a
 * bucket S3 has already split (bench/backfill-estimate.ts; docs/backfill.md, Figures). The workers take the 503
 * SlowDowns as back-pressure. The load on the source: at most 7,680 GETs/s, never more than 24 × CONCURRENCY
 * (32) = 768 requests in flight. The account needs 24 concurrent Lambda executions for the workers, plus the
 * planner or finalizer and the follower (docs/deploy.md, Backfill).
 */
export const DEFAULT_BACKFILL_MAX_CONCURRENCY = 24;

/**
 * Ranges per worker invocation (the ItemBatcher's `MaxItemsPerBatch`). A range is about 5,000 leaves, about
 * 17 s of one worker: 4 ranges make an invocation of about a minute, so cold starts and state transitions are
 * few, while the last batches still spread over every worker.
 */
export const DEFAULT_BACKFILL_BATCH_SIZE = 4;

/**
 * Memory of the range worker: 1,769 MB is one full vCPU. The worker is bound by its leaves in flight, with its CPU
 * about a third busy at the measured 1.1 ms a leaf; the full vCPU is headroom (TLS, large leaves), unmeasured
 * smaller sizes being no proven saving.
 */
export const DEFAULT_BACKFILL_WORKER_MEMORY_MB = 1_769;

/** Time limit of one worker invocation: Lambda's most. A batch not done by then is looped back (checkpointed). */
export const DEFAULT_BACKFILL_WORKER_TIMEOUT = Duration.minutes(15);

/** How often one batch may come back not done before the execution fails (each pass runs up to the timeout). */
export const DEFAULT_BACKFILL_MAX_PASSES = 20;
