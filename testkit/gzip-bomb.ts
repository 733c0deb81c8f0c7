/**
 * A gzip body of about 1 MB that inflates to 1 GiB of zeros, for testing that a client bounds the
 * size of what it decompresses.
 *
 * Compressing 1 GiB takes seconds, so the body is assembled instead: deflate output for 1 MiB of
 * zeros ending in a full flush does not depend on anything before it, so 1,024 copies of it form
 * one valid deflate stream. Built once per process, on first use.
 */
import { constants, crc32, createDeflateRaw } from 'node:zlib';

/** Bytes the bomb inflates to. */
export const GZIP_BOMB_INFLATED_BYTES = 1024 * 1024 * 1024;

const CHUNK = Buffer.alloc(1024 * 1024);
let cached: Promise<Buffer> | undefined;

/** The bomb (a single gzip member, correct CRC and length). */
export function gzipBomb(): Promise<Buffer> {
  cached ??= build();
  return cached;
}

async function build(): Promise<Buffer> {
  const segment = await fullyFlushedDeflate(CHUNK);
  const copies = GZIP_BOMB_INFLATED_BYTES / CHUNK.length;
  let crc = 0;
  for (let i = 0; i < copies; i++) crc = crc32(CHUNK, crc);
  // ID1 ID2, CM=deflate, no flags, no mtime, XFL=2 (max compression), OS=unknown.
  const header = Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 2, 255]);
  // An empty final fixed-Huffman block ends the deflate stream.
  const finalBlock = Buffer.from([0x03, 0x00]);
  const trailer = Buffer.alloc(8);
  trailer.writeUInt32LE(crc >>> 0, 0);
  trailer.writeUInt32LE(GZIP_BOMB_INFLATED_BYTES % 2 ** 32, 4);
  return Buffer.concat([header, ...Array<Buffer>(copies).fill(segment), finalBlock, trailer]);
}

function fullyFlushedDeflate(data: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const deflate = createDeflateRaw({ level: 9 });
    const out: Buffer[] = [];
    deflate.on('data', (chunk: Buffer) => out.push(chunk));
    deflate.on('error', reject);
    deflate.write(data);
    deflate.flush(constants.Z_FULL_FLUSH, () => {
      resolve(Buffer.concat(out));
      deflate.destroy();
    });
  });
}
