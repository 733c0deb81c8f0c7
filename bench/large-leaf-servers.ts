/**
 * The servers of the large-leaf row (issue 30, item 3), in a process of their own: a catalog of one commit of
 * `leaves` leaves of `mib` MiB each (a nuget.org leaf of a package of many files: its document with a long
 * `packageEntries` array, testkit/large-leaves.ts) and a fake S3 (fake-s3.ts, 30 ms a request).
 *
 * The service index, catalog index and page come from the testkit's `CatalogReplica`, served as it renders them.
 * The leaves are served here, gzip as a CDN compresses them (the engine asks for gzip, br or deflate), each as three
 * gzip members: its own head, the entries (compressed once, shared by every leaf: a 24 MiB leaf is not rendered 48
 * times in this process) and its tail; the engine decodes the members as one body. Started by large-leaf-row.ts with
 * `fork` and a JSON config as argv[2]; sends `{ type: 'ready', serviceIndexUrl, s3Endpoint }` over IPC.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { CatalogReplica, generateCatalog, grownLeafParts } from '../testkit/index.js';
import { startFakeS3 } from './fake-s3.js';

/** argv[2] of this process. */
export interface LargeLeafServersConfig {
  readonly leaves: number;
  readonly mib: number;
  readonly catalogLatencyMs: number;
  readonly s3LatencyMs: number;
}

/** The ready message. */
export interface LargeLeafServersReady {
  readonly type: 'ready';
  readonly serviceIndexUrl: string;
  readonly s3Endpoint: string;
  /** Uncompressed bytes of each leaf, and compressed as sent. */
  readonly leafBytes: number;
  readonly sentBytes: number;
}

async function main(): Promise<void> {
  const config = JSON.parse(process.argv[2] ?? '{}') as LargeLeafServersConfig;
  const catalog = generateCatalog({
    commits: 1,
    seed: 30,
    leavesPerCommit: [config.leaves, config.leaves],
    deleteRatio: 0,
  });
  const commit = catalog.commits[0]!;
  const front = createServer();
  await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(front.address() as AddressInfo).port}`;
  // Documents name the front's origin: every request comes here.
  const replica = await CatalogReplica.start({ catalog, publicOrigin: origin });
  let entries: Buffer | undefined;
  let leafBytes = 0;
  let sentBytes = 0;
  const leaves = new Map<string, Buffer[]>();
  for (const leaf of commit.leaves) {
    const parts = grownLeafParts(replica.documentAt(leaf.path), config.mib * 1024 * 1024);
    entries ??= gzipSync(parts.entries);
    const members = [gzipSync(parts.head), entries, gzipSync(parts.tail)];
    leaves.set(leaf.path, members);
    leafBytes = Buffer.byteLength(parts.head) + Buffer.byteLength(parts.entries) + Buffer.byteLength(parts.tail);
    sentBytes = members.reduce((n, member) => n + member.length, 0);
  }
  front.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const path = new URL(req.url ?? '/', origin).pathname;
    setTimeout(() => {
      const members = leaves.get(path);
      if (members !== undefined) {
        res.writeHead(200, {
          'content-type': 'application/json',
          'content-encoding': 'gzip',
          'content-length': members.reduce((n, member) => n + member.length, 0),
        });
        for (const member of members) res.write(member);
        res.end();
        return;
      }
      let text: string;
      try {
        text = replica.documentAt(path);
      } catch {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
        return;
      }
      const body = Buffer.from(text);
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length }).end(body);
    }, config.catalogLatencyMs);
  });
  const s3 = await startFakeS3({ latencyMs: config.s3LatencyMs });
  const ready: LargeLeafServersReady = {
    type: 'ready',
    serviceIndexUrl: `${origin}/v3/index.json`,
    s3Endpoint: s3.endpoint,
    leafBytes,
    sentBytes,
  };
  process.send!(ready);
  const stop = async (): Promise<void> => {
    front.closeAllConnections();
    front.close();
    await Promise.allSettled([s3.stop(), replica.stop()]);
    process.exit(0);
  };
  process.on('disconnect', () => void stop());
  process.on('SIGTERM', () => void stop());
}

void main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
