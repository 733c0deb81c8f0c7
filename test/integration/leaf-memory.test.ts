/**
 * Memory bounded by bytes, not by count (issue 30, item 3): the leaves in flight hold at most the process's leaf
 * memory budget of bodies (declared or received, with their decoded copy), the parsed document is dropped before the
 * PUT, and a leaf larger than the whole budget is an item error (quarantined with quarantine on), not a crash.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BodyMemory } from '../../lambda/catalog/body-memory.js';
import { HttpClient } from '../../lambda/catalog/http-client.js';
import { BodyDeferredError, LeafMemoryError } from '../../lambda/catalog/http-errors.js';
import { commitKey, quarantineKey } from '../../lambda/contract/keys.js';
import { formatTimestamp } from '../../lambda/contract/time.js';
import { SyncError } from '../../lambda/sync/engine.js';
import { LeafMemory } from '../../lambda/sync/leaf-memory.js';
import { generateCatalog, type GeneratedCatalog } from '../../testkit/catalog-generator.js';
import { CatalogReplica } from '../../testkit/catalog-replica.js';
import { runCli } from '../../testkit/cli-process.js';
import { growLeavesOf, serveUncompressed } from '../../testkit/large-leaves.js';
import { closeTracked, listenOnLoopback } from '../../testkit/loopback-listen.js';
import { commitTicks, SyncHarness } from '../../testkit/sync-harness.js';

const MIB = 1024 * 1024;

/**
 * A replica of `catalog` with the leaves of some commits grown to a size (`grow`: commit index to bytes), those of
 * `uncompressed` served without compression.
 */
async function largeLeafReplica(
  catalog: GeneratedCatalog,
  grow: Readonly<Record<number, number>>,
  uncompressed: readonly number[],
): Promise<CatalogReplica> {
  for (const [index, bytes] of Object.entries(grow)) growLeavesOf(catalog, Number(index), bytes);
  const replica = await CatalogReplica.start({ catalog });
  for (const index of uncompressed) serveUncompressed(replica, catalog.commits[index]!);
  return replica;
}

describe('the leaves in flight are bounded by their bytes', () => {
  let catalog: GeneratedCatalog;
  let replica: CatalogReplica;

  beforeAll(async () => {
    // Commit 1: 8 leaves of 1 MiB served uncompressed (the declared length is held); commit 2: 2 of 1 MiB in brotli
    // (the raw body and its decoded copy are held).
    catalog = generateCatalog({ commits: 4, seed: 3030, leavesPerCommit: [8, 8], deleteRatio: 0 });
    catalog.commits[2]!.leaves.length = 2;
    replica = await largeLeafReplica(catalog, { 1: MIB, 2: MIB }, [1]);
  });
  afterAll(async () => {
    await replica.stop();
  });

  it('stores every leaf while never holding more than the budget', async () => {
    const harness = await SyncHarness.create();
    const memory = new LeafMemory({ bytes: 3 * MIB, from: 'the test' });
    const summary = await harness.run(replica.serviceIndexUrl, {}, { leafMemory: memory });
    expect(summary).toMatchObject({ stoppedBy: 'caught-up', commits: 4, leaves: 26, quarantined: 0 });
    expect(await harness.verify(catalog, replica.origin, commitTicks(catalog, -1))).toEqual([]);
    expect(memory.peak).toBeLessThanOrEqual(3 * MIB);
    // Binding: more than one large leaf at once, but never four.
    expect(memory.peak).toBeGreaterThan(2 * MIB);
    expect(memory.held).toBe(0);
  });
});

