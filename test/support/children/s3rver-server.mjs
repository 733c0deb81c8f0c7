/**
 * s3rver on 127.0.0.1, in a child process of its own: it needs Node's `--openssl-legacy-provider`
 * (its ListObjectsV2 continuation tokens use DES), which the test process must not be run with.
 *
 * Usage: node --openssl-legacy-provider s3rver-server.mjs <directory>; prints {"ready":true,"port":N}.
 */
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createRequire } from 'node:module';
import S3rver from 's3rver';
import { announce, exitWithParent } from './parent-watch.mjs';

const require = createRequire(import.meta.url);
const FilesystemStore = require('s3rver/lib/stores/filesystem.js');
const S3Object = require('s3rver/lib/models/object.js');

/*
 * S3 replaces an object atomically: a GET sees the old object or the new one, never a mixture.
 * s3rver truncates the object file in place and streams the new body into it, so a GET that
 * overlaps a PUT of the same key reads a short body. Overlapping syncs rewrite the same leaves
 * (identical bytes) while a test reads them back, so the emulator must keep S3's promise:
 * each file is written aside and renamed into place.
 */
let staged = 0;
const stagingPath = (path) => `${path}.staging-${process.pid}-${++staged}`;

async function replaceFile(path, data) {
  const staging = stagingPath(path);
  try {
    await writeFile(staging, data);
    await rename(staging, path);
  } catch (error) {
    await rm(staging, { force: true });
    throw error;
  }
}

FilesystemStore.prototype.putMetadata = async function putMetadata(bucket, key, metadata, md5) {
  const json = {};
  for (const [name, value] of Object.entries(metadata)) {
    if (S3Object.ALLOWED_METADATA.includes(name) || name.startsWith('x-amz-meta-')) json[name] = value;
  }
  if (md5) await replaceFile(this.getResourcePath(bucket, key, 'object.md5'), md5);
  await replaceFile(this.getResourcePath(bucket, key, 'metadata.json'), JSON.stringify(json, null, 2));
};

FilesystemStore.prototype.putObject = async function putObject(object) {
  const objectPath = this.getResourcePath(object.bucket, object.key, 'object');
  await mkdir(dirname(objectPath), { recursive: true });
  const staging = stagingPath(objectPath);
  const md5 = createHash('md5');
  let size = 0;
  try {
    if (Buffer.isBuffer(object.content)) {
      md5.update(object.content);
      size = object.content.length;
      await writeFile(staging, object.content);
    } else {
      const measure = new Transform({
        transform(chunk, encoding, callback) {
          md5.update(chunk, encoding);
          size += chunk.length;
          callback(null, chunk);
        },
      });
      await pipeline(object.content, measure, createWriteStream(staging));
    }
    await rename(staging, objectPath);
  } catch (error) {
    await rm(staging, { force: true });
    throw error;
  }
  const digest = md5.digest('hex');
  await this.putMetadata(object.bucket, object.key, object.metadata, digest);
  return { size, md5: digest };
};

const directory = process.argv[2];
if (!directory) {
  process.stderr.write('usage: s3rver-server.mjs <directory>\n');
  process.exit(2);
}
const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory });
exitWithParent(() => server.close().catch(() => {}));
const { port } = await server.run();
announce({ port });
