/**
 * A named consumer at its defaults against the reader alone (issue 29, part 2), in a process of its own, on the same
 * mirror of nuget.org's shape (1-5 leaves a commit, about 3): in a local folder, and in s3rver with the cursors in
 * DynamoDB Local (or dynalite), as `npm run bench` starts them. On each store, in rounds that alternate (the machine's
 * load drifts): `readCommits` alone, and `consume` at its defaults (a checkpoint every 64 commits or every second,
 * and when caught up), each commit turned into its JSON line as `changes --json` does; the median round of each.
 * Then, for reference, `consume` with a checkpoint after every commit (the old default) over the last
 * `everyOneCommits` commits. Alone: `node dist/bench/consumer-defaults.js '{"commits":4000,...}'` (with
 * AWS_ENDPOINT_URL_DYNAMODB set for the second store).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { consume, readCommits, type Mirror } from '../lambda/consumer/index.js';
import { commitKey, formatTimestamp } from '../lambda/contract/index.js';
import {
  awsClients,
  DynamoStore,
  LocalStore,
  S3SnapshotStore,
  type CursorStore,
  type SnapshotStore,
} from '../lambda/stores/index.js';
import { createBucket, createCursorTable, mulberry32, startS3, uniqueName } from '../testkit/index.js';
import { round, timed } from './stats.js';

/** argv[2] of this process. */
export interface ConsumerDefaultsConfig {
  readonly commits: number;
  readonly rounds: number;
  readonly everyOneCommits: number;
  readonly seed: number;
  /** DynamoDB Local's endpoint; without it the S3 + DynamoDB store is skipped. */
  readonly dynamoEndpoint?: string;
}

/** One store's figures. */
export interface ConsumerDefaultsStore {
  readonly store: string;
  readonly commits: number;
  readonly leaves: number;
  readonly reader: {
    readonly commitsPerSec: number;
    readonly cpuMsPer1000: number;
    readonly rounds: readonly number[];
  };
  readonly defaults: {
    readonly commitsPerSec: number;
    readonly cpuMsPer1000: number;
    readonly checkpoints: number;
    readonly rounds: readonly number[];
  };
  /** `defaults.commitsPerSec / reader.commitsPerSec`. */
  readonly ratio: number;
  /** A checkpoint after every commit, over the last `commits` of the mirror. */
  readonly everyOne: { readonly commits: number; readonly commitsPerSec: number; readonly cpuMsPer1000: number };
}

/** What this process measured. */
export interface ConsumerDefaultsResult {
  readonly stores: readonly ConsumerDefaultsStore[];
}

