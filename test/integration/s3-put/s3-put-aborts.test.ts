/**
 * The run's stop reaches its S3 PUTs (issue 20, item 2): against S3 PUTs that never get an answer (the fault
 * front holds them), the time budget and the run's signal (Ctrl-C, SIGINT, SIGTERM) end the PUTs in flight and
 * the waits before their retries; the run returns `time-budget` (the budget) or `interrupted` (the signal) with the
 * cursor at the last whole commit, in the engine and from the CLI; a DynamoDB read that hangs (a dependency cursor, the backfill check) ends at the
 * deadline too, through the SDK's `abortSignal`. Each test's own timeout (30 s) is below the PUT's 60 s request timeout: a PUT
 * the stop did not reach would hold the run past it.
 */
import { S3Client } from '@aws-sdk/client-s3';
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { DynamoStore } from '../../../lambda/stores/dynamo-store.js';
import { dynamoClient } from '../../../testkit/emulator-clients.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commitKey } from '../../../lambda/contract/keys.js';
import { formatTimestamp } from '../../../lambda/contract/time.js';
import { S3PutClient } from '../../../lambda/stores/s3-put-client.js';
import { S3PutAbortedError } from '../../../lambda/stores/s3-put-error.js';
import { S3SnapshotStore } from '../../../lambda/stores/s3-store.js';
import { generateCatalog, type GeneratedCatalog } from '../../../testkit/catalog-generator.js';
import { CatalogReplica } from '../../../testkit/catalog-replica.js';
import { startCli, waitFor } from '../../../testkit/cli-process.js';
import { createBucket } from '../../../testkit/emulators.js';
import { testServices, uniqueName } from '../../../testkit/env.js';
import { fixedBackoff } from '../../../testkit/fast-backoff.js';
import { S3FaultFront, type SeenRequest } from '../../../testkit/s3-fault-front.js';
import { commitTicks, RecordingCursorStore, SyncHarness } from '../../../testkit/sync-harness.js';

const STOP_TIMEOUT_MS = 30_000;

let catalog: GeneratedCatalog;
let replica: CatalogReplica;
let front: S3FaultFront;

/** The leaf PUTs of the catalog's second commit: held for ever. The first commit is stored whole. */
const secondCommitLeaves = (bucket: string) => {
  const key = commitKey(commitTicks(catalog, 1));
  return (seen: SeenRequest): boolean => seen.method === 'PUT' && seen.url.startsWith(`/${bucket}/leaves/${key}/`);
};

function s3(): S3Client {
  return new S3Client({
    endpoint: front.url,
    region: 'us-east-1',
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    forcePathStyle: true,
    maxAttempts: 5,
  });
}

beforeAll(async () => {
  catalog = generateCatalog({ commits: 6, seed: 2020, leavesPerCommit: [2, 3] });
  replica = await CatalogReplica.start({ catalog, pageSize: 10 });
  front = await S3FaultFront.start(testServices().s3Endpoint);
});
afterAll(async () => {
  await front.stop();
  await replica.stop();
});

