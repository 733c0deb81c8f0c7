/**
 * The package source of the feed's rows, in a child process of its own (its CPU is not the feed's): a service index
 * naming a flat container, and generated packages of given sizes streamed with backpressure after `latencyMs`
 * (nothing held but one 1 MiB block: a 250 MB package costs this process no memory). Each package is the block
 * rotated by its number, so its SHA-512 is computed once, at start, by streaming it the same way.
 *
 * Usage (forked): feed-source.js '{"packages":[{"id","version","size"}],"latencyMs":20}'; sends
 * `{ type: 'ready', port, digests: [{ hash, size }] }`.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One package the source serves. */
export interface SourcePackage {
  readonly id: string;
  /** Identity form (lowercased, normalized). */
  readonly version: string;
  readonly size: number;
}

const BLOCK = randomBytes(1024 * 1024);
const PIECE = 64 * 1024;

/** The pieces of package `n` of `size` bytes. */
function* pieces(n: number, size: number): Generator<Buffer> {
  let at = (n * 7919) % BLOCK.length;
  for (let left = size; left > 0; ) {
    const length = Math.min(PIECE, left, BLOCK.length - at);
    yield BLOCK.subarray(at, at + length);
    left -= length;
    at = (at + length) % BLOCK.length;
  }
}

async function send(res: ServerResponse, n: number, size: number): Promise<void> {
  res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(size) });
  for (const piece of pieces(n, size)) {
    if (!res.write(piece)) await new Promise<void>((resolve) => res.once('drain', resolve));
    if (res.destroyed) return;
  }
  res.end();
}

if (process.send !== undefined) {
  const config = JSON.parse(process.argv[2]!) as { packages: SourcePackage[]; latencyMs: number };
  const byPath = new Map<string, number>();
  const digests = config.packages.map((pkg, n) => {
    const id = pkg.id.toLowerCase();
    byPath.set(`/flat/${id}/${pkg.version}/${id}.${pkg.version}.nupkg`, n);
    const hash = createHash('sha512');
    for (const piece of pieces(n, pkg.size)) hash.update(piece);
    return { hash: hash.digest('base64'), size: pkg.size };
  });
  const server = createServer((req, res) => {
    const origin = `http://${req.headers.host}`;
    setTimeout(() => {
      if (req.url === '/v3/index.json') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            version: '3.0.0',
            resources: [{ '@id': `${origin}/flat/`, '@type': 'PackageBaseAddress/3.0.0' }],
          }),
        );
        return;
      }
      const n = byPath.get(req.url ?? '');
      if (n === undefined) res.writeHead(404).end();
      else send(res, n, config.packages[n]!.size).catch(() => res.destroy());
    }, config.latencyMs);
  });
  server.listen(0, '127.0.0.1', () => {
    process.send!({ type: 'ready', port: (server.address() as AddressInfo).port, digests });
  });
  // The parent asks for this process's CPU before and after each run (a row's machine-wide CPU).
  process.on('message', (message: { type?: string }) => {
    if (message.type !== 'cpu') return;
    const used = process.cpuUsage();
    process.send!({ type: 'cpu', ms: (used.user + used.system) / 1000 });
  });
  process.on('disconnect', () => process.exit(0));
}
