/**
 * The command line of `npm run bench`: its usage text and the flags, parsed and checked into {@link Options}.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { DEFAULT_CONCURRENCY } from '../lambda/contract/index.js';

const here = dirname(fileURLToPath(import.meta.url));
/** bench/ in the source tree (dist/bench/ -> ../../bench). */
const benchSource = join(here, '..', '..', 'bench');

const HELP = `npm run bench -- [options]

  --latency MS              catalog replica latency per request                    (default 20)
  --s3-latency MS           fake S3 latency per request                            (default 15)
  --cursor-latency MS       in-memory cursor store latency per call                (default 5)
  --concurrency N           leaves in flight (engine and ceiling)                  (default: DEFAULT_CONCURRENCY)
  --leaves N                slice of the side-by-side runs: ceilings, engine, engine on DynamoDB (default 5000)
  --rss-leaves LIST         engine slices for peak RSS vs slice size; '' to skip   (default 10000,30000)
  --sequential-leaves N     sample of the sequential algorithm (its rate is flat)  (default 300)
  --leaves-per-commit A-B   commit sizes of the main catalog                       (default 1-20)
  --nuget-leaves N          the headline: nuget.org's shape, 1-4-leaf commits (mean 2.5), sequential, SDK
                            ceiling and engine on a slice of N leaves; 0: skip     (default 4000: ~1,600 commits)
  --nuget-s3-latency MS     fake S3 latency per request of the nuget-shaped rows   (default 30)
  --tail-leaves N           slice of the tail-latency rows (1% of PUTs 300 ms; 1 in 1,000 PUTs 5 s); 0: skip
                                                                                   (default 16000)
  --sweep LIST              concurrencies to sweep; '' to skip                     (default 8,16,32,64)
  --sweep-leaves N          slice of each sweep run                                (default 2000)
  --planning-pages N        pages of the synthesized index                         (default 25000)
  --backfill-leaves N       catalog of the backfill rows (one follower vs N workers); 0: skip (default 10000)
  --backfill-workers LIST   worker processes of each backfill row                  (default 1,2,4)
  --range-leaves N          target leaves per range in the backfill rows           (default 1000)
  --reader-commits N        manifests the consumer reader reads (at 20 ms a GET); 0: skip (default 50000)
  --reader-read-ahead N     the reader's manifests in flight                       (default: DEFAULT_READ_AHEAD)
  --consumer-commits N      commits a consumer at its defaults reads, against the reader alone (folder, s3rver + DynamoDB); 0: skip (default 4000)
  --view-commits N          commits the latest view keeps and rebuilds (20-50 ms a request); 0: skip (default 2000)
  --view-folder-commits N   commits of the latest view's folder row (with --view-commits); 0: skip (default 4000)
  --large-leaves N          leaves of the large-leaf row: one commit, 512 MB Lambda's memory; 0: skip (default 48)
  --large-leaf-mib N        MiB of each of its leaves                              (default 24)
  --feed-packages N         packages of the private feed's rows (nuget.org's sizes); 0: skip (default 200)
  --feed-large N            of them, packages near 250 MB                          (default 0)
  --feed-large-mib N        MiB of the large package's rows (peak RSS)             (default 250)
  --feed-concurrency N      downloads in flight, the feed's and the bare loop's    (default 16, the feed's)
  --feed-demo               also the feed of the demo catalog: its size and build time (about 2 min more)
  --dynamo auto|on|off      also run the engine against DynamoDB Local             (default auto)
  --no-warm                 skip the warm-Lambda checks
  --no-start-up             skip the start-up rows (CLI commands, the Lambda bundle's cold start)
  --verify-leaves N         mirror audited by the verify rows (S3 listing by ranges, folder, --deep); 0: skip (default 20000)
  --no-profile              skip the profiled runs (engine and planning under --cpu-prof)
  --profile-leaves N        slice of the profiled engine run                       (default 2000)
  --repeat N                run the side-by-side set (ceilings, engine) N times, rotating their order; the
                            table shows each one's median run                      (default 1)
  --wait-idle S             before each scenario, wait up to S s for other processes to go quiet (default 0)
  --out DIR                 where results go                                       (default bench/results)
  --seed N                  catalog seed                                           (default 42)
`;

/** The command line, parsed and checked. */
export interface Options {
  latency: number;
  s3Latency: number;
  cursorLatency: number;
  concurrency: number;
  leaves: number;
  rssLeaves: number[];
  sequentialLeaves: number;
  leavesPerCommit: [number, number];
  nugetLeaves: number;
  nugetS3Latency: number;
  tailLeaves: number;
  sweep: number[];
  sweepLeaves: number;
  planningPages: number;
  backfillLeaves: number;
  backfillWorkers: number[];
  rangeLeaves: number;
  readerCommits: number;
  readerReadAhead: number;
  consumerCommits: number;
  viewCommits: number;
  viewFolderCommits: number;
  largeLeaves: number;
  largeLeafMib: number;
  feedPackages: number;
  feedLarge: number;
  feedLargeMib: number;
  feedConcurrency: number;
  feedDemo: boolean;
  dynamo: 'auto' | 'on' | 'off';
  warm: boolean;
  startUp: boolean;
  verifyLeaves: number;
  profile: boolean;
  profileLeaves: number;
  waitIdle: number;
  repeat: number;
  out: string;
  seed: number;
}

