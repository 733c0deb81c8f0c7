/**
 * One engine under test: a fresh DynamoDB table and S3 bucket on the shared emulators, a catalog replica, and
 * helpers that run slices and check the bucket against the generated catalog, byte for byte.
 */
import { GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { CatalogClient } from '../lambda/catalog/catalog-client.js';
import { HttpClient } from '../lambda/catalog/http-client.js';
import { leafKey, manifestKey } from '../lambda/contract/keys.js';
import { formatTimestamp, parseTimestamp, type Ticks } from '../lambda/contract/time.js';
import { commitKey } from '../lambda/contract/keys.js';
import { DynamoStore } from '../lambda/stores/dynamo-store.js';
import { S3SnapshotStore } from '../lambda/stores/s3-store.js';
import type {
  CompareAndSetResult,
  CursorState,
  CursorStore,
  CursorTarget,
  ReadOptions,
} from '../lambda/stores/types.js';
import { runSlice, type EngineDeps } from '../lambda/sync/index.js';
import type { RunSummary } from '../lambda/contract/run-summary.js';
import { parseSettings, type RawSettings } from '../lambda/contract/settings.js';
import { leafBody, type GeneratedCatalog, type GeneratedCommit } from './catalog-generator.js';
import { clientsFor, createBucket, createCursorTable } from './emulators.js';
import { testServices, uniqueName } from './env.js';
import { manifestProblems, type StoredManifest } from './local-verify.js';

/** Retries fast in tests: the replica's faults are few, and waiting proves nothing. */
export const FAST_RETRY = { attempts: 5, baseDelayMs: 2, maxDelayMs: 20, maxRetryAfterMs: 5_000 } as const;

/** Records every successful cursor write, in order, across all runs that share it. */
export class RecordingCursorStore implements CursorStore {
  readonly written: Ticks[] = [];
  constructor(
    readonly inner: CursorStore,
    private readonly onWrite?: (value: Ticks) => Promise<void>,
  ) {}
  read(name: string, options?: ReadOptions): Promise<CursorState | undefined> {
    return this.inner.read(name, options);
  }
  async compareAndSet(
    name: string,
    expected: CursorState | undefined,
    next: CursorTarget,
    options?: ReadOptions,
  ): Promise<CompareAndSetResult> {
    const result = await this.inner.compareAndSet(name, expected, next, options);
    if (result.outcome === 'written') {
      this.written.push(next.value);
      await this.onWrite?.(next.value);
    }
    return result;
  }
}

/** A table, a bucket and the stores on them. */
export class SyncHarness {
  readonly table = uniqueName('cursors');
  readonly bucket = uniqueName('mirror');
  readonly services = testServices();
  readonly clients: { dynamo: DynamoDBClient; s3: S3Client };
  readonly store: DynamoStore;
  readonly snapshots: S3SnapshotStore;

  private constructor() {
    this.clients = clientsFor({ dynamoEndpoint: this.services.dynamoEndpoint, s3Endpoint: this.services.s3Endpoint });
    this.store = new DynamoStore(this.table, this.clients.dynamo);
    this.snapshots = new S3SnapshotStore(this.bucket, this.clients.s3);
  }

  static async create(): Promise<SyncHarness> {
    const harness = new SyncHarness();
    await createCursorTable(harness.services.dynamoEndpoint, harness.table);
    await createBucket(harness.services.s3Endpoint, harness.bucket);
    return harness;
  }

  /** Environment for a CLI child process or the Lambda handler pointed at these stores. */
  env(extra: Record<string, string> = {}): Record<string, string> {
    return {
      AWS_ENDPOINT_URL_DYNAMODB: this.services.dynamoEndpoint,
      AWS_ENDPOINT_URL_S3: this.services.s3Endpoint,
      S3_FORCE_PATH_STYLE: 'true',
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'S3RVER',
      AWS_SECRET_ACCESS_KEY: 'S3RVER',
      CURSOR_TABLE: this.table,
      SNAPSHOT_BUCKET: this.bucket,
      ...extra,
    };
  }

  /** Runs one slice of `source` with the engine, as the Lambda would. */
  async run(source: string, settings: RawSettings = {}, deps: Partial<EngineDeps> = {}): Promise<RunSummary> {
    const parsed = parseSettings({ CATALOG_SOURCE: source, ...settings });
    const http = new HttpClient({ connections: parsed.concurrency, retry: FAST_RETRY });
    try {
      return await runSlice(parsed, {
        catalog: new CatalogClient(http, parsed.source, parsed.allowedOrigins),
        cursors: this.store,
        snapshots: this.snapshots,
        runLog: this.store,
        ...deps,
      });
    } finally {
      await http.close();
    }
  }

  /** The stored cursor of `name`, as stored. */
  async cursor(name = 'catalog-to-s3'): Promise<string | undefined> {
    return (await this.store.read(name))?.stored;
  }

  /** Every key in the bucket, in byte order. */
  async keys(prefix = ''): Promise<string[]> {
    const keys: string[] = [];
    for await (const key of this.snapshots.listKeys(prefix)) keys.push(key);
    return keys;
  }

  async getObject(
    key: string,
  ): Promise<{ body: Buffer; metadata: Record<string, string>; contentType: string | undefined }> {
    const response = await this.clients.s3.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
    return {
      body: Buffer.from(await response.Body!.transformToByteArray()),
      metadata: response.Metadata ?? {},
      contentType: response.ContentType,
    };
  }

  async exists(key: string): Promise<boolean> {
    try {
      await this.clients.s3.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }));
      return true;
    } catch {
      return false;
    }
  }

  async count(prefix: string): Promise<number> {
    const response = await this.clients.s3.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: prefix }));
    return response.KeyCount ?? 0;
  }

  /**
   * Checks that every commit of `catalog` at or before `upTo` is stored whole and exactly: its manifest, and
   * each leaf's bytes, metadata and key. Returns the problems. (Commits after `upTo` may have manifests too:
   * they are written as commits complete; {@link strayManifests} checks those.) With `after`, only the commits
   * after it: what an earlier check found whole stays whole, as nothing is ever deleted.
   */
  async verify(catalog: GeneratedCatalog, origin: string, upTo: Ticks, prefix = '', after?: Ticks): Promise<string[]> {
    const problems: string[] = [];
    const manifests = new Set(await this.keys(`${prefix}commits/`));
    for (const commit of catalog.commits) {
      const ticks = parseTimestamp(commit.timestamp);
      const key = commitKey(ticks);
      const manifestPath = manifestKey(prefix, key);
      if (ticks > upTo || (after !== undefined && ticks <= after)) {
        continue;
      }
      if (!manifests.has(manifestPath)) {
        problems.push(`missing manifest ${manifestPath} of commit ${commit.timestamp}`);
        continue;
      }
      problems.push(...(await this.verifyCommit(catalog, commit, origin, prefix)));
    }
    return problems;
  }

  /**
   * Manifests of commits after `upTo` that are not of a whole commit. A run writes each manifest as its commit
   * completes, in any order, so a run that stopped may leave manifests past its cursor: each must be whole.
   */
  async strayManifests(catalog: GeneratedCatalog, origin: string, upTo: Ticks, prefix = ''): Promise<string[]> {
    const manifests = new Set(await this.manifestsAfter(catalog, upTo, prefix));
    const problems: string[] = [];
    for (const commit of catalog.commits) {
      if (manifests.has(manifestKey(prefix, commitKey(parseTimestamp(commit.timestamp)))))
        problems.push(...(await this.verifyCommit(catalog, commit, origin, prefix)));
    }
    return problems;
  }

  /** Manifest keys of commits after `upTo`. */
  async manifestsAfter(catalog: GeneratedCatalog, upTo: Ticks, prefix = ''): Promise<string[]> {
    const manifests = new Set(await this.keys(`${prefix}commits/`));
    return catalog.commits
      .filter((commit) => parseTimestamp(commit.timestamp) > upTo)
      .map((commit) => manifestKey(prefix, commitKey(parseTimestamp(commit.timestamp))))
      .filter((key) => manifests.has(key));
  }

  private async verifyCommit(
    catalog: GeneratedCatalog,
    commit: GeneratedCommit,
    origin: string,
    prefix: string,
  ): Promise<string[]> {
    const problems: string[] = [];
    const ticks = parseTimestamp(commit.timestamp);
    const key = commitKey(ticks);
    const manifest = (await this.snapshots.getJson(manifestKey(prefix, key))) as StoredManifest;
    problems.push(...manifestProblems(manifest, commit, prefix));
    for (const leaf of commit.leaves) {
      const objectKey = leafKey(prefix, key, leaf.id, leaf.version);
      let object;
      try {
        object = await this.getObject(objectKey);
      } catch (error) {
        problems.push(`${objectKey}: missing (${(error as Error).name})`);
        continue;
      }
      const expected = Buffer.from(leafBody(catalog, leaf, origin));
      if (!object.body.equals(expected)) problems.push(`${objectKey}: body differs from the served bytes`);
      if (object.contentType !== 'application/json') problems.push(`${objectKey}: content type ${object.contentType}`);
      const meta = object.metadata;
      if (
        meta['nuget-id'] !== leaf.id ||
        meta['nuget-version'] !== leaf.version ||
        meta['catalog-type'] !== leaf.type ||
        meta['commit-id'] !== commit.commitId ||
        meta['commit-timestamp'] !== formatTimestamp(ticks)
      ) {
        problems.push(`${objectKey}: metadata ${JSON.stringify(meta)}`);
      }
    }
    return problems;
  }
}

/** The exact ticks of the commit at `index` (negative counts from the end). */
export function commitTicks(catalog: GeneratedCatalog, index: number): Ticks {
  const commit = catalog.commits.at(index);
  if (!commit) throw new Error(`no commit at ${index}`);
  return parseTimestamp(commit.timestamp);
}
