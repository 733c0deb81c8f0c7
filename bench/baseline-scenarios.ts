/**
 * The scenarios the engine is measured against: `sequential`, the documented algorithm one leaf at a time with
 * the same clients, and `ceiling` / `ceiling-lean`, a bare loop of GET + decompress + PUT over the same leaves
 * (planned before the clock starts) with no validation, ordering, manifests or cursor.
 */
import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { Agent } from 'undici';
import {
  CatalogClient,
  decodeBody,
  DEFAULT_DOCUMENT_LIMITS,
  HttpClient,
  type PageItem,
} from '../lambda/catalog/index.js';
import { commitKey, compareTicks, manifestKey, MIN_TICKS, type Ticks } from '../lambda/contract/index.js';
import { S3SnapshotStore } from '../lambda/stores/index.js';
import { leafKeyOf, manifestOf, metadataOf, pagesAfter, type ManifestEntry } from '../lambda/sync/index.js';
import { cursorStores } from './engine-scenario.js';
import { encodeSegment, S3Signer } from './sigv4.js';
import { measured, result, timing } from './measure.js';
import type { ScenarioConfig, ScenarioResult } from './scenario-types.js';

/** One planned commit, for the sequential and ceiling loops. */
interface PlainCommit {
  readonly ticks: Ticks;
  readonly commitId: string;
  readonly items: PageItem[];
}

/**
 * Steps 2–5 of the documented algorithm: the index, the pages after the cursor (in time order), their items
 * after the cursor, sorted by commit time; cut to whole commits of at most `maxLeaves` leaves (reading pages
 * only until that many are known, plus the next page so the last commit is whole).
 */
async function planCommits(catalog: CatalogClient, cursor: Ticks, maxLeaves: number): Promise<PlainCommit[]> {
  const index = await catalog.getIndex();
  const items: PageItem[] = [];
  let pagesAfterEnough = 0;
  for (const entry of pagesAfter(index, cursor)) {
    const page = await catalog.getPage(entry);
    for (const item of page.items) if (item.commitTicks > cursor) items.push(item);
    if (items.length >= maxLeaves && ++pagesAfterEnough > 1) break;
  }
  items.sort((a, b) => compareTicks(a.commitTicks, b.commitTicks));
  const groups: PlainCommit[] = [];
  for (const item of items) {
    const last = groups.at(-1);
    if (last && last.ticks === item.commitTicks) last.items.push(item);
    else groups.push({ ticks: item.commitTicks, commitId: item.commitId, items: [item] });
  }
  // Whole commits, as the engine takes them: the first always, then while they fit in maxLeaves.
  const commits: PlainCommit[] = [];
  let taken = 0;
  for (const commit of groups) {
    if (commits.length > 0 && taken + commit.items.length > maxLeaves) break;
    commits.push(commit);
    taken += commit.items.length;
  }
  return commits;
}

export async function runSequential(config: ScenarioConfig): Promise<ScenarioResult> {
  const { cursors, s3 } = cursorStores(config, 1);
  const http = new HttpClient({ connections: 1 });
  const catalog = new CatalogClient(http, config.source);
  const snapshots = new S3SnapshotStore(config.bucket, s3);
  const name = `bench-sequential-${process.pid}`;
  const times = timing(config.leaves);
  let leaves = 0;
  let bytes = 0;
  let commitsDone = 0;
  const run = await measured(async () => {
    // 1. The cursor.
    const stored = await cursors.read(name);
    const cursor = stored?.value ?? MIN_TICKS;
    // 2–5. Index, pages, items after the cursor, sorted.
    const commits = await planCommits(catalog, cursor, config.leaves);
    // 6. Each leaf in order: fetch it, then store it; a commit's manifest once its leaves are stored.
    for (const commit of commits) {
      const key = commitKey(commit.ticks);
      const entries: ManifestEntry[] = [];
      for (const item of commit.items) {
        const start = performance.now();
        const fetched = await catalog.getLeaf(item);
        const fetchedAt = performance.now();
        const leafKey = leafKeyOf('', key, item);
        await snapshots.putLeaf(leafKey, fetched.body, metadataOf(item));
        times.record(start, fetchedAt, performance.now());
        entries.push({ key: leafKey, id: item.id, version: item.version, type: item.type });
        leaves++;
        bytes += fetched.body.length;
      }
      await snapshots.putJson(manifestKey('', key), manifestOf(commit, entries));
      commitsDone++;
    }
    // 7. The cursor: the last commit processed.
    const last = commits.at(-1);
    if (last)
      await cursors.compareAndSet(name, stored, { value: last.ticks, commitId: last.commitId, runId: 'sequential' });
  });
  await http.close();
  s3.destroy();
  return result(config, run, leaves, commitsDone, bytes, times.summary(), config.cursor);
}

