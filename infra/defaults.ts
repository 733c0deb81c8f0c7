/**
 * The defaults of a {@link CatalogSync} that belong to the deployment. The engine's settings, the run-log
 * days and the metrics namespace are the contract's (lambda/contract/settings.ts).
 */
import { Duration } from 'aws-cdk-lib';

/**
 * Memory of the function. 1,024 MB on arm64 gives about 0.58 vCPU (1,769 MB is one full vCPU; see the README's Performance section) for JSON parsing and TLS while the run is
 * mostly network-bound; peak heap is the page items of one slice, never leaf bodies.
 * TODO(bench): revisit with the benchmark's figures (bench/) once they are written.
 */
export const DEFAULT_MEMORY_MB = 1_024;

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