/** Manifests of nuget.org's shape: a commit a second from 2020 on, 1-5 leaves each (mean 3). */
async function fill(store: SnapshotStore, commits: number, seed: number): Promise<{ leaves: number; keys: string[] }> {
  const random = mulberry32(seed);
  const base = 637_134_336_000_000_000n;
  const keys: string[] = [];
  let leaves = 0;
  let next = 0;
  let watermark: unknown;
  const put = async (): Promise<void> => {
    while (next < commits) {
      const i = next++;
      const ticks = base + BigInt(i) * 10_000_000n + BigInt(random.int(0, 9_999_999));
      const key = commitKey(ticks);
      keys[i] = key;
      const count = random.int(1, 5);
      leaves += count;
      const commitId = `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
      const manifest = {
        commitId,
        commitTimeStamp: formatTimestamp(ticks),
        leaves: Array.from({ length: count }, (_, n) => ({
          key: `leaves/${key}/package.${i}.${n}/1.0.${n}.json`,
          id: `Package.${i}.${n}`,
          version: `1.0.${n}`,
          type: 'PackageDetails',
        })),
      };
      await store.putJson(`commits/${key}.json`, manifest);
      if (i === commits - 1)
        watermark = { cursor: formatTimestamp(ticks), commitId, commitKey: key, updatedAt: new Date().toISOString() };
    }
  };
  await Promise.all(Array.from({ length: 64 }, () => put()));
  await store.putJson('watermark.json', watermark);
  return { leaves, keys };
}

/** What every handler does with a commit: its JSON line, as `changes --json` writes it (to nowhere). */
let sink = 0;
const line = (commit: unknown): void => void (sink += JSON.stringify(commit).length);

async function measure(
  label: string,
  mirror: Mirror,
  cursors: CursorStore,
  config: ConsumerDefaultsConfig,
  fillLeaves: number,
  keys: readonly string[],
): Promise<ConsumerDefaultsStore> {
  const reader: { rate: number; cpu: number }[] = [];
  const defaults: { rate: number; cpu: number; checkpoints: number }[] = [];
  for (let round = 0; round < config.rounds; round++) {
    const read = await timed(async () => {
      let n = 0;
      for await (const commit of readCommits(mirror)) {
        line(commit);
        n++;
      }
      return n;
    });
    if (read.result !== config.commits)
      throw new Error(`${label}: the reader read ${read.result} of ${config.commits} commits`);
    reader.push({ rate: config.commits / (read.wallMs / 1000), cpu: read.cpuMs });
    const consumed = await timed(() => consume(`bench-defaults-${round}`, line, { mirror, cursors }));
    if (consumed.result.commits !== config.commits)
      throw new Error(`${label}: the consumer handled ${consumed.result.commits} of ${config.commits} commits`);
    defaults.push({
      rate: config.commits / (consumed.wallMs / 1000),
      cpu: consumed.cpuMs,
      checkpoints: consumed.result.checkpoints,
    });
  }
  const median = <T extends { rate: number }>(runs: T[]): T =>
    [...runs].sort((a, b) => a.rate - b.rate)[Math.floor((runs.length - 1) / 2)]!;
  const r = median(reader);
  const d = median(defaults);
  const tail = Math.min(config.everyOneCommits, config.commits);
  const everyOne = await timed(() =>
    consume('bench-every-one', line, {
      mirror,
      cursors,
      checkpointEvery: 1,
      start: { after: keys[config.commits - tail - 1]! },
    }),
  );
  if (everyOne.result.commits !== tail)
    throw new Error(`${label}: every-one handled ${everyOne.result.commits} of ${tail} commits`);
  return {
    store: label,
    commits: config.commits,
    leaves: fillLeaves,
    reader: {
      commitsPerSec: round(r.rate, 0),
      cpuMsPer1000: round((r.cpu / config.commits) * 1000, 0),
      rounds: reader.map((run) => round(run.rate, 0)),
    },
    defaults: {
      commitsPerSec: round(d.rate, 0),
      cpuMsPer1000: round((d.cpu / config.commits) * 1000, 0),
      checkpoints: d.checkpoints,
      rounds: defaults.map((run) => round(run.rate, 0)),
    },
    ratio: round(d.rate / r.rate, 2),
    everyOne: {
      commits: tail,
      commitsPerSec: round(tail / (everyOne.wallMs / 1000), 0),
      cpuMsPer1000: round((everyOne.cpuMs / tail) * 1000, 0),
    },
  };
}

async function main(): Promise<void> {
  const config = JSON.parse(process.argv[2]!) as ConsumerDefaultsConfig;
  const stores: ConsumerDefaultsStore[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'catalog-sync-consumer-bench-'));
  try {
    // The folder: filled without fsync (not measured), read and consumed as a user's folder is (durable writes).
    const filled = await fill(new LocalStore(dir, { durable: false }), config.commits, config.seed);
    const folder = new LocalStore(dir);
    stores.push(
      await measure(
        'local folder',
        { store: folder, prefix: '', where: dir },
        folder,
        config,
        filled.leaves,
        filled.keys,
      ),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  if (config.dynamoEndpoint !== undefined) {
    const s3 = await startS3();
    try {
      process.env.AWS_ENDPOINT_URL_S3 = s3.endpoint;
      process.env.AWS_ENDPOINT_URL_DYNAMODB = config.dynamoEndpoint;
      process.env.S3_FORCE_PATH_STYLE = 'true';
      Object.assign(process.env, {
        AWS_REGION: 'us-east-1',
        AWS_ACCESS_KEY_ID: 'S3RVER',
        AWS_SECRET_ACCESS_KEY: 'S3RVER',
      });
      const table = uniqueName('consumer-bench');
      await createBucket(s3.endpoint, 'consumer-bench');
      await createCursorTable(config.dynamoEndpoint, table);
      // As the consumer's own stores build them (awsConsumerStores, the CLI).
      const clients = awsClients(process.env, 64);
      const snapshots = new S3SnapshotStore('consumer-bench', clients.s3);
      const filled = await fill(snapshots, config.commits, config.seed);
      const mirror = { store: snapshots, prefix: '', where: 's3://consumer-bench/' };
      stores.push(
        await measure(
          'S3 + DynamoDB',
          mirror,
          new DynamoStore(table, clients.dynamo),
          config,
          filled.leaves,
          filled.keys,
        ),
      );
      clients.s3.destroy();
      clients.dynamo.destroy();
    } finally {
      await s3.stop();
    }
  }
  const result: ConsumerDefaultsResult = { stores };
  if (process.send) process.send({ type: 'result', result }, () => process.exit(0));
  else process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
}

void main().catch((error: unknown) => {
  if (process.send)
    process.send({ type: 'error', error: String((error as Error)?.stack ?? error) }, () => process.exit(1));
  else {
    process.stderr.write(`${String((error as Error)?.stack ?? error)}\n`);
    process.exit(1);
  }
});
