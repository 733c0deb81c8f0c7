/**
 * Makes s3rver keep the promises of an S3 PUT that catalog-sync's tests and chaos suite rely on.
 *
 * S3 replaces an object atomically and answers a PUT once it is stored: a GET sees the old object or the
 * new one, whole, and a GET after the answer sees the new one. A body shorter than its Content-Length is
 * rejected, never stored. s3rver on its own truncates the object's file in place, streams the body into
 * it, and answers before the file is flushed; so a GET right after a PUT, or during an overwrite of the
 * same key, reads a short body, and a PUT torn by a client killed mid-body leaves a short object where a
 * whole one was. Here each file is written aside and renamed into place once complete.
 */
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';

const require = createRequire(import.meta.url);

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

/** Patches s3rver's filesystem store, for every server of this process. */
export function patchS3rverForAtomicPuts() {
  const FilesystemStore = require('s3rver/lib/stores/filesystem.js');
  const S3Object = require('s3rver/lib/models/object.js');

  FilesystemStore.prototype.putMetadata = async function putMetadata(bucket, key, metadata, md5) {
    const json = {};
    for (const [name, value] of Object.entries(metadata)) {
      if (S3Object.ALLOWED_METADATA.includes(name) || name.startsWith('x-amz-meta-')) json[name] = value;
    }
    if (md5) await replaceFile(this.getResourcePath(bucket, key, 'object.md5'), md5);
    await replaceFile(this.getResourcePath(bucket, key, 'metadata.json'), JSON.stringify(json, null, 2));
  };

  // A completed multipart upload is stored with the metadata of the request that began it, whose Content-Length (0)
  // is not the object's: the length check of putObject below would refuse every multipart object.
  const putObjectMultipart = FilesystemStore.prototype.putObjectMultipart;
  FilesystemStore.prototype.putObjectMultipart = async function putWholeMultipart(bucket, uploadId, parts) {
    const path = join(this.getResourcePath(bucket, undefined, 'uploads'), uploadId, 'metadata');
    const metadata = JSON.parse(await readFile(path, 'utf8'));
    delete metadata['content-length'];
    await writeFile(path, JSON.stringify(metadata));
    return putObjectMultipart.call(this, bucket, uploadId, parts);
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
      const declared = object.size;
      if (Number.isFinite(declared) && declared !== size) {
        throw new Error(`body of ${size} bytes, Content-Length ${declared}: an incomplete PUT is not stored`);
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
}
