/**
 * The consumer's reader (`catalog-sync/consumer`), in a process of its own (started with --expose-gc), against a
 * fake S3 in the servers child with a latency per request: `commits` manifests of nuget.org's shape (1-5 leaves,
 * about 3 a commit) and a watermark are PUT, then `readCommits` reads them all back in order, `readAhead` GETs in
 * flight. Reported: commits/s and leaves/s (leaf entries delivered; bodies are read on demand, not here), the GETs
 * and LISTs, and the live heap (after full GCs) and RSS sampled every tenth of the way: flat means the read-ahead,
 * not the mirror's size, bounds memory.
 */
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { commitKey, formatTimestamp } from '../lambda/contract/index.js';
import { readCommits, type Mirror } from '../lambda/consumer/index.js';
import { awsClients, S3SnapshotStore } from '../lambda/stores/index.js';
import { mulberry32 } from '../testkit/index.js';
import { round } from './stats.js';

/** argv[2] of this process. */
export interface ConsumerReaderConfig {
  readonly s3Endpoint: string;
  readonly bucket: string;
  readonly commits: number;
  readonly readAhead: number;
  readonly s3LatencyMs: number;
  readonly seed: number;
}

/** What the reader did. */
export interface ConsumerReaderResult {
  readonly commits: number;
  readonly leaves: number;
  readonly readAhead: number;
  readonly s3LatencyMs: number;
  readonly wallMs: number;
  readonly commitsPerSec: number;
  readonly leavesPerSec: number;
  readonly fillMs: number;
  /** Live heap (MB, after full GCs) and RSS (MB) at each tenth of the read. */
  readonly heapMB: readonly number[];
  readonly rssMB: readonly number[];
  readonly cpuMs: number;
}

const gc = (globalThis as { gc?: () => void }).gc;

async function main(): Promise<void> {
  const config = JSON.parse(process.argv[2]!) as ConsumerReaderConfig;
  // As the consumer's own stores build it (awsConsumerStores, the CLI): a lean-client pool of readAhead + 2.
  process.env.AWS_ENDPOINT_URL_S3 = config.s3Endpoint;
  process.env.S3_FORCE_PATH_STYLE = 'true';
  const { s3: client, dynamo } = awsClients(process.env, config.readAhead);
  dynamo.destroy();
  const random = mulberry32(config.seed);
  // Commits a second apart from 2020 on, 1-5 leaves each (mean 3).
  const base = 637_134_336_000_000_000n;
  const fillStarted = performance.now();
  let leaves = 0;
  let next = 0;
  let watermark: unknown;
  const put = async (): Promise<void> => {
    while (next < config.commits) {
      const i = next++;
      const ticks = base + BigInt(i) * 10_000_000n + BigInt(random.int(0, 9_999_999));
      const key = commitKey(ticks);
      const count = random.int(1, 5);
      leaves += count;
      const manifest = {
        commitId: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
        commitTimeStamp: formatTimestamp(ticks),
        leaves: Array.from({ length: count }, (_, n) => ({
          key: `leaves/${key}/package.${i}.${n}/1.0.${n}.json`,
          id: `Package.${i}.${n}`,
          version: `1.0.${n}`,
          type: 'PackageDetails',
        })),
      };
      await client.send(
        new PutObjectCommand({
          Bucket: config.bucket,
          Key: `commits/${key}.json`,
          Body: JSON.stringify(manifest),
          ContentType: 'application/json',
        }),
      );
      if (i === config.commits - 1)
        watermark = {
          cursor: formatTimestamp(ticks),
          commitId: manifest.commitId,
          commitKey: key,
          updatedAt: new Date().toISOString(),
        };
    }
  };
  await Promise.all(Array.from({ length: 128 }, () => put()));
  // The watermark last, once every manifest is stored, as the follower writes it.
  await client.send(
    new PutObjectCommand({ Bucket: config.bucket, Key: 'watermark.json', Body: JSON.stringify(watermark) }),
  );
  const fillMs = performance.now() - fillStarted;

  const mirror: Mirror = {
    store: new S3SnapshotStore(config.bucket, client),
    prefix: '',
    where: `s3://${config.bucket}/`,
  };
  const heapMB: number[] = [];
  const rssMB: number[] = [];
  const sample = (): void => {
    gc?.();
    heapMB.push(round(process.memoryUsage().heapUsed / 1024 / 1024, 1));
    rssMB.push(round(process.memoryUsage().rss / 1024 / 1024, 1));
  };
  const tenth = Math.max(1, Math.floor(config.commits / 10));
  const cpu0 = process.cpuUsage();
  let read = 0;
  let readLeaves = 0;
  let previous = '';
  let pausedMs = 0;
  const started = performance.now();
  for await (const commit of readCommits(mirror, { readAhead: config.readAhead })) {
    if (commit.commitKey <= previous) throw new Error(`out of order: ${commit.commitKey} after ${previous}`);
    previous = commit.commitKey;
    read++;
    readLeaves += commit.leaves.length;
    if (read % tenth === 0) {
      // The samples' full GCs are not the reader's time.
      const pause = performance.now();
      sample();
      pausedMs += performance.now() - pause;
    }
  }
  const wallMs = performance.now() - started - pausedMs;
  const cpu = process.cpuUsage(cpu0);
  if (read !== config.commits || readLeaves !== leaves)
    throw new Error(`read ${read} commits and ${readLeaves} leaves of ${config.commits} and ${leaves}`);
  const result: ConsumerReaderResult = {
    commits: read,
    leaves: readLeaves,
    readAhead: config.readAhead,
    s3LatencyMs: config.s3LatencyMs,
    wallMs: round(wallMs, 0),
    commitsPerSec: round(read / (wallMs / 1000), 0),
    leavesPerSec: round(readLeaves / (wallMs / 1000), 0),
    fillMs: round(fillMs, 0),
    heapMB,
    rssMB,
    cpuMs: round((cpu.user + cpu.system) / 1000, 0),
  };
  client.destroy();
  process.send!({ type: 'result', result }, () => process.exit(0));
}

void main().catch((error: unknown) => {
  process.send?.({ type: 'error', error: String((error as Error)?.stack ?? error) }, () => process.exit(1));
});
