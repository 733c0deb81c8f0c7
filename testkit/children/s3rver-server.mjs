/**
 * s3rver on 127.0.0.1, in a child process of its own: it needs Node's `--openssl-legacy-provider`
 * (its ListObjectsV2 continuation tokens use DES), which the test process must not be run with. Its
 * PUTs are made atomic, as S3's are (see s3rver-atomic-put.mjs), and its keys may have segments longer than a
 * file name, as S3's may (see s3rver-long-segments.mjs).
 *
 * Usage: node --openssl-legacy-provider s3rver-server.mjs <directory>; prints {"ready":true,"port":N}.
 */
import S3rver from 's3rver';
import { announce, exitWithParent } from './parent-watch.mjs';
import { patchS3rverForAtomicPuts } from './s3rver-atomic-put.mjs';
import { patchS3rverForLongSegments } from './s3rver-long-segments.mjs';

const directory = process.argv[2];
if (!directory) {
  process.stderr.write('usage: s3rver-server.mjs <directory>\n');
  process.exit(2);
}
patchS3rverForAtomicPuts();
patchS3rverForLongSegments();
const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory });
exitWithParent(() => server.close().catch(() => {}));
const { port } = await server.run();
announce({ port });
