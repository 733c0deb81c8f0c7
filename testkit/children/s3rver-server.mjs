/**
 * s3rver on 127.0.0.1, in a child process of its own: it needs Node's `--openssl-legacy-provider`
 * (its ListObjectsV2 continuation tokens use DES), which the test process must not be run with. Its
 * PUTs are made atomic, as S3's are (see s3rver-atomic-put.mjs), and its keys may have segments longer than a
 * file name, as S3's may (see s3rver-long-segments.mjs); DELETEs in one folder may run at once, as S3's may
 * (see s3rver-concurrent-delete.mjs).
 *
 * Usage: node --openssl-legacy-provider s3rver-server.mjs <directory> [--port N] [--raw] [--no-long-segments]
 *        [--hard-stop]; prints {"ready":true,"port":N}.
 *
 * The tests start it with a directory alone (a fresh port). The chaos suite restarts it on the same port with
 * the same directory (`--port`), stopped hard (`--hard-stop`: SIGTERM or the parent going away closes every
 * connection at once, in-flight requests included, as a crashed or redeployed S3 endpoint would), without the
 * long-segment patch (`--no-long-segments`), and with `--raw` for stock s3rver: no patch at all but the quiet logger
 * (s3rver-quiet.mjs: it is silent anyway, and the patch changes no answer). Conditional
 * PUTs (`If-Match`, `If-None-Match: *`) are honoured as S3 does (see s3rver-conditional-put.mjs).
 *
 * Why the PUT patch: s3rver streams a PUT straight into the object's file, so a PUT torn by a client
 * that dies mid-body (SIGKILL) or by the server stopping leaves the object truncated in place, even
 * when a complete copy was there before. S3 never does that: a PUT is whole or not at all, and a body
 * shorter than its Content-Length is rejected. Without the patch a killed *re-write* of a leaf that
 * was already stored whole could corrupt it, which would be s3rver's fault, not catalog-sync's.
 */
import { parseArgs } from 'node:util';
import { announce, exitWithParent } from './parent-watch.mjs';
import { patchS3rverForAtomicPuts } from './s3rver-atomic-put.mjs';
import { patchS3rverForConcurrentDeletes } from './s3rver-concurrent-delete.mjs';
import { patchS3rverForConditionalPuts } from './s3rver-conditional-put.mjs';
import { patchS3rverForLongSegments } from './s3rver-long-segments.mjs';
import { patchS3rverQuiet } from './s3rver-quiet.mjs';

const usage = 'usage: s3rver-server.mjs <directory> [--port N] [--raw] [--no-long-segments] [--hard-stop]\n';
let parsed;
try {
  parsed = parseArgs({
    allowPositionals: true,
    options: {
      port: { type: 'string', default: '0' },
      raw: { type: 'boolean', default: false },
      'no-long-segments': { type: 'boolean', default: false },
      'hard-stop': { type: 'boolean', default: false },
    },
  });
} catch {
  process.stderr.write(usage);
  process.exit(2);
}
const { values, positionals } = parsed;
const directory = positionals[0];
const port = Number(values.port);
if (!directory || positionals.length > 1 || !Number.isInteger(port) || port < 0) {
  process.stderr.write(usage);
  process.exit(2);
}
// Before s3rver is loaded: it takes its logger middleware at load (s3rver-quiet.mjs).
patchS3rverQuiet();
const { default: S3rver } = await import('s3rver');
if (!values.raw) {
  patchS3rverForAtomicPuts();
  patchS3rverForConcurrentDeletes();
  if (!values['no-long-segments']) patchS3rverForLongSegments();
}
const server = new S3rver({ address: '127.0.0.1', port, silent: true, directory });
if (!values.raw) patchS3rverForConditionalPuts(server);
exitWithParent(async () => {
  if (values['hard-stop']) server.httpServer?.closeAllConnections?.();
  await server.close().catch(() => {});
});
const { port: listening } = await server.run();
announce({ port: listening });