describe("the run's stop ends its S3 PUTs", () => {
  it('the time budget aborts PUTs that never get an answer: time-budget, the cursor at the last whole commit', {
    timeout: STOP_TIMEOUT_MS,
  }, async () => {
    const harness = await SyncHarness.create();
    front.fault({ match: secondCommitLeaves(harness.bucket), fault: { kind: 'hang' } });
    const client = s3();
    try {
      const snapshots = new S3SnapshotStore(harness.bucket, client);
      const summary = await harness.run(replica.serviceIndexUrl, {}, { snapshots, deadline: Date.now() + 2_000 });
      const lastWhole = formatTimestamp(commitTicks(catalog, 0));
      // The first commit is whole unless the budget ended before it was (a loaded machine): either way, nothing past it.
      expect(summary).toMatchObject({ stoppedBy: 'time-budget', caughtUp: false });
      expect(stoppedAtLastWhole(summary, lastWhole)).toBe(true);
      expect(await harness.cursor()).toBe(summary.commits === 1 ? lastWhole : undefined);
      // Manifests appear as commits complete: later commits may be whole past the cursor, the held one is not.
      expect(await harness.strayManifests(catalog, replica.origin, commitTicks(catalog, 0))).toEqual([]);
      expect(await harness.manifestsAfter(catalog, commitTicks(catalog, 0))).not.toContain(
        `commits/${commitKey(commitTicks(catalog, 1))}.json`,
      );
      // Every held PUT was given up by the client (its connection closed), none waits out a timeout.
      const held = front.hangs.held;
      expect(held).toBeGreaterThan(0);
      await front.whenAbandoned(held);
    } finally {
      front.reset();
      client.destroy();
    }
  });

  it("the run's signal (Ctrl-C) aborts them likewise", { timeout: STOP_TIMEOUT_MS }, async () => {
    const harness = await SyncHarness.create();
    front.fault({ match: secondCommitLeaves(harness.bucket), fault: { kind: 'hang' } });
    const client = s3();
    const stop = new AbortController();
    const lastWhole = commitTicks(catalog, 0);
    let firstCommitStored!: () => void;
    const stored = new Promise<void>((resolve) => (firstCommitStored = resolve));
    const cursors = new RecordingCursorStore(harness.store, async (value) => {
      if (value === lastWhole) firstCommitStored();
    });
    // Ctrl-C once the first commit is checkpointed and a PUT of the second is held.
    void Promise.all([stored, front.whenHung(1)]).then(() => stop.abort());
    try {
      const summary = await harness.run(
        replica.serviceIndexUrl,
        {},
        { snapshots: new S3SnapshotStore(harness.bucket, client), cursors, signal: stop.signal },
      );
      expect(summary).toMatchObject({
        stoppedBy: 'interrupted',
        caughtUp: false,
        commits: 1,
        cursorAfter: formatTimestamp(lastWhole),
      });
      await front.whenAbandoned(front.hangs.held);
    } finally {
      front.reset();
      client.destroy();
    }
  });

  it('a manifest PUT that never gets an answer is given 2 s past the stop, then aborted: the cursor stays before it', {
    timeout: STOP_TIMEOUT_MS,
  }, async () => {
    const harness = await SyncHarness.create();
    const held = `/${harness.bucket}/commits/${commitKey(commitTicks(catalog, 1))}.json`;
    front.fault({ match: (seen) => seen.method === 'PUT' && seen.url === held, fault: { kind: 'hang' } });
    const client = s3();
    try {
      const summary = await harness.run(
        replica.serviceIndexUrl,
        {},
        { snapshots: new S3SnapshotStore(harness.bucket, client), deadline: Date.now() + 2_000 },
      );
      const lastWhole = formatTimestamp(commitTicks(catalog, 0));
      expect(summary).toMatchObject({ stoppedBy: 'time-budget', commits: 1, cursorAfter: lastWhole });
      expect(await harness.cursor()).toBe(lastWhole);
      // The PUT, and its hedge a second later (pipeline: a write not answered within a second is sent again).
      expect(front.hangs.held).toBe(2);
      await front.whenAbandoned(2);
    } finally {
      front.reset();
      client.destroy();
    }
  });

  it('a PUT waiting to retry is stopped in its wait, named as aborted, not failed', {
    timeout: STOP_TIMEOUT_MS,
  }, async () => {
    const bucket = uniqueName('abort-wait');
    await createBucket(testServices().s3Endpoint, bucket);
    front.fault({
      match: (seen) => seen.url.startsWith(`/${bucket}/`),
      fault: { kind: 'answer', status: 503, code: 'SlowDown' },
    });
    const client = s3();
    // Waits of up to a minute: only the abort ends this one.
    const put = new S3PutClient(client, { connections: 1, backoff: fixedBackoff(60_000) });
    const stop = new AbortController();
    try {
      const error = await put
        .put(
          { bucket, key: 'wait.json', body: Buffer.from('{}'), contentType: 'application/json' },
          { signal: stop.signal, onAnswer: () => stop.abort() },
        )
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(S3PutAbortedError);
      expect((error as Error).message).toBe(
        `S3 PUT s3://${bucket}/wait.json: aborted before attempt 2: the run was stopped (time budget reached or interrupted)`,
      );
      expect(front.putsOf(`/${bucket}/wait.json`)).toHaveLength(1);
    } finally {
      front.reset();
      await put.close();
      client.destroy();
    }
  });
});

