/**
 * The emulators the global setup starts, and the helpers around them: what the sync tests rely on
 * (conditional writes, TTL, objects with metadata, listing past 1,000 keys), and that no emulator
 * outlives whoever started it.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { connect } from 'node:net';
import { Readable } from 'node:stream';
import { ConditionalCheckFailedException, DescribeTimeToLiveCommand } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { S3SnapshotStore } from '../../lambda/stores/index.js';
import { childScript } from '../../testkit/child-processes.js';
import {
  clientsFor,
  createBucket,
  createCursorTable,
  startDynamo,
  startS3,
  type EmulatorClients,
} from '../../testkit/emulators.js';
import { testServices, uniqueName } from '../../testkit/env.js';

const services = testServices();
let clients: EmulatorClients;

beforeAll(() => {
  clients = clientsFor(services);
});
afterAll(() => clients.destroy());

/** True while something accepts TCP connections on 127.0.0.1:port. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** True while `pid` runs (a zombie, exited but not yet reaped by its new parent, does not count). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    // /proc/PID/stat: "pid (comm) state ..."
    return !/\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true;
  }
}

describe('the run’s emulators', () => {
  it('are on 127.0.0.1, DynamoDB Local unless dynalite is asked for or Java is missing', () => {
    expect(services.dynamoEndpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(services.s3Endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(['dynamodb-local', 'dynalite']).toContain(services.dynamoKind);
    if (process.env.CATALOG_SYNC_TEST_DYNAMO === 'dynalite') expect(services.dynamoKind).toBe('dynalite');
  });

  it('gives names valid for buckets and tables, never twice', () => {
    const names = Array.from({ length: 100 }, () => uniqueName('Cursor_Table.Of-Mine'));
    expect(new Set(names).size).toBe(100);
    for (const name of names) expect(name).toMatch(/^[a-z0-9][a-z0-9-]{2,62}$/);
    expect(uniqueName('x'.repeat(100)).length).toBeLessThanOrEqual(63);
  });
});

describe('DynamoDB', () => {
  const table = uniqueName('cursors');
  let ttlEnabled: boolean;

  beforeAll(async () => {
    ({ ttlEnabled } = await createCursorTable(services.dynamoEndpoint, table));
  });

  it('has the cursor table, with TTL on expiresAt where the emulator supports it', async () => {
    if (services.dynamoKind === 'dynalite') {
      expect(ttlEnabled).toBe(false);
      return;
    }
    expect(ttlEnabled).toBe(true);
    const { TimeToLiveDescription } = await clients.dynamo.send(new DescribeTimeToLiveCommand({ TableName: table }));
    expect(TimeToLiveDescription).toMatchObject({ AttributeName: 'expiresAt' });
    expect(TimeToLiveDescription?.TimeToLiveStatus).toMatch(/ENABL/);
  });

  it('puts, conditionally updates and gets a cursor', async () => {
    const key = { pk: 'catalog-to-s3', sk: 'cursor' };
    await clients.documents.send(
      new PutCommand({
        TableName: table,
        Item: { ...key, cursor: '2017-10-31T23:30:32.4197849Z', commitId: 'a' },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
    await clients.documents.send(
      new UpdateCommand({
        TableName: table,
        Key: key,
        UpdateExpression: 'SET #c = :next, commitId = :id',
        ConditionExpression: '#c = :expected',
        ExpressionAttributeNames: { '#c': 'cursor' },
        ExpressionAttributeValues: {
          ':next': '2017-10-31T23:30:32.4197850Z',
          ':expected': '2017-10-31T23:30:32.4197849Z',
          ':id': 'b',
        },
      }),
    );
    const lost = await clients.documents
      .send(
        new UpdateCommand({
          TableName: table,
          Key: key,
          UpdateExpression: 'SET #c = :next',
          ConditionExpression: '#c = :expected',
          ExpressionAttributeNames: { '#c': 'cursor' },
          ExpressionAttributeValues: {
            ':next': '2017-11-01T00:00:00.0000000Z',
            ':expected': '2017-10-31T23:30:32.4197849Z',
          },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      )
      .catch((e: unknown) => e);
    expect(lost).toBeInstanceOf(ConditionalCheckFailedException);
    if (services.dynamoKind === 'dynamodb-local') {
      // The item that won, without a second read (dynalite ignores ReturnValuesOnConditionCheckFailure).
      expect((lost as ConditionalCheckFailedException).Item?.cursor).toEqual({ S: '2017-10-31T23:30:32.4197850Z' });
    }
    const { Item } = await clients.documents.send(new GetCommand({ TableName: table, Key: key, ConsistentRead: true }));
    expect(Item).toEqual({ ...key, cursor: '2017-10-31T23:30:32.4197850Z', commitId: 'b' });
  });

  it('queries runs newest first by sort key', async () => {
    for (const id of ['001', '003', '002']) {
      await clients.documents.send(
        new PutCommand({ TableName: table, Item: { pk: 'runs', sk: `run#${id}`, expiresAt: 2_000_000_000 } }),
      );
    }
    const { Items } = await clients.documents.send(
      new QueryCommand({
        TableName: table,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :run)',
        ExpressionAttributeValues: { ':pk': 'runs', ':run': 'run#' },
        ScanIndexForward: false,
      }),
    );
    expect(Items?.map((i) => i.sk)).toEqual(['run#003', 'run#002', 'run#001']);
  });
});

describe('S3 (s3rver)', () => {
  it('round-trips bytes, content type and user metadata', async () => {
    const bucket = uniqueName('objects');
    await createBucket(services.s3Endpoint, bucket);
    const body = Buffer.from(
      '{\n  "id": "Contoso.Lib3",\n  "description": "für Zahlungen ✓",\n  "weight": 1.50\n}',
      'utf8',
    );
    const metadata = {
      'nuget-id': 'Contoso.Lib3',
      'nuget-version': '3.1.0-RC.1+sha.5',
      'catalog-type': 'PackageDetails',
      'commit-id': '616117f5-d9dd-4664-82b9-74d87169bbe9',
      'commit-timestamp': '2017-10-31T23:30:32.4197849Z',
    };
    const key = 'leaves/001e9fzMHc3F/contoso.lib3/3.1.0-rc.1.json';
    await clients.s3.send(
      new PutObjectCommand({
        Bucket: bucket,
        Key: key,
        Body: body,
        ContentType: 'application/json',
        Metadata: metadata,
      }),
    );
    const got = await clients.s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    expect(Buffer.from(await got.Body!.transformToByteArray()).equals(body)).toBe(true);
    expect(got.ContentType).toBe('application/json');
    expect(got.Metadata).toEqual(metadata);

    // A streamed body is stored as sent, not in aws-chunked framing.
    await clients.s3.send(
      new PutObjectCommand({
        Bucket: bucket,
        Key: 'streamed.json',
        Body: Readable.from([body]),
        ContentLength: body.length,
        ContentType: 'application/json',
      }),
    );
    const streamed = await clients.s3.send(new GetObjectCommand({ Bucket: bucket, Key: 'streamed.json' }));
    expect(Buffer.from(await streamed.Body!.transformToByteArray()).equals(body)).toBe(true);
  });

  it('lists past 1,000 keys with continuation tokens and StartAfter', async () => {
    const bucket = uniqueName('listing');
    await createBucket(services.s3Endpoint, bucket);
    const keys = Array.from({ length: 1_050 }, (_, i) => `commits/${String(i).padStart(5, '0')}.json`);
    // In parallel batches: s3rver writes files, and 1,050 sequential round trips are slow.
    for (let i = 0; i < keys.length; i += 75) {
      await Promise.all(
        keys.slice(i, i + 75).map((Key) => clients.s3.send(new PutObjectCommand({ Bucket: bucket, Key, Body: '{}' }))),
      );
    }
    const first = await clients.s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: 'commits/' }));
    expect(first.KeyCount).toBe(1_000);
    expect(first.IsTruncated).toBe(true);
    expect(first.NextContinuationToken).toBeTruthy();
    const second = await clients.s3.send(
      new ListObjectsV2Command({ Bucket: bucket, Prefix: 'commits/', ContinuationToken: first.NextContinuationToken }),
    );
    expect(second.IsTruncated).toBe(false);
    const listed = [...(first.Contents ?? []), ...(second.Contents ?? [])].map((o) => o.Key);
    expect(listed).toEqual(keys);
    const after = await clients.s3.send(new ListObjectsV2Command({ Bucket: bucket, StartAfter: keys[1_040] }));
    expect(after.Contents?.map((o) => o.Key)).toEqual(keys.slice(1_041));
    // The S3 store's listing follows the continuation token past the first 1,000, and starts after a key (the
    // sync tests list their buckets through it, but not all of them hold over 1,000 keys).
    const store = new S3SnapshotStore(bucket, clients.s3);
    const all: string[] = [];
    for await (const key of store.listKeys('commits/')) all.push(key);
    expect(all).toEqual(keys);
    const from: string[] = [];
    for await (const key of store.listKeys('commits/', keys[30])) from.push(key);
    expect(from).toEqual(keys.slice(31));
  });

  it('keeps S3’s promises on overwrite: a GET after the PUT’s answer reads it whole, a GET during PUTs reads one body whole', async () => {
    // On its own, s3rver answers a PUT before the file is flushed, and truncates the file in place;
    // a test reading back leaves that a sync had just stored read a short body (CI, 2026-11-22).
    const bucket = uniqueName('atomic');
    await createBucket(services.s3Endpoint, bucket);
    const Key = 'leaves/001e9fzMHc3F/contoso.lib/1.0.0.json';
    const put = (body: Buffer) =>
      clients.s3.send(
        new PutObjectCommand({
          Bucket: bucket,
          Key,
          Body: body,
          ContentType: 'application/json',
          Metadata: { 'nuget-id': 'Contoso.Lib' },
        }),
      );
    const get = async () =>
      Buffer.from(
        await (await clients.s3.send(new GetObjectCommand({ Bucket: bucket, Key }))).Body!.transformToByteArray(),
      );
    const misreads: string[] = [];
    // Read after write: each body differs from the last in length and content.
    for (let round = 0; round < 6; round++) {
      const body = Buffer.alloc(2 * 1024 * 1024 - round * 4096, `round ${round} `);
      await put(body);
      const got = await get();
      if (!got.equals(body)) misreads.push(`after PUT ${round}: ${got.length} of ${body.length} bytes`);
    }
    // Overlapping rewrites of the same bytes, as overlapping syncs do.
    const same = Buffer.alloc(1024 * 1024, 'same ');
    await put(same);
    for (let round = 0; round < 4; round++) {
      const reads = Array.from({ length: 3 }, async () => {
        const got = await get();
        if (!got.equals(same)) misreads.push(`during PUTs ${round}: ${got.length} of ${same.length} bytes`);
      });
      await Promise.all([put(same), put(same), ...reads]);
    }
    expect(misreads).toEqual([]);
    // A PUT torn mid-body (its client killed) stores nothing: the whole object stays.
    const url = new URL(`${services.s3Endpoint}/${bucket}/${Key}`);
    await new Promise<void>((resolve) => {
      const torn = request(url, {
        method: 'PUT',
        headers: { 'content-length': String(same.length), 'content-type': 'application/json' },
      });
      torn.on('error', () => resolve());
      torn.write(same.subarray(0, same.length / 2), () => setImmediate(() => torn.destroy()));
      torn.on('close', () => resolve());
    });
    // A round trip first, so the server has likely seen the torn PUT end (with the patch the object is whole
    // whenever it does; unpatched, this read found it cut short).
    await clients.s3.send(new HeadObjectCommand({ Bucket: bucket, Key }));
    expect((await get()).equals(same)).toBe(true);
    // Nothing staged on the way is left behind or listed.
    const listed = await clients.s3.send(new ListObjectsV2Command({ Bucket: bucket }));
    expect(listed.Contents?.map((o) => o.Key)).toEqual([Key]);
  });
});

describe('emulator processes', () => {
  it('stop() ends them and their ports close', async () => {
    const previous = process.env.CATALOG_SYNC_TEST_DYNAMO;
    process.env.CATALOG_SYNC_TEST_DYNAMO = 'dynalite';
    try {
      const [dynamo, s3] = await Promise.all([startDynamo(), startS3()]);
      expect(dynamo.kind).toBe('dynalite');
      const ports = [dynamo.endpoint, s3.endpoint].map((e) => Number(new URL(e).port));
      const table = uniqueName('t');
      await createCursorTable(dynamo.endpoint, table);
      await createBucket(s3.endpoint, uniqueName('b'));
      await Promise.all([dynamo.stop(), s3.stop()]);
      for (const port of ports) expect(await listening(port)).toBe(false);
    } finally {
      if (previous === undefined) delete process.env.CATALOG_SYNC_TEST_DYNAMO;
      else process.env.CATALOG_SYNC_TEST_DYNAMO = previous;
    }
  });

  /**
   * Starts `args` under an intermediate node process that holds its stdin, relays its stdout, and
   * is then SIGKILLed, as a crashed test run would be: its children must go too.
   */
  async function orphan(args: string[]): Promise<{ firstLine: string; killParent: () => void }> {
    const holder = spawn(
      process.execPath,
      [
        '-e',
        "require('child_process').spawn(process.execPath, process.argv.slice(1), { stdio: ['pipe', 'inherit', 'inherit'] })",
        ...args,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const firstLine = await new Promise<string>((resolve, reject) => {
      let text = '';
      holder.stdout.on('data', (chunk: Buffer) => {
        text += chunk.toString('utf8');
        if (text.includes('\n')) resolve(text.split('\n')[0]!);
      });
      holder.once('exit', () => reject(new Error(`holder exited early: ${text}`)));
    });
    return { firstLine, killParent: () => holder.kill('SIGKILL') };
  }

  it('a node emulator exits when whoever started it is killed', async () => {
    const { firstLine, killParent } = await orphan([childScript('dynalite-server.mjs')]);
    const { port } = JSON.parse(firstLine) as { port: number };
    expect(await listening(port)).toBe(true);
    killParent();
    await vi.waitFor(async () => expect(await listening(port)).toBe(false), { timeout: 10_000, interval: 50 });
  });

  it('the guard kills its command (Java, in the real setup) when whoever started it is killed', async () => {
    const { firstLine, killParent } = await orphan([
      childScript('guard.mjs'),
      process.execPath,
      '-e',
      'console.log(process.pid); setInterval(() => {}, 60_000)',
    ]);
    const pid = Number(firstLine);
    expect(alive(pid)).toBe(true);
    killParent();
    await vi.waitFor(() => expect(alive(pid)).toBe(false), { timeout: 10_000, interval: 50 });
  });
});