/** Parses `process.argv` (prints the usage and exits 0 on --help; throws on a bad value). */
export function options(): Options {
  const { values } = parseArgs({
    options: {
      latency: { type: 'string', default: '20' },
      's3-latency': { type: 'string', default: '15' },
      'cursor-latency': { type: 'string', default: '5' },
      concurrency: { type: 'string', default: String(DEFAULT_CONCURRENCY) },
      leaves: { type: 'string', default: '5000' },
      'rss-leaves': { type: 'string', default: '10000,30000' },
      'sequential-leaves': { type: 'string', default: '300' },
      'leaves-per-commit': { type: 'string', default: '1-20' },
      'nuget-leaves': { type: 'string', default: '4000' },
      'nuget-s3-latency': { type: 'string', default: '30' },
      'tail-leaves': { type: 'string', default: '16000' },
      sweep: { type: 'string', default: '8,16,32,64' },
      'sweep-leaves': { type: 'string', default: '2000' },
      'planning-pages': { type: 'string', default: '25000' },
      'backfill-leaves': { type: 'string', default: '10000' },
      'backfill-workers': { type: 'string', default: '1,2,4' },
      'range-leaves': { type: 'string', default: '1000' },
      'reader-commits': { type: 'string', default: '50000' },
      'reader-read-ahead': { type: 'string', default: '64' },
      'consumer-commits': { type: 'string', default: '4000' },
      'view-commits': { type: 'string', default: '2000' },
      'view-folder-commits': { type: 'string', default: '4000' },
      'large-leaves': { type: 'string', default: '48' },
      'large-leaf-mib': { type: 'string', default: '24' },
      'feed-packages': { type: 'string', default: '200' },
      'feed-large': { type: 'string', default: '0' },
      'feed-large-mib': { type: 'string', default: '250' },
      'feed-concurrency': { type: 'string', default: '16' },
      'feed-demo': { type: 'boolean', default: false },
      dynamo: { type: 'string', default: 'auto' },
      'no-warm': { type: 'boolean', default: false },
      'no-start-up': { type: 'boolean', default: false },
      'verify-leaves': { type: 'string', default: '20000' },
      'no-profile': { type: 'boolean', default: false },
      'profile-leaves': { type: 'string', default: '2000' },
      'wait-idle': { type: 'string', default: '0' },
      repeat: { type: 'string', default: '1' },
      out: { type: 'string', default: join(benchSource, 'results') },
      seed: { type: 'string', default: '42' },
      help: { type: 'boolean', default: false },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(HELP);
    process.exit(0);
  }
  const int = (name: string, text: string, min = 0): number => {
    if (!/^\d+$/.test(text.trim()) || Number(text) < min)
      throw new Error(`--${name}: ${JSON.stringify(text)} must be a whole number >= ${min}`);
    return Number(text);
  };
  const list = (name: string, text: string): number[] =>
    text.trim() === '' ? [] : text.split(',').map((part) => int(name, part.trim(), 1));
  const range = /^(\d+)-(\d+)$/.exec(values['leaves-per-commit']);
  if (!range || Number(range[1]) < 1 || Number(range[2]) < Number(range[1]))
    throw new Error('--leaves-per-commit must be A-B with 1 <= A <= B');
  const dynamo = values.dynamo;
  if (dynamo !== 'auto' && dynamo !== 'on' && dynamo !== 'off') throw new Error('--dynamo must be auto, on or off');
  return {
    latency: int('latency', values.latency),
    s3Latency: int('s3-latency', values['s3-latency']),
    cursorLatency: int('cursor-latency', values['cursor-latency']),
    concurrency: int('concurrency', values.concurrency, 1),
    leaves: int('leaves', values.leaves, 1),
    rssLeaves: list('rss-leaves', values['rss-leaves']),
    sequentialLeaves: int('sequential-leaves', values['sequential-leaves'], 1),
    leavesPerCommit: [Number(range[1]), Number(range[2])],
    nugetLeaves: int('nuget-leaves', values['nuget-leaves']),
    nugetS3Latency: int('nuget-s3-latency', values['nuget-s3-latency']),
    tailLeaves: int('tail-leaves', values['tail-leaves']),
    sweep: list('sweep', values.sweep),
    sweepLeaves: int('sweep-leaves', values['sweep-leaves'], 1),
    planningPages: int('planning-pages', values['planning-pages'], 2),
    backfillLeaves: int('backfill-leaves', values['backfill-leaves']),
    backfillWorkers: list('backfill-workers', values['backfill-workers']),
    rangeLeaves: int('range-leaves', values['range-leaves'], 1),
    readerCommits: int('reader-commits', values['reader-commits']),
    readerReadAhead: int('reader-read-ahead', values['reader-read-ahead'], 1),
    consumerCommits: int('consumer-commits', values['consumer-commits']),
    viewCommits: int('view-commits', values['view-commits']),
    viewFolderCommits: int('view-folder-commits', values['view-folder-commits']),
    largeLeaves: int('large-leaves', values['large-leaves']),
    largeLeafMib: int('large-leaf-mib', values['large-leaf-mib'], 1),
    feedPackages: int('feed-packages', values['feed-packages'], 0),
    feedLarge: int('feed-large', values['feed-large'], 0),
    feedLargeMib: int('feed-large-mib', values['feed-large-mib'], 1),
    feedConcurrency: int('feed-concurrency', values['feed-concurrency'], 1),
    feedDemo: values['feed-demo'],
    dynamo,
    warm: !values['no-warm'],
    startUp: !values['no-start-up'],
    verifyLeaves: int('verify-leaves', values['verify-leaves'], 0),
    profile: !values['no-profile'],
    profileLeaves: int('profile-leaves', values['profile-leaves'], 1),
    waitIdle: int('wait-idle', values['wait-idle']),
    repeat: int('repeat', values.repeat, 1),
    out: values.out,
    seed: int('seed', values.seed),
  };
}
