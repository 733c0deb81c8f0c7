/**
 * s3rver for the chaos suite: a fixed port and a directory that outlive a restart, and PUTs that are
 * atomic as they are on S3.
 *
 * Usage: node --openssl-legacy-provider s3rver-server.mjs <directory> <port> [--raw]
 * Prints {"ready":true,"port":N}. SIGTERM (or the parent going away) closes every connection at once,
 * in-flight requests included: the server is "stopped", as a crashed or redeployed S3 endpoint would be.
 *
 * Why the PUT patch: s3rver streams a PUT straight into the object's file, so a PUT torn by a client
 * that dies mid-body (SIGKILL) or by the server stopping leaves the object truncated in place, even
 * when a complete copy was there before. S3 never does that: a PUT is whole or not at all, and a body
 * shorter than its Content-Length is rejected. Without the patch a killed *re-write* of a leaf that
 * was already stored whole could corrupt it, which would be s3rver's fault, not catalog-sync's. The
 * patch is the tests' own (testkit/children/s3rver-atomic-put.mjs). `--raw` keeps s3rver's own
 * behaviour.
 */
import S3rver from 's3rver';
import { announce, exitWithParent } from '../../testkit/children/parent-watch.mjs';
import { patchS3rverForAtomicPuts } from '../../testkit/children/s3rver-atomic-put.mjs';

const [directory, portText, ...flags] = process.argv.slice(2);
if (!directory || !portText) {
  process.stderr.write('usage: s3rver-server.mjs <directory> <port> [--raw]\n');
  process.exit(2);
}

if (!flags.includes('--raw')) patchS3rverForAtomicPuts();

const server = new S3rver({ address: '127.0.0.1', port: Number(portText), silent: true, directory });
exitWithParent(async () => {
  server.httpServer?.closeAllConnections?.();
  await server.close().catch(() => {});
});
const { port } = await server.run();
announce({ port });
