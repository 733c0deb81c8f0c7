/**
 * Makes s3rver hold keys whose `/`-separated segments are longer than a file name, as S3 does.
 *
 * S3 bounds a whole key (1,024 bytes) and nothing else; s3rver makes each key segment a folder or file
 * name, which a file system bounds at 255 bytes, so a valid key such as a 100-character id of 3-byte
 * characters (900 bytes once percent-encoded) failed there with ENAMETOOLONG. Here a long segment is cut
 * into folders of at most {@link CHUNK_BYTES} bytes, each but the last ending with {@link CONTINUED}, and
 * joined again when keys are listed. catalog-sync's keys never contain `&` (it is percent-encoded), so the
 * marker cannot be read into a real key.
 *
 * Listing with a prefix that ends inside a cut segment finds nothing: catalog-sync lists whole segments only.
 */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** Leaves room, within 255 bytes, for s3rver's `._S3rver_metadata.json` and the atomic PUT's staging suffix. */
const CHUNK_BYTES = 180;
const CONTINUED = '&+';

function cut(segment) {
  if (Buffer.byteLength(segment) <= CHUNK_BYTES) return segment;
  const chunks = [];
  let chunk = '';
  for (const character of segment) {
    if (Buffer.byteLength(chunk + character) > CHUNK_BYTES) {
      chunks.push(chunk);
      chunk = '';
    }
    chunk += character;
  }
  chunks.push(chunk);
  return chunks.join(`${CONTINUED}/`);
}

/** Patches s3rver's filesystem store, for every server of this process. */
export function patchS3rverForLongSegments() {
  const FilesystemStore = require('s3rver/lib/stores/filesystem.js');
  const encode = FilesystemStore.encodeKeyPath;
  const decode = FilesystemStore.decodeKeyPath;
  FilesystemStore.encodeKeyPath = (key) => encode(key).split('/').map(cut).join('/');
  FilesystemStore.decodeKeyPath = (keyPath) => decode(keyPath.split(`${CONTINUED}/`).join(''));
}