/** The engine's own decoding (synchronous for small bodies), so the ceiling pays no more per leaf than the engine. */
function decode(url: string, body: Buffer, encoding: string | string[] | undefined): Promise<Buffer> {
  return decodeBody(url, body, String(encoding ?? 'identity'), DEFAULT_DOCUMENT_LIMITS.leafBytes);
}

export async function runCeiling(config: ScenarioConfig, lean: boolean): Promise<ScenarioResult> {
  // Planned before the clock starts: the same leaves the engine takes, with their keys and metadata.
  const planner = new HttpClient({ connections: 2 });
  const commits = await planCommits(new CatalogClient(planner, config.source), MIN_TICKS, config.leaves);
  await planner.close();
  const jobs = commits.flatMap((commit) => {
    const key = commitKey(commit.ticks);
    return commit.items.map((item) => ({
      url: new URL(item.url),
      key: leafKeyOf('', key, item),
      metadata: metadataOf(item),
    }));
  });
  const { s3 } = cursorStores(config, config.concurrency);
  // The same pool shape as HttpClient's.
  const agent = new Agent({ connections: config.concurrency, keepAliveTimeout: 30_000, pipelining: 1 });
  // `ceiling`: the AWS SDK's PutObject (the ceiling). `ceiling-lean`: the least a signed PUT can cost (no
  // retries, no error parsing), the floor the engine's own lean PUT (S3SnapshotStore) is measured against.
  const bare = lean ? barePut(config.bucket, config.s3Endpoint, config.concurrency) : undefined;
  const store = bare ?? sdkPut(config.bucket, s3);
  const times = timing(jobs.length);
  let bytes = 0;
  let next = 0;
  const run = await measured(() =>
    Promise.all(
      Array.from({ length: config.concurrency }, async () => {
        while (next < jobs.length) {
          const job = jobs[next++]!;
          const start = performance.now();
          const response = await agent.request({
            origin: job.url.origin,
            path: job.url.pathname,
            method: 'GET',
            headers: { accept: 'application/json', 'accept-encoding': 'gzip, br, deflate' },
          });
          const body = await decode(
            job.url.href,
            Buffer.from(await response.body.arrayBuffer()),
            response.headers['content-encoding'],
          );
          if (response.statusCode !== 200) throw new Error(`GET ${job.url.href}: HTTP ${response.statusCode}`);
          const fetchedAt = performance.now();
          await store.putLeaf(job.key, body, job.metadata);
          times.record(start, fetchedAt, performance.now());
          bytes += body.length;
        }
      }),
    ),
  );
  await agent.close();
  await bare?.close();
  s3.destroy();
  return result(config, run, jobs.length, commits.length, bytes, times.summary(), 'none');
}

/**
 * A bare SigV4-signed PUT (sigv4.ts) over an undici pool sized to the concurrency: path-style, credentials from
 * the environment, no retries; a failed PUT throws.
 */
function barePut(
  bucket: string,
  endpoint: string,
  connections: number,
): { putLeaf: S3SnapshotStore['putLeaf']; close(): Promise<void> } {
  const url = new URL(endpoint);
  const agent = new Agent({ connections, keepAliveTimeout: 30_000, pipelining: 1 });
  const signer = new S3Signer(
    { accessKeyId: process.env.AWS_ACCESS_KEY_ID ?? '', secretAccessKey: process.env.AWS_SECRET_ACCESS_KEY ?? '' },
    process.env.AWS_REGION ?? 'us-east-1',
  );
  return {
    async putLeaf(key, body, metadata) {
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        'content-length': String(body.length),
      };
      for (const [name, value] of Object.entries(metadata)) headers[`x-amz-meta-${name}`] = value;
      const path = `${url.pathname.replace(/\/$/, '')}/${bucket}/${key.split('/').map(encodeSegment).join('/')}`;
      const response = await agent.request({
        origin: url.origin,
        path,
        method: 'PUT',
        headers: signer.signPut(url.host, path, headers, body),
        body,
      });
      await response.body.dump();
      if (response.statusCode !== 200) throw new Error(`PUT ${key}: HTTP ${response.statusCode}`);
    },
    close: () => agent.close(),
  };
}

/** The AWS SDK's PutObject, as S3SnapshotStore sent leaves before its lean PUT: the ceiling. */
function sdkPut(bucket: string, s3: S3Client): { putLeaf: S3SnapshotStore['putLeaf'] } {
  return {
    async putLeaf(key, body, metadata) {
      await s3.send(
        new PutObjectCommand({
          Bucket: bucket,
          Key: key,
          Body: body,
          ContentLength: body.length,
          ContentType: 'application/json',
          Metadata: { ...metadata },
        }),
      );
    },
  };
}
