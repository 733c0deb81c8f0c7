/**
 * The private feed's rows (feed-row.ts): what they measured, and how they are printed, with the rate and fixed cost
 * read from the two latency-bound rows.
 */
import type { DemoFeed } from './feed-mirror.js';
import type { FeedScenarioResult } from './feed-scenario.js';
import { BUCKET_LATENCY } from './latency-bucket.js';

const MB = 1_000_000;

/** One measured run, with its rates. */
export type FeedRun = FeedScenarioResult & {
  readonly packagesPerSec: number;
  readonly mbPerSec: number;
  /** S3 only: requests the run made (through the front), per package. */
  readonly s3RequestsPerPackage?: number;
  /** The source's CPU during the run (its own process). */
  readonly sourceCpuMs: number;
  /** s3rver rows only: s3rver's and its front's CPU during the run (this process). */
  readonly serverCpuMs?: number;
  /** The machine's cores kept busy by the run's processes together: (run + source + server CPU) / wall time. */
  readonly coresBusy: number;
};

/**
 * The latency-bound rows over 200 and over 1,000 packages read as `wall = fixed + bytes / rate`: the rate once a run is
 * under way, and the fixed cost of a run (its first requests before a package moves, its last after the last one).
 */
export interface SteadyState {
  readonly bareMbPerSec: number;
  readonly feedMbPerSec: number;
  /** feed / bare, in MB/s once under way. */
  readonly ratio: number;
  readonly bareFixedMs: number;
  readonly feedFixedMs: number;
}

/** The bare loop and the feed on one place, the bulk of packages. */
export interface FeedBulkRows {
  readonly bare: FeedRun;
  readonly engine: FeedRun;
  /** engine / bare, in packages/s (the same packages, so also in MB/s). */
  readonly ratio: number;
}

/** The bare loop and the feed on one place: the bulk of packages, then the one near 250 MB. */
export interface FeedPlaceRows extends FeedBulkRows {
  readonly largeBare: FeedRun;
  /** The feed's run of the large package alone: its peak RSS is the figure. */
  readonly large: FeedRun;
  readonly largeRatio: number;
}

/** What the rows measured. */
export interface FeedRows {
  readonly packages: number;
  readonly bytes: number;
  readonly above10MbShare: number;
  readonly largest: number;
  readonly concurrency: number;
  readonly packagesAtOnce: number;
  readonly largeMib: number;
  readonly s3Latency: string;
  /** S3 as AWS's latency bounds it: the in-memory bucket (latency-bucket.ts), the bulk only (absent: not run). */
  readonly latencyBound?: FeedBulkRows;
  /** The same over `longPackages` packages, `longLarge` of them near 250 MB (absent when 0). */
  readonly latencyBoundLong?: FeedBulkRows;
  /** From the two latency-bound rows (absent without the long one). */
  readonly steadyState?: SteadyState;
  /** The machine's cores. */
  readonly cores: number;
  /** Absent when the run measured the latency-bound rows only. */
  readonly s3?: FeedPlaceRows;
  readonly folder?: FeedPlaceRows;
  readonly demo?: DemoFeed;
}

/** See {@link SteadyState}. */
export function steadyStateOf(short: FeedBulkRows, long: FeedBulkRows): SteadyState {
  const lineThrough = (a: FeedRun, b: FeedRun) => {
    const msPerByte = (b.wallMs - a.wallMs) / (b.bytes - a.bytes);
    return { mbPerSec: round(1 / (msPerByte * 1000)), fixedMs: Math.round(a.wallMs - a.bytes * msPerByte) };
  };
  const bare = lineThrough(short.bare, long.bare);
  const feed = lineThrough(short.engine, long.engine);
  return {
    bareMbPerSec: bare.mbPerSec,
    feedMbPerSec: feed.mbPerSec,
    ratio: round(feed.mbPerSec / bare.mbPerSec),
    bareFixedMs: bare.fixedMs,
    feedFixedMs: feed.fixedMs,
  };
}