describe('a leaf larger than the whole budget', () => {
  let catalog: GeneratedCatalog;
  let replica: CatalogReplica;
  const budget = new LeafMemory({ bytes: 2 * MIB, from: 'the test' });

  beforeAll(async () => {
    catalog = generateCatalog({ commits: 3, seed: 3031, leavesPerCommit: [2, 2], deleteRatio: 0 });
    // One leaf of commit 1 is 3 MiB, served uncompressed; the rest are small.
    catalog.commits[1]!.leaves.length = 1;
    replica = await largeLeafReplica(catalog, { 1: 3 * MIB }, [1]);
  });
  afterAll(async () => {
    await replica.stop();
  });

  it('is set aside by quarantine, its record naming the budget, and the run goes on', async () => {
    const harness = await SyncHarness.create();
    const summary = await harness.run(replica.serviceIndexUrl, { QUARANTINE: 'true' }, { leafMemory: budget });
    expect(summary).toMatchObject({ stoppedBy: 'caught-up', commits: 3, quarantined: 1, leaves: 4 });
    const leaf = catalog.commits[1]!.leaves[0]!;
    const record = (await harness.snapshots.getJson(
      quarantineKey('', commitKey(commitTicks(catalog, 1)), leaf.id, leaf.version),
    )) as Record<string, unknown>;
    expect(record.url).toBe(replica.leafUrl(leaf));
    expect(String(record.error)).toMatch(
      /body needs \d+ bytes, more than the leaf memory budget of 2097152 bytes \(the test\)/,
    );
    expect(budget.held).toBe(0);
  });

  it('stops the run without quarantine: an error naming the URL, the cursor at the last complete commit', async () => {
    const harness = await SyncHarness.create();
    const error = await harness.run(replica.serviceIndexUrl, {}, { leafMemory: budget }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SyncError);
    const { summary } = error as SyncError;
    expect(summary).toMatchObject({ stoppedBy: 'error', commits: 1, error: { code: 'CS_ERR_LEAF_MEMORY' } });
    expect(summary.error!.message).toContain(replica.leafUrl(catalog.commits[1]!.leaves[0]!));
    expect(summary.error!.message).toContain('LEAF_MEMORY_MB');
    expect(await harness.cursor()).toBe(formatTimestamp(commitTicks(catalog, 0)));
  });
});

describe('the CLI in a small heap', () => {
  let catalog: GeneratedCatalog;
  let replica: CatalogReplica;
  let dir: string;

  beforeAll(async () => {
    catalog = generateCatalog({ commits: 2, seed: 3032, leavesPerCommit: [16, 16], deleteRatio: 0 });
    replica = await largeLeafReplica(catalog, { 1: 4 * MIB }, [1]);
    dir = mkdtempSync(join(tmpdir(), 'leaf-memory-'));
  });
  afterAll(async () => {
    await replica.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  // Before issue 30 each leaf in flight kept its parsed tree until its PUT ended: 16 leaves of 4 MiB at once ran
  // this process out of its 64 MB heap ("JavaScript heap out of memory", SIGABRT).
  it('stores a commit of 16 leaves of 4 MiB with a 64 MB V8 heap', async () => {
    const result = await runCli(
      ['run', '--source', replica.serviceIndexUrl, '--data-dir', dir, '--json', '--no-progress'],
      { NODE_OPTIONS: '--max-old-space-size=64' },
    );
    expect(result.stderr).toBe('');
    expect(result.signal).toBeNull();
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ stoppedBy: 'caught-up', commits: 2, leaves: 32 });
  });
});

