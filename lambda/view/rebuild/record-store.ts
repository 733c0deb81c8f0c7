/**
 * Where a rebuild's shuffle lives: its items files (the ranges and shards the maps hand out) and its record objects
 * (one per shard and range), in the mirror's bucket under `{prefix}view-rebuild/{id}/`, or in a folder. Record
 * objects are written whole, and a range written again writes the same bytes, so a range is redone, never patched.
 */
import { mkdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import {
  viewRebuildFilesPrefix,
  viewRebuildItemsKey,
  viewRecordsKey,
  type RebuildItemsName,
} from '../../contract/view-rebuild.js';
import { AtomicFileWriter } from '../../stores/atomic-file.js';
import type { SnapshotReader, SnapshotStore } from '../../stores/types.js';
import { forEachBounded } from '../commit-leaves.js';
import { ViewError } from '../errors.js';

/** Deletes in flight when a rebuild's files are removed from a bucket. */
const REMOVE_CONCURRENCY = 64;

/** A rebuild's items files and record objects. */
export interface RecordStore {
  /** e.g. `s3://bucket/prefix/view-rebuild/` or the folder: named in errors. */
  readonly where: string;
  /** Where an items file is (the S3 key a map's ItemReader reads, or the file's path). */
  itemsKey(rebuildId: string, items: RebuildItemsName): string;
  putItems(rebuildId: string, items: RebuildItemsName, list: readonly unknown[]): Promise<void>;
  /** An items file's list, or undefined when it is not stored. */
  getItems(rebuildId: string, items: RebuildItemsName): Promise<unknown[] | undefined>;
  putRecords(rebuildId: string, shard: number, range: number, bytes: Buffer): Promise<void>;
  /** A record object's bytes, or undefined when it is not stored. */
  getRecords(rebuildId: string, shard: number, range: number): Promise<Buffer | undefined>;
  /** Where a record object is, for errors. */
  recordsKey(rebuildId: string, shard: number, range: number): string;
  /** Removes every file of the rebuild (its items files and records); absent ones are fine. */
  remove(rebuildId: string): Promise<void>;
}

/** The rebuild's files in the mirror's own store (S3 on AWS): keys under `{prefix}view-rebuild/{id}/`. */
export class SnapshotRecordStore implements RecordStore {
  readonly where: string;
  constructor(
    private readonly store: Pick<SnapshotStore, 'putLeaf' | 'putJson' | 'getJson' | 'deleteKey'> & SnapshotReader,
    private readonly prefix: string,
    where: string,
  ) {
    this.where = where;
  }

  itemsKey(rebuildId: string, items: RebuildItemsName): string {
    return viewRebuildItemsKey(this.prefix, rebuildId, items);
  }

  async putItems(rebuildId: string, items: RebuildItemsName, list: readonly unknown[]): Promise<void> {
    await this.store.putJson(this.itemsKey(rebuildId, items), list);
  }

  async getItems(rebuildId: string, items: RebuildItemsName): Promise<unknown[] | undefined> {
    const value = await this.store.getJson(this.itemsKey(rebuildId, items));
    if (value === undefined) return undefined;
    if (!Array.isArray(value))
      throw new ViewError(`${this.where} ${this.itemsKey(rebuildId, items)}: not a JSON array of items`);
    return value;
  }

  async putRecords(rebuildId: string, shard: number, range: number, bytes: Buffer): Promise<void> {
    await this.store.putLeaf(this.recordsKey(rebuildId, shard, range), bytes, {});
  }

  getRecords(rebuildId: string, shard: number, range: number): Promise<Buffer | undefined> {
    return this.store.getBytes(this.recordsKey(rebuildId, shard, range));
  }

  recordsKey(rebuildId: string, shard: number, range: number): string {
    return viewRecordsKey(this.prefix, rebuildId, shard, range);
  }

  async remove(rebuildId: string): Promise<void> {
    const keys: string[] = [];
    for await (const key of this.store.listKeys(viewRebuildFilesPrefix(this.prefix, rebuildId))) keys.push(key);
    await forEachBounded(keys, REMOVE_CONCURRENCY, (key) => this.store.deleteKey(key));
  }
}

/**
 * The rebuild's files in a folder (a folder mirror's `.catalog-sync/view-rebuild/`, or `--temp-dir`): one folder a
 * rebuild, `{dir}/{id}/ranges.json`, `shards.json` and `records/{range}/{shard}.jsonl`, written atomically and
 * durably (a range marked done survives a power cut with its records), removed whole.
 */
export class FolderRecordStore implements RecordStore {
  private readonly writers = new Map<string, AtomicFileWriter>();
  constructor(readonly where: string) {}

  itemsKey(rebuildId: string, items: RebuildItemsName): string {
    return join(this.where, rebuildId, `${items}.json`);
  }

  async putItems(rebuildId: string, items: RebuildItemsName, list: readonly unknown[]): Promise<void> {
    await (await this.writerOf(rebuildId)).write(this.itemsKey(rebuildId, items), Buffer.from(JSON.stringify(list)));
  }

  async getItems(rebuildId: string, items: RebuildItemsName): Promise<unknown[] | undefined> {
    const path = this.itemsKey(rebuildId, items);
    const bytes = await readIfExists(path);
    if (bytes === undefined) return undefined;
    let value: unknown;
    try {
      value = JSON.parse(bytes.toString('utf8'));
    } catch (cause) {
      throw new ViewError(`${path}: not valid JSON`, { cause });
    }
    if (!Array.isArray(value)) throw new ViewError(`${path}: not a JSON array of items`);
    return value;
  }

  async putRecords(rebuildId: string, shard: number, range: number, bytes: Buffer): Promise<void> {
    await (await this.writerOf(rebuildId)).write(this.recordsKey(rebuildId, shard, range), bytes);
  }

  getRecords(rebuildId: string, shard: number, range: number): Promise<Buffer | undefined> {
    return readIfExists(this.recordsKey(rebuildId, shard, range));
  }

  recordsKey(rebuildId: string, shard: number, range: number): string {
    return join(this.where, rebuildId, 'records', String(range), `${shard}.jsonl`);
  }

  async remove(rebuildId: string): Promise<void> {
    this.writers.delete(rebuildId);
    await rm(join(this.where, checkedId(rebuildId)), { recursive: true, force: true });
  }

  /** The rebuild's writer, its folder made (the store's own folder must be makeable where it is). */
  private async writerOf(rebuildId: string): Promise<AtomicFileWriter> {
    const known = this.writers.get(rebuildId);
    if (known !== undefined) return known;
    const root = join(this.where, checkedId(rebuildId));
    try {
      await mkdir(this.where).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== 'EEXIST') throw error;
      });
      await mkdir(root, { recursive: true });
    } catch (cause) {
      throw new ViewError(`${this.where}: cannot make the rebuild's folder there: ${(cause as Error).message}`, {
        cause,
      });
    }
    const writer = new AtomicFileWriter(root, join(root, '.tmp'));
    this.writers.set(rebuildId, writer);
    return writer;
  }
}

/** A rebuild id as a folder name: base-62 only, so it can never leave the store's folder. */
function checkedId(rebuildId: string): string {
  if (!/^[0-9A-Za-z]+$/.test(rebuildId))
    throw new ViewError(`view rebuild id ${JSON.stringify(rebuildId)} is not a kuuid id`);
  return rebuildId;
}

async function readIfExists(path: string): Promise<Buffer | undefined> {
  try {
    return await readFile(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}
