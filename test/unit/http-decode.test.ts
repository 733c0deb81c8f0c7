import { randomBytes } from 'node:crypto';
import * as zlib from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decode, SYNC_DECODE_MAX_BYTES } from '../../lambda/catalog/http-decode.js';
import { BodyTooLargeError, FetchError } from '../../lambda/catalog/http-errors.js';

const URL = 'https://api.nuget.org/v3/catalog0/data/x.json';

const compressors: Record<string, (data: Buffer) => Buffer> = {
  gzip: (data) => zlib.gzipSync(data),
  deflate: (data) => zlib.deflateSync(data),
  br: (data) => zlib.brotliCompressSync(data),
};

/** Bytes that do not compress: a body of `n` of them stays about `n` bytes compressed. */
function incompressible(n: number): Buffer {
  return randomBytes(n);
}

describe('decode: small bodies (decoded synchronously) and large ones (off the event loop) alike', () => {
  for (const [encoding, compress] of Object.entries(compressors)) {
    it(`${encoding}: round-trips bodies below and above the synchronous threshold`, async () => {
      const small = Buffer.from(JSON.stringify({ id: 'Newtonsoft.Json', text: 'x'.repeat(5000) }));
      const large = incompressible(SYNC_DECODE_MAX_BYTES + 4096);
      expect(compress(small).length).toBeLessThanOrEqual(SYNC_DECODE_MAX_BYTES);
      expect(compress(large).length).toBeGreaterThan(SYNC_DECODE_MAX_BYTES);
      expect(await decode(URL, compress(small), encoding, 1 << 24)).toEqual(small);
      expect(await decode(URL, compress(large), encoding, 1 << 24)).toEqual(large);
    });

    it(`${encoding}: a small bomb stops at the limit as a BodyTooLargeError`, async () => {
      const bomb = compress(Buffer.alloc(8 * 1024 * 1024));
      expect(bomb.length).toBeLessThanOrEqual(SYNC_DECODE_MAX_BYTES);
      const error = await decode(URL, bomb, encoding, 1024 * 1024).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(BodyTooLargeError);
      expect((error as Error).message).toContain('decompressed body exceeds the limit of 1048576 bytes');
    });

    it(`${encoding}: a truncated small body is a retryable FetchError naming the coding`, async () => {
      const whole = compress(incompressible(2000));
      const error = await decode(URL, whole.subarray(0, whole.length - 10), encoding, 1 << 24).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(FetchError);
      expect((error as FetchError).retryable).toBe(true);
      expect((error as Error).message).toContain(`could not decompress ${encoding} body`);
    });
  }

  it('gives the same bytes as the asynchronous one-shot functions for any small body', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uint8Array({ maxLength: 4096 }),
        fc.constantFrom('gzip', 'deflate', 'br'),
        async (bytes, encoding) => {
          const data = Buffer.from(bytes);
          const compressed = compressors[encoding]!(data);
          const viaAsync = await new Promise<Buffer>((resolve, reject) =>
            (encoding === 'gzip' ? zlib.gunzip : encoding === 'deflate' ? zlib.inflate : zlib.brotliDecompress)(
              compressed,
              (e, out) => (e ? reject(e) : resolve(out)),
            ),
          );
          expect(await decode(URL, compressed, encoding, 1 << 24)).toEqual(viaAsync);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('passes identity bodies through and refuses an unknown coding', async () => {
    const raw = Buffer.from('{}');
    expect(await decode(URL, raw, ' Identity ', 10)).toBe(raw);
    await expect(decode(URL, raw, 'zstd', 10)).rejects.toThrow('unsupported Content-Encoding "zstd"');
  });
});
