/**
 * A package's bytes checked against its leaf (issue 33, part 1): on the main thread for a small package and on the
 * worker thread for a larger one (lambda/feed/off-thread-hash.ts), the same answers: the leaf's SHA-512 and size pass,
 * a wrong hash or size is a PackageMismatchError at the end (before the last piece is taken as the end), a body that
 * grows past the leaf's size stops at that piece, and a body that fails leaves the worker nothing to hold. The digests
 * expected are computed here with node:crypto over the whole bytes at once, not through the code under test.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { PackageMismatchError, verifiedBody } from '../../lambda/feed/index.js';
import { HASHED_OFF_THREAD_ABOVE } from '../../lambda/feed/verified-body.js';
import { PIECE_BYTES, WINDOW_BYTES } from '../../lambda/feed/off-thread-hash.js';
import { mulberry32 } from '../../testkit/index.js';

const URL = 'https://source.example.test/flat/x/1.0.0/x.1.0.0.nupkg';

/** `size` seeded bytes in pieces of 1-100,000 bytes (as a socket gives them). */
function bodyOf(size: number, seed: number): { pieces: Buffer[]; whole: Buffer } {
  const random = mulberry32(seed);
  const whole = Buffer.alloc(size);
  for (let i = 0; i < size; i += 4) whole.writeUInt32LE(random.int(0, 0xffffffff) >>> 0, Math.min(i, size - 4));
  const pieces: Buffer[] = [];
  for (let at = 0; at < size; ) {
    const length = Math.min(size - at, random.int(1, 100_000));
    pieces.push(whole.subarray(at, at + length));
    at += length;
  }
  return { pieces, whole };
}

async function* stream(pieces: readonly Buffer[], failAfter?: number): AsyncGenerator<Uint8Array> {
  for (const [i, piece] of pieces.entries()) {
    if (i === failAfter) throw new Error('connection reset');
    yield piece;
  }
}

async function drain(body: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const got: Uint8Array[] = [];
  for await (const piece of body) got.push(piece);
  return Buffer.concat(got);
}

const sha512 = (bytes: Buffer) => createHash('sha512').update(bytes).digest('base64');

describe.each([
  ['on the main thread', 300_000],
  ['on the worker thread', HASHED_OFF_THREAD_ABOVE + PIECE_BYTES * 2 + WINDOW_BYTES + 12_345],
])('a package checked %s', (_where, size) => {
  const { pieces, whole } = bodyOf(size, size);

  it('passes its bytes through, unchanged, when they are the leaf’s', async () => {
    const out = await drain(verifiedBody(stream(pieces), { hash: sha512(whole), size }, URL));
    expect(out.equals(whole)).toBe(true);
  });

  it('a wrong hash, or a size short of the leaf’s, is a PackageMismatchError at the end', async () => {
    const wrong = Buffer.from(whole);
    wrong[size - 1] = wrong[size - 1]! ^ 1;
    const error = await drain(verifiedBody(stream(pieces), { hash: sha512(wrong), size }, URL)).catch((e) => e);
    expect(error).toBeInstanceOf(PackageMismatchError);
    expect((error as Error).message).toContain(URL);
    const short = await drain(verifiedBody(stream(pieces.slice(0, -1)), { hash: sha512(whole), size }, URL)).catch(
      (e) => e,
    );
    expect(short).toBeInstanceOf(PackageMismatchError);
  });

  it('a body longer than the leaf says stops at the piece that passes its size', async () => {
    let read = 0;
    const counted = (async function* () {
      for (const piece of [...pieces, Buffer.alloc(10)]) {
        read++;
        yield piece;
      }
    })();
    const error = await drain(verifiedBody(counted, { hash: sha512(whole), size }, URL)).catch((e) => e);
    expect(error).toBeInstanceOf(PackageMismatchError);
    expect(read).toBe(pieces.length + 1);
  });

  it('a body that fails throws its own error, and the next package is checked as well', async () => {
    const failed = await drain(
      verifiedBody(stream(pieces, Math.floor(pieces.length / 2)), { hash: sha512(whole), size }, URL),
    ).catch((e) => e);
    expect((failed as Error).message).toBe('connection reset');
    const out = await drain(verifiedBody(stream(pieces), { hash: sha512(whole), size }, URL));
    expect(out.length).toBe(size);
  });
});

describe('packages checked on the worker thread at once', () => {
  it('each gets its own digest, whatever the order their pieces arrive in', async () => {
    const size = HASHED_OFF_THREAD_ABOVE + PIECE_BYTES + 777;
    const bodies = [1, 2, 3].map((seed) => bodyOf(size + seed, seed));
    const outs = await Promise.all(
      bodies.map(({ pieces, whole }) =>
        drain(verifiedBody(stream(pieces), { hash: sha512(whole), size: whole.length }, URL)),
      ),
    );
    outs.forEach((out, i) => expect(out.equals(bodies[i]!.whole)).toBe(true));
  });
});