describe('catalog-sync run against S3 PUTs that hang', () => {
  const cliEnv = (harness: SyncHarness): Record<string, string> => harness.env({ AWS_ENDPOINT_URL_S3: front.url });
  const args = (harness: SyncHarness): string[] => [
    'run',
    '--source',
    replica.serviceIndexUrl,
    '--cursor-table',
    harness.table,
    '--bucket',
    harness.bucket,
    '--json',
  ];

  it('--time-budget 2 ends with time-budget (exit 0), the cursor at the last whole commit', {
    timeout: STOP_TIMEOUT_MS,
  }, async () => {
    const harness = await SyncHarness.create();
    front.fault({ match: secondCommitLeaves(harness.bucket), fault: { kind: 'hang' } });
    try {
      const result = await startCli([...args(harness), '--time-budget', '2'], cliEnv(harness)).done;
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      const lastWhole = formatTimestamp(commitTicks(catalog, 0));
      const summary = JSON.parse(result.stdout) as { stoppedBy: string; commits: number; cursorAfter: string };
      expect(summary.stoppedBy).toBe('time-budget');
      // The CLI's start-up counts against the budget: on a loaded machine the first commit may not be whole yet.
      expect(stoppedAtLastWhole(summary, lastWhole)).toBe(true);
      expect(await harness.cursor()).toBe(summary.commits === 1 ? lastWhole : undefined);
      await front.whenAbandoned(front.hangs.held);
    } finally {
      front.reset();
    }
  });

  it('SIGINT (Ctrl-C) ends it the same way: exit 0, interrupted, the cursor at the last whole commit', {
    timeout: STOP_TIMEOUT_MS,
  }, async () => {
    const harness = await SyncHarness.create();
    front.fault({ match: secondCommitLeaves(harness.bucket), fault: { kind: 'hang' } });
    const lastWhole = formatTimestamp(commitTicks(catalog, 0));
    try {
      const cli = startCli(args(harness), cliEnv(harness));
      await front.whenHung(1);
      await waitFor(async () => (await harness.cursor()) === lastWhole, 'the first commit checkpointed');
      cli.child.kill('SIGINT');
      const result = await cli.done;
      expect(result.code).toBe(0);
      expect(JSON.parse(result.stdout)).toMatchObject({
        stoppedBy: 'interrupted',
        caughtUp: false,
        commits: 1,
        cursorAfter: lastWhole,
      });
      expect(await harness.cursor()).toBe(lastWhole);
      await front.whenAbandoned(front.hangs.held);
    } finally {
      front.reset();
    }
  });
});

/** A front for the DynamoDB emulator that never answers requests whose body contains `hold`; forwards the rest. */
async function holdingDynamoFront(upstream: string, hold: string) {
  const target = new URL(upstream);
  const sockets = new Set<Socket>();
  let held = 0;
  let abandoned = 0;
  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    if (body.toString('utf8').includes(hold)) {
      held++;
      res.on('close', () => abandoned++);
      return;
    }
    const forward = request(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers },
      (response) => {
        res.writeHead(response.statusCode ?? 502, response.headers);
        response.pipe(res);
      },
    );
    forward.on('error', () => res.destroy());
    forward.end(body);
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    counts: () => ({ held, abandoned }),
    async stop(): Promise<void> {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

describe("the run's stop ends its DynamoDB reads", () => {
  it('a dependency cursor whose read never gets an answer: the deadline ends it, time-budget, nothing moved', {
    timeout: STOP_TIMEOUT_MS,
  }, async () => {
    const harness = await SyncHarness.create();
    const dynamo = await holdingDynamoFront(testServices().dynamoEndpoint, '"upstream-cursor"');
    const client = dynamoClient(dynamo.url);
    try {
      const cursors = new DynamoStore(harness.table, client);
      const summary = await harness.run(
        replica.serviceIndexUrl,
        { DEPENDS_ON: 'upstream-cursor' },
        { cursors, deadline: Date.now() + 2_000 },
      );
      expect(summary).toMatchObject({ stoppedBy: 'time-budget', commits: 0, caughtUp: false });
      expect(await harness.cursor()).toBeUndefined();
      expect(dynamo.counts().held).toBe(1);
      await waitFor(() => dynamo.counts().abandoned === 1, 'the held read given up');
    } finally {
      client.destroy();
      await dynamo.stop();
    }
  });
});

/**
 * The summary of a run stopped while the second commit's PUTs hang: the first commit whole and the cursor on it,
 * or (the budget ended before the first commit was whole) nothing taken and the cursor where it was. Never past.
 */
function stoppedAtLastWhole(summary: { commits: number; cursorAfter: string }, lastWhole: string): boolean {
  if (summary.commits === 1) return summary.cursorAfter === lastWhole;
  return summary.commits === 0 && summary.cursorAfter === '0001-01-01T00:00:00.0000000Z';
}
