/**
 * The stale-writer guard needs a server that honours `If-Match` / `If-None-Match` on PUT (issue 32): before its first
 * write, the view checks it once per process on `{prefix}view-conditional-put-check`, and refuses a server that
 * stores a PUT whose precondition must fail. The server that ignores them is s3rver behind the fault front with
 * `dropConditions` (the signature checked, the conditions dropped); the honest one is the testkit's s3rver, patched
 * to honour them as S3 does.
 */
import { S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readConsumerCursor } from '../../../lambda/consumer/consumer-cursors.js';
import { ErrorCode } from '../../../lambda/contract/errors.js';
import { awsViewStores, keepView, requireConditionalPut } from '../../../lambda/view/index.js';
import { testServices } from '../../../testkit/env.js';
import { generateCatalog } from '../../../testkit/catalog-generator.js';
import { S3FaultFront } from '../../../testkit/s3-fault-front.js';
import { SyncHarness } from '../../../testkit/sync-harness.js';
import { writeMirror } from '../../../testkit/view-mirror.js';

const PREFIX = 'mirror/';
const PROBE = `${PREFIX}view-conditional-put-check`;
const catalog = generateCatalog({ commits: 8, seed: 3232, leavesPerCommit: [1, 3] });
const first = catalog.commits.slice(0, 6);
const more = catalog.commits.slice(6);

let ignoring: S3FaultFront;
let honest: S3FaultFront;
const clients: S3Client[] = [];

beforeAll(async () => {
  [ignoring, honest] = await Promise.all([
    S3FaultFront.start(testServices().s3Endpoint, { dropConditions: true }),
    S3FaultFront.start(testServices().s3Endpoint),
  ]);
});
afterAll(async () => {
  for (const client of clients) client.destroy();
  await Promise.all([ignoring.stop(), honest.stop()]);
});

function clientOf(front: S3FaultFront): S3Client {
  const client = new S3Client({
    endpoint: front.url,
    region: 'us-east-1',
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    forcePathStyle: true,
    maxAttempts: 1,
  });
  clients.push(client);
  return client;
}

/** A mirror of the catalog in a fresh bucket, and the view's stores on it through `front`. */
async function mirrorThrough(front: S3FaultFront) {
  const harness = await SyncHarness.create();
  await writeMirror(harness.snapshots, PREFIX, first);
  const stores = awsViewStores({
    bucket: harness.bucket,
    prefix: PREFIX,
    cursorTable: harness.table,
    clients: { s3: clientOf(front), dynamo: harness.clients.dynamo },
  });
  const options = { mirror: stores.mirror, cursors: stores.cursors, lease: false as const };
  return { harness, stores, options };
}

/** The error, or the first of its causes, with a catalog-sync code. */
function coded(error: unknown): { code?: string; message?: string } {
  for (let e = error as { code?: string; cause?: unknown } | undefined; e; e = e.cause as typeof e)
    if (typeof e.code === 'string' && e.code.startsWith('CS_ERR_') && e.code !== ErrorCode.consumerHandler) return e;
  return {};
}

describe('the conditional-PUT check of the latest view', () => {
  it('a server that ignores If-None-Match / If-Match is refused before the first index: nothing of the view written, the cursor unmoved', async () => {
    const { harness, stores, options } = await mirrorThrough(ignoring);
    const failure = await keepView(stores, options).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeDefined();
    expect(coded(failure)).toMatchObject({ code: 'CS_ERR_CONDITIONAL_PUT' });
    expect(coded(failure).message).toBe(
      `s3://${harness.bucket}/${PROBE}: a PUT sent with If-None-Match: * was stored over the existing object: the server does not honour conditional writes (S3 has since 2024; see docs/contract.md, "What an S3-compatible server must guarantee", point 8), which the latest view's stale-writer guard needs; nothing of the view was written`,
    );
    // The probe is the only key the view wrote (the guard stayed on: no index went out unguarded).
    expect(await harness.keys(`${PREFIX}packages/`)).toEqual([]);
    expect(await harness.keys(`${PREFIX}view`)).toEqual([PROBE]);
    expect(await readConsumerCursor(stores.cursors, stores.mirror, 'view-latest')).toBeUndefined();
    // Each PUT reached s3rver without its condition: the front did drop them.
    expect(ignoring.putsOf(`/${harness.bucket}/${PROBE}`).length).toBeGreaterThanOrEqual(2);
  });

  it('a server that answers 501 NotImplemented to the conditions is refused too (the watermark falls back; the view does not)', async () => {
    const harness = await SyncHarness.create();
    honest.fault({
      match: (seen) => seen.method === 'PUT' && seen.headers['if-none-match'] !== undefined,
      fault: { kind: 'answer', status: 501, code: 'NotImplemented' },
    });
    try {
      await expect(requireConditionalPut(clientOf(honest), harness.bucket, PREFIX)).rejects.toMatchObject({
        code: 'CS_ERR_CONDITIONAL_PUT',
        message: expect.stringContaining('a PUT sent with If-None-Match: * was answered 501 NotImplemented'),
      });
    } finally {
      honest.reset();
    }
  });

  it('S3 (the patched s3rver) passes: three probe PUTs in a process, whatever the batches, then the view as usual', async () => {
    const { harness, stores, options } = await mirrorThrough(honest);
    honest.reset();
    const result = await keepView(stores, { ...options, batchSize: 2 });
    expect(result).toMatchObject({ commits: first.length, stoppedBy: 'caught-up' });
    expect(result.written).toBeGreaterThan(0);
    // The same process again (another run, other stores on the same client): no more probes.
    const again = awsViewStores({
      bucket: harness.bucket,
      prefix: PREFIX,
      cursorTable: harness.table,
      clients: { s3: clients.at(-1)!, dynamo: harness.clients.dynamo },
    });
    await writeMirror(harness.snapshots, PREFIX, more);
    expect(await keepView(again, options)).toMatchObject({ commits: more.length });
    const probes = honest.putsOf(`/${harness.bucket}/${PROBE}`);
    expect(probes.map((seen) => seen.headers['if-none-match'] ?? `If-Match ${seen.headers['if-match']}`)).toEqual([
      '*',
      '*',
      'If-Match "catalog-sync-no-such-etag"',
    ]);
  });
});
