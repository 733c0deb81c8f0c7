/**
 * Where a chaos iteration syncs to: a fresh DynamoDB table + S3 bucket on the chaos emulators, or a fresh
 * local folder (the CLI's embedded default). Each target reads its stored state back *directly* (the raw
 * DynamoDB item, the raw state file, S3 listings and objects) for the invariant checks, and builds the
 * engine's stores or the CLI's flags for runs.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { DEFAULT_CURSOR_NAME, type Ticks } from '../../lambda/contract/index.js';
import {
  awsClients,
  type CursorStore,
  DynamoStore,
  openLocalStores,
  type RunLogStore,
  S3SnapshotStore,
  type SnapshotStore,
  STATE_DIR,
} from '../../lambda/stores/index.js';
import {
  clientsFor,
  createBucket,
  createCursorTable,
  type EmulatorClients,
  type GeneratedCatalog,
  listFiles,
  localKeys,
  readLocalState,
  SyncHarness,
  uniqueName,
  verifyLocal,
} from '../../testkit/index.js';
import { describeMismatch, readS3Object, type ReadFault } from './object-reads.js';
import type { Emulators } from './servers.js';

/** The stores one engine run uses. */
export interface EngineStores {
  cursors: CursorStore;
  snapshots: SnapshotStore;
  runLog: RunLogStore;
  close(): void;
}

/** A place runs sync to, and the means to check it independently of the engine. */
export interface Target {
  readonly kind: 'aws' | 'local';
  readonly prefix: string;
  /** The stored cursor item as stored (raw strings), or undefined when none is stored. */
  readCursor(): Promise<{ cursor: string; commitId?: string } | undefined>;
  /** Every key under `{prefix}commits/`, in byte order. */
  manifestKeys(): Promise<string[]>;
  /**
   * Every commit of `catalog` at or before `upTo` stored whole and byte for byte (SyncHarness.verify for
   * S3, verifyLocal for a folder). With `fromIndex`, commits before it may be skipped (S3 only: a check
   * between runs need not read again what the previous check read; the last check of an iteration reads
   * everything). Leftover temporary files are not problems here (a SIGKILLed writer cannot
   * remove its own); they are counted by {@link temporaryFiles}.
   */
  verify(catalog: GeneratedCatalog, origin: string, upTo: Ticks, fromIndex?: number): Promise<string[]>;
  /**
   * Reads one object (a key of the bucket or a file of the folder) back: undefined when it is whole and,
   * with `expected`, exactly those bytes; otherwise what is wrong. Never throws.
   */
  readObject(key: string, expected?: Buffer): Promise<ReadFault>;
  /** Temporary files left behind (local folder only). */
  temporaryFiles(): Promise<number>;
  /** The CLI's store flags. */
  cliArgs(): string[];
  /** Stores for an in-process engine run, built as the Lambda or the CLI builds them. */
  engineStores(concurrency: number): EngineStores;
  close(): void;
}

