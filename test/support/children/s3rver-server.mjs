/**
 * s3rver on 127.0.0.1, in a child process of its own: it needs Node's `--openssl-legacy-provider`
 * (its ListObjectsV2 continuation tokens use DES), which the test process must not be run with.
 *
 * Usage: node --openssl-legacy-provider s3rver-server.mjs <directory>; prints {"ready":true,"port":N}.
 */
import S3rver from 's3rver';
import { announce, exitWithParent } from './parent-watch.mjs';

const directory = process.argv[2];
if (!directory) {
  process.stderr.write('usage: s3rver-server.mjs <directory>\n');
  process.exit(2);
}
const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory });
exitWithParent(() => server.close().catch(() => {}));
const { port } = await server.run();
announce({ port });
