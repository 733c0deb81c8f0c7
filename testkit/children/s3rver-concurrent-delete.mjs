/**
 * Makes s3rver's DELETE of an object safe to run many at once, as S3's is.
 *
 * s3rver keeps objects as files in folders, one folder per `/`-segment of the key, and after a DELETE it removes
 * the folders left empty (read the folder; empty, remove it). Two DELETEs of keys in the same folder at once (the
 * view rebuild removes its record objects 64 at a time) both find it empty, and the second `rmdir` fails (ENOENT),
 * or a folder another request just wrote into is not empty any more (ENOTEMPTY): s3rver then answers 500
 * InternalError, though the object is gone. S3 has no folders. Here that tidying is best effort: the object's own
 * files are removed first (errors there still fail the DELETE), and a folder already removed or no longer empty
 * is left as it is.
 */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** Patches s3rver's filesystem store, for every server of this process. */
export function patchS3rverForConcurrentDeletes() {
  const FilesystemStore = require('s3rver/lib/stores/filesystem.js');
  const deleteObject = FilesystemStore.prototype.deleteObject;
  FilesystemStore.prototype.deleteObject = async function concurrentDeleteObject(bucket, key) {
    try {
      await deleteObject.call(this, bucket, key);
    } catch (error) {
      // Only the empty-folder tidying after the unlinks raises these (the unlinks ignore ENOENT themselves).
      if (error?.code !== 'ENOENT' && error?.code !== 'ENOTEMPTY') throw error;
    }
  };
}