/** A fresh table and bucket on the emulators. */
export async function awsTarget(emulators: Emulators, prefix: string): Promise<Target> {
  const table = uniqueName('chaos');
  const bucket = uniqueName('chaos');
  await createCursorTable(emulators.dynamo.endpoint, table);
  await createBucket(emulators.s3.endpoint, bucket);
  const endpoints = { dynamoEndpoint: emulators.dynamo.endpoint, s3Endpoint: emulators.s3.endpoint };
  // Clients of our own for the checks: the test suite's configuration (fake credentials, path style).
  let clients: EmulatorClients = clientsFor(endpoints);
  let documents = DynamoDBDocumentClient.from(clients.dynamo);
  let harness = harnessFor(table, bucket, clients);
  const refresh = (): void => {
    // After an emulator restart the old sockets are dead; fresh clients avoid one failed call each.
    clients.destroy();
    clients = clientsFor(endpoints);
    documents = DynamoDBDocumentClient.from(clients.dynamo);
    harness = harnessFor(table, bucket, clients);
  };
  let starts = emulators.dynamo.starts + emulators.s3.starts;
  const current = (): void => {
    const now = emulators.dynamo.starts + emulators.s3.starts;
    if (now !== starts) {
      starts = now;
      refresh();
    }
  };
  return {
    kind: 'aws',
    prefix,
    async readCursor() {
      current();
      const { Item } = await documents.send(
        new GetCommand({ TableName: table, Key: { pk: DEFAULT_CURSOR_NAME, sk: 'cursor' }, ConsistentRead: true }),
      );
      if (!Item) return undefined;
      return { cursor: String(Item.cursor), ...(typeof Item.commitId === 'string' ? { commitId: Item.commitId } : {}) };
    },
    async manifestKeys() {
      current();
      const keys: string[] = [];
      let token: string | undefined;
      do {
        const page = await clients.s3.send(
          new ListObjectsV2Command({
            Bucket: bucket,
            Prefix: `${prefix}commits/`,
            ...(token ? { ContinuationToken: token } : {}),
          }),
        );
        for (const object of page.Contents ?? []) if (object.Key) keys.push(object.Key);
        token = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (token);
      return keys;
    },
    async verify(catalog, origin, upTo, fromIndex = 0) {
      current();
      // The same commit objects: leafBody() needs only the commit, so a slice of the catalog verifies a slice.
      const slice = fromIndex > 0 ? { ...catalog, commits: catalog.commits.slice(fromIndex) } : catalog;
      return harness.verify(slice, origin, upTo, prefix);
    },
    async readObject(key, expected) {
      current();
      return readS3Object(clients.s3, bucket, key, expected);
    },
    async temporaryFiles() {
      return 0;
    },
    cliArgs: () => ['--cursor-table', table, '--bucket', bucket, ...(prefix ? ['--prefix', prefix] : [])],
    engineStores(concurrency) {
      // Exactly as the Lambda builds them: endpoints from AWS_ENDPOINT_URL_* in this process's environment.
      const aws = awsClients(process.env, concurrency);
      const store = new DynamoStore(table, aws.dynamo);
      return {
        cursors: store,
        runLog: store,
        snapshots: new S3SnapshotStore(bucket, aws.s3),
        close: () => {
          aws.dynamo.destroy();
          aws.s3.destroy();
        },
      };
    },
    close: () => clients.destroy(),
  };
}

/**
 * SyncHarness's byte-for-byte check on a table and bucket of our own. `SyncHarness.create()` reads the
 * emulators' endpoints from vitest's `inject`, which exists only under vitest; its `verify` needs only
 * these fields.
 */
function harnessFor(table: string, bucket: string, clients: EmulatorClients): SyncHarness {
  const harness = Object.create(SyncHarness.prototype) as SyncHarness;
  Object.assign(harness as unknown as Record<string, unknown>, {
    table,
    bucket,
    clients: { dynamo: clients.dynamo, s3: clients.s3 },
    store: new DynamoStore(table, clients.dynamo),
    snapshots: new S3SnapshotStore(bucket, clients.s3),
  });
  return harness;
}

/** A fresh folder for the embedded default. */
export function localTarget(prefix: string): Target {
  const dir = mkdtempSync(join(tmpdir(), 'catalog-sync-chaos-local-'));
  const remove = (): void => rmSync(dir, { recursive: true, force: true });
  // Also when the suite is stopped mid-iteration (process.exit runs 'exit' handlers).
  process.once('exit', remove);
  return {
    kind: 'local',
    prefix,
    async readCursor() {
      const item = (await readLocalState(dir))?.cursors[DEFAULT_CURSOR_NAME];
      if (!item) return undefined;
      return { cursor: String(item.cursor), ...(item.commitId === undefined ? {} : { commitId: item.commitId }) };
    },
    // Temporary files live in `.catalog-sync/tmp/`, never beside a key, so every file here is a manifest.
    manifestKeys: async () => localKeys(dir, `${prefix}commits/`),
    async verify(catalog, origin, upTo) {
      return (await verifyLocal(dir, catalog, origin, upTo, prefix)).filter(
        (problem) => !problem.startsWith('temporary file left'),
      );
    },
    async readObject(key, expected) {
      let body: Buffer;
      try {
        body = await readFile(join(dir, key));
      } catch (error) {
        return (error as NodeJS.ErrnoException).code === 'ENOENT'
          ? 'missing (no such file)'
          : `unreadable: ${(error as Error).message}`;
      }
      if (!expected) return undefined;
      return describeMismatch(body, expected);
    },
    async temporaryFiles() {
      // Beside a key (before 21be406) or in the state folder's tmp/ (since).
      return (await listFiles(dir)).filter((file) => file.includes('.tmp-') || file.startsWith(`${STATE_DIR}/tmp/`))
        .length;
    },
    cliArgs: () => ['--data-dir', dir, ...(prefix ? ['--prefix', prefix] : [])],
    engineStores() {
      const { cursors, runLog, snapshots } = openLocalStores(dir);
      return { cursors, runLog, snapshots, close: () => undefined };
    },
    close: () => {
      remove();
      process.off('exit', remove);
    },
  };
}
