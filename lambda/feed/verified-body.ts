import { createHash } from 'node:crypto';
import { PackageMismatchError, type PackageDigest } from './errors.js';
import { OffThreadHash } from './off-thread-hash.js';

/**
 * A package the leaf says is larger than this is hashed on a worker thread ({@link OffThreadHash}: a copy of its bytes
 * costs about a fifteenth of their hash); a smaller one on the main thread, where the copy and the hand-over would
 * cost more than they save.
 */
export const HASHED_OFF_THREAD_ABOVE = 1024 * 1024;

/**
 * `body` passed through as it is, its SHA-512 computed and its bytes counted on the way: the piece that would pass the
 * leaf's `packageSize` throws at once (a body far larger than the leaf says is not read to its end), and the end of a
 * body whose size or hash is not the leaf's throws before the last piece is taken as the end. Whoever stores the
 * pieces therefore sees the error before it makes the object visible, and stores nothing.
 *
 * @throws {@link PackageMismatchError} naming `url`, the leaf's digest and what was read.
 */
export async function* verifiedBody(
  body: AsyncIterable<Uint8Array>,
  expected: PackageDigest,
  url: string,
  /** Told the bytes of each piece as it passes (for figures). */
  onBytes?: (bytes: number) => void,
): AsyncGenerator<Uint8Array> {
  const offThread = expected.size > HASHED_OFF_THREAD_ABOVE ? new OffThreadHash() : undefined;
  const hash = offThread === undefined ? createHash('sha512') : undefined;
  let size = 0;
  try {
    for await (const piece of body) {
      size += piece.byteLength;
      if (size > expected.size) throw new PackageMismatchError(url, expected, { size });
      if (offThread !== undefined) await offThread.update(piece);
      else hash!.update(piece);
      onBytes?.(piece.byteLength);
      yield piece;
    }
    const actual = { size, hash: offThread !== undefined ? await offThread.digest() : hash!.digest('base64') };
    if (actual.size !== expected.size || actual.hash !== expected.hash)
      throw new PackageMismatchError(url, expected, actual);
  } finally {
    offThread?.drop();
  }
}