/** The rows as text. */
export function feedText(rows: FeedRows): string {
  const line = (name: string, r: FeedRun) =>
    `    ${name.padEnd(40)} ${String(r.packagesPerSec).padStart(7)} pkg/s ${String(r.mbPerSec).padStart(7)} MB/s  ${String(r.cpuMs).padStart(6)} CPU-ms  peak RSS ${r.maxRssMb} MB${r.s3RequestsPerPackage === undefined ? '' : `  ${r.s3RequestsPerPackage} S3 requests a package`}  (source ${r.sourceCpuMs}${r.serverCpuMs === undefined ? '' : `, s3rver ${r.serverCpuMs}`} CPU-ms; ${r.coresBusy} of ${rows.cores} cores busy)`;
  const bulk = (name: string, r: FeedBulkRows) => [
    `  ${name}`,
    line('bare loop', r.bare),
    line('feed consumer', r.engine),
    `    feed / bare: ${r.ratio} (target >= 0.8)`,
  ];
  const kinds = (r: FeedRun) =>
    r.requests === undefined
      ? []
      : [
          `    the feed's requests a package: ${Object.entries(r.requests)
            .sort(([a], [b]) => (a < b ? -1 : 1))
            .map(([kind, n]) => `${kind} ${round(n / r.packages)}`)
            .join(', ')}`,
        ];
  const place = (name: string, r: FeedPlaceRows) => [
    ...bulk(name, r),
    line(`one ${rows.largeMib} MiB package, bare loop`, r.largeBare),
    line(`one ${rows.largeMib} MiB package, feed consumer`, r.large),
    `    feed / bare: ${r.largeRatio} (target >= 0.8); the feed's peak RSS ${r.large.maxRssMb} MB (target <= 256)`,
  ];
  const d = rows.demo;
  return [
    `Private feed: ${rows.packages} packages, ${Math.round(rows.bytes / MB)} MB (mean ${(rows.bytes / rows.packages / MB).toFixed(2)} MB, ${(rows.above10MbShare * 100).toFixed(1)}% above 10 MB, largest ${Math.round(rows.largest / MB)} MB); ${rows.concurrency} downloads at once (the feed: ${rows.packagesAtOnce} packages at once); source 20 ms a request`,
    ...(rows.latencyBound === undefined
      ? []
      : [
          ...bulk(`S3, latency-bound (in memory, ${BUCKET_LATENCY}: as on AWS)`, rows.latencyBound),
          ...kinds(rows.latencyBound.engine),
        ]),
    ...(rows.latencyBoundLong === undefined
      ? []
      : bulk(
          `S3, latency-bound, ${rows.latencyBoundLong.bare.packages} packages, ${(rows.latencyBoundLong.bare.bytes / MB).toFixed(0)} MB (mean ${(rows.latencyBoundLong.bare.bytes / rows.latencyBoundLong.bare.packages / MB).toFixed(2)} MB; with --long-large packages near 250 MB: the issue's own mix, a backlog)`,
          rows.latencyBoundLong,
        )),
    ...(rows.steadyState === undefined
      ? []
      : [
          `  S3, latency-bound, once under way (the two rows as wall = fixed + bytes / rate): bare ${rows.steadyState.bareMbPerSec} MB/s, feed ${rows.steadyState.feedMbPerSec} MB/s, feed / bare ${rows.steadyState.ratio}; fixed cost of a run: bare ${rows.steadyState.bareFixedMs} ms, feed ${rows.steadyState.feedFixedMs} ms`,
        ]),
    ...(rows.s3 === undefined
      ? []
      : place(`S3: s3rver behind a front, ${rows.s3Latency} (the AWS SDK's own requests)`, rows.s3)),
    ...(rows.folder === undefined ? [] : place('folder', rows.folder)),
    ...(d === undefined
      ? []
      : [
          `  demo catalog (${d.commits} commits, ${d.packages} packages, folder): built in ${d.buildMs} ms; feed/ ${d.feedObjects} files, ${(d.feedBytes / MB).toFixed(2)} MB; feed-state/ ${d.stateObjects} files, ${(d.stateBytes / MB).toFixed(2)} MB`,
        ]),
  ].join('\n');
}

const round = (value: number): number => Math.round(value * 100) / 100;
