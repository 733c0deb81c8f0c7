/**
 * The rebuild's bounded memory: every identity's latest leaf, as read from the manifests, spilled to shard files by
 * a hash of the lowercased id, then read back one shard at a time. Each shard's records keep the order they were
 * added in (commit order, then manifest order), so the last record of an identity is its latest leaf, and the last
 * record of a package is its most recent leaf: what `applyCommit` keeps.
 */
import { mkdtemp, appendFile, rm } from 'node:fs/promises';
import { createReadStream } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ViewError } from './errors.js';
import { decodeLeafRecord, encodeLeafRecord, identityOf, shardOf, type LeafRecord } from './leaf-record.js';

export { fnv1a32, type LeafRecord } from './leaf-record.js';

/** Shard files by default: ~4 M identities of nuget.org in 64 shards is ~60 k identities in memory at once. */
export const DEFAULT_REBUILD_SHARDS = 64;
/** Records held before they are appended to the shard files (the latest per identity; ~250 bytes each in memory). */
export const DEFAULT_SPILL_BUFFER = 20_000;

/** Where the spill lives and how it is cut. */
export interface SpillOptions {
  /** Shard files (default {@link DEFAULT_REBUILD_SHARDS}). */
  readonly shards?: number;
  /** The folder the spill's own temporary folder is made in (default `os.tmpdir()`). */
  readonly tempDir?: string;
  /** Records buffered before they are written out (default {@link DEFAULT_SPILL_BUFFER}). */
  readonly buffer?: number;
  /** The mirror's prefix: a leaf key that is the one the follower makes is not written out, but made again. */
  readonly keyPrefix?: string;
}

/** Latest-leaf records in shard files under a temporary folder of their own; {@link remove} deletes it. */
export class LatestLeafSpill {
  /** Per shard, the latest record of each identity since the last flush, by `{lowercased id}\n{version}`. */
  private readonly buffers: Map<string, string>[];
  private buffered = 0;

  private constructor(
    readonly dir: string,
    readonly shards: number,
    private readonly limit: number,
    private readonly keyPrefix: string,
  ) {
    this.buffers = Array.from({ length: shards }, () => new Map<string, string>());
  }

  /** Makes the spill's folder (`catalog-sync-rebuild-*` under `tempDir`). */
  static async open(options: SpillOptions = {}): Promise<LatestLeafSpill> {
    const shards = options.shards ?? DEFAULT_REBUILD_SHARDS;
    const limit = options.buffer ?? DEFAULT_SPILL_BUFFER;
    if (!Number.isInteger(shards) || shards < 1)
      throw new ViewError(`rebuild shards ${shards}: must be a whole number >= 1`);
    if (!Number.isInteger(limit) || limit < 1)
      throw new ViewError(`rebuild spill buffer ${limit}: must be a whole number >= 1`);
    const parent = options.tempDir ?? tmpdir();
    let dir: string;
    try {
      dir = await mkdtemp(join(parent, 'catalog-sync-rebuild-'));
    } catch (cause) {
      throw new ViewError(`${parent}: cannot make the rebuild's temporary folder there: ${(cause as Error).message}`, {
        cause,
      });
    }
    return new LatestLeafSpill(dir, shards, limit, options.keyPrefix ?? '');
  }

  /** The shard of a package: FNV-1a of its lowercased id. */
  shardOf(lowerId: string): number {
    return shardOf(lowerId, this.shards);
  }

  /**
   * Adds a leaf, later than every one added before: it replaces its identity's buffered record and goes last.
   * True when the buffer is full: {@link flush} before adding more.
   */
  add(record: LeafRecord): boolean {
    const identity = identityOf(record);
    const buffer = this.buffers[this.shardOf(record.id.toLowerCase())]!;
    if (!buffer.delete(identity)) this.buffered++;
    buffer.set(identity, encodeLeafRecord(record, this.keyPrefix));
    return this.buffered >= this.limit;
  }

  /** Appends every buffered record to its shard file. */
  async flush(): Promise<void> {
    await Promise.all(
      this.buffers.map(async (buffer, shard) => {
        if (buffer.size === 0) return;
        const lines = `${[...buffer.values()].join('\n')}\n`;
        buffer.clear();
        await appendFile(this.fileOf(shard), lines);
      }),
    );
    this.buffered = 0;
  }

  /** A shard's records in the order they were added (call {@link flush} first). */
  async *records(shard: number): AsyncGenerator<LeafRecord> {
    const stream = createReadStream(this.fileOf(shard), { encoding: 'utf8' });
    const opened = new Promise<boolean>((resolve, reject) => {
      stream.once('open', () => resolve(true));
      stream.once('error', (error: NodeJS.ErrnoException) =>
        error.code === 'ENOENT' ? resolve(false) : reject(error),
      );
    });
    // A shard no package hashed to has no file.
    if (!(await opened)) return;
    // Lines split by hand: the engine does not load node:readline (a terminal's module).
    let rest = '';
    for await (const chunk of stream as AsyncIterable<string>) {
      const lines = (rest + chunk).split('\n');
      rest = lines.pop()!;
      for (const line of lines) if (line !== '') yield this.recordOf(line);
    }
    if (rest !== '') yield this.recordOf(rest);
  }

  /** Deletes the spill's folder and everything in it. */
  async remove(): Promise<void> {
    await rm(this.dir, { recursive: true, force: true });
  }

  private fileOf(shard: number): string {
    return join(this.dir, `shard-${shard}.jsonl`);
  }

  private recordOf(line: string): LeafRecord {
    return decodeLeafRecord(line, this.keyPrefix);
  }
}