describe('the HTTP client holds a body as its size becomes known', () => {
  const sockets = new Set<Socket>();
  const served = new Map<string, (res: ServerResponse) => void>();
  const requested: string[] = [];
  let server: Server;
  let http: HttpClient;
  let origin: string;
  const big = randomBytes(600 * 1024).toString('base64'); // ~800 kB of text that gzip barely shrinks: decoded off the loop

  beforeAll(async () => {
    server = createServer((req, res) => {
      requested.push(req.url!);
      served.get(req.url!)!(res);
    });
    await listenOnLoopback(server, sockets);
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    http = new HttpClient({ retry: { attempts: 3, baseDelayMs: 1, maxDelayMs: 2, maxRetryAfterMs: 10 } });
    http.allowOrigin(origin);
    served.set('/plain', (res) => res.writeHead(200, { 'content-length': 1000 }).end('x'.repeat(1000)));
    served.set('/chunked', (res) => {
      res.writeHead(200, { 'transfer-encoding': 'chunked' });
      res.write('a'.repeat(3000));
      setImmediate(() => res.end('b'.repeat(2000)));
    });
    const small = gzipSync(`{"leaf":"${'y'.repeat(50_000)}"}`);
    served.set('/small-gzip', (res) =>
      res.writeHead(200, { 'content-encoding': 'gzip', 'content-length': small.length }).end(small),
    );
    const large = gzipSync(big);
    served.set('/large-gzip', (res) =>
      res.writeHead(200, { 'content-encoding': 'gzip', 'content-length': large.length }).end(large),
    );
    const bomb = gzipSync(Buffer.alloc(3 * MIB));
    served.set('/bomb', (res) =>
      res.writeHead(200, { 'content-encoding': 'gzip', 'content-length': bomb.length }).end(bomb),
    );
  });
  afterAll(async () => {
    await http.close();
    await closeTracked(server, sockets);
  });

  /** A budget of `bytes` that records every hold, answering `later` to those `refuse` names. */
  function recording(
    bytes: number,
    refuse: (total: number) => boolean = () => false,
  ): { holds: number[]; memory: BodyMemory } {
    const holds: number[] = [];
    return {
      holds,
      memory: {
        budget: { bytes, from: 'the test' },
        hold: (total) => {
          holds.push(total);
          return total > bytes ? 'never' : refuse(total) ? 'later' : 'held';
        },
      },
    };
  }
  const get = (path: string, memory: BodyMemory): Promise<unknown> =>
    http.get(`${origin}${path}`, { maxBytes: 32 * MIB, memory });

  it('holds the declared length, or the bytes received so far, and the raw body beside its decoded copy', async () => {
    const plain = recording(MIB);
    await get('/plain', plain.memory);
    expect(plain.holds).toEqual([1000]);
    const chunked = recording(MIB);
    await get('/chunked', chunked.memory);
    expect(chunked.holds.at(-1)).toBe(5000);
    expect(chunked.holds).toEqual([...chunked.holds].sort((a, b) => a - b));
    const small = recording(MIB);
    const smallBody = (await get('/small-gzip', small.memory)) as { body: Buffer };
    const smallRaw = small.holds[0]!;
    expect(small.holds).toEqual([smallRaw, smallRaw + smallBody.body.length]);
    // Decoded off the event loop: its most is held before it starts (the document limit, within the budget).
    const large = recording(8 * MIB);
    await get('/large-gzip', large.memory);
    const largeRaw = large.holds[0]!;
    expect(largeRaw).toBeGreaterThan(256 * 1024);
    expect(large.holds).toEqual([largeRaw, 8 * MIB]);
  });

  it('drops a body it cannot hold now, without retrying it: the caller fetches it again', async () => {
    requested.length = 0;
    const error = await get('/plain', recording(MIB, () => true).memory).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BodyDeferredError);
    expect(error).toMatchObject({ bytes: 1000, code: 'CS_ERR_BODY_DEFERRED' });
    expect(requested).toEqual(['/plain']);
  });

  it('fails a body it can never hold, declared or decoded, naming the budget', async () => {
    requested.length = 0;
    const declared = await get('/plain', recording(999).memory).catch((e: unknown) => e);
    expect(declared).toBeInstanceOf(LeafMemoryError);
    expect((declared as Error).message).toBe(
      `${origin}/plain: body needs 1000 bytes, more than the leaf memory budget of 999 bytes (the test); give the process more memory or set LEAF_MEMORY_MB (1 attempt)`,
    );
    const decoded = await get('/bomb', recording(2 * MIB).memory).catch((e: unknown) => e);
    expect(decoded).toBeInstanceOf(LeafMemoryError);
    expect((decoded as Error).message).toMatch(
      /\/bomb: body needs over 2097152 bytes, more than the leaf memory budget of 2097152 bytes/,
    );
    expect(requested).toEqual(['/plain', '/bomb']);
  });
});
