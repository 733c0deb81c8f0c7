/**
 * The feed's objects as the server reads them: opened one at a time, streamed (never held whole in memory: a package
 * may be 250 MB), found through the folder's own file names (escaped and portable folders included) by the local
 * snapshot store, which also refuses a key no file of the folder can stand for.
 */
import type { Stats } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { ErrorCode, hasErrorCode } from '../contract/errors.js';
import type { LocalSnapshotStore } from '../stores/local-snapshot-store.js';

/** Bytes read from a file at a time while streaming it. */
const READ_CHUNK_BYTES = 64 * 1024;

/** One object of the feed, open: its size and time, then its bytes once (or closed unread). */
export interface FeedFile {
  readonly size: number;
  /** When it was last written, as `stat`'s `mtimeMs`. */
  readonly mtimeMs: number;
  /** Its bytes from `start` to `end` (both included; the whole file by default). The stream closes the file. */
  stream(range?: { readonly start: number; readonly end: number }): Readable;
  /** Closes the file without reading it (a HEAD, a 304, a 416). */
  close(): Promise<void>;
}

/** Where the server reads the feed's objects. */
export interface FeedFiles {
  /** The object of `key`, open; `undefined` when there is none (no such file, or a folder). */
  open(key: string): Promise<FeedFile | undefined>;
}

/** Errors of opening a path that mean "no such object": missing, a folder in the way, a name too long. */
const MISSING = new Set(['ENOENT', 'ENOTDIR', 'EISDIR', 'ENAMETOOLONG']);

/** The feed of a local folder, read through its snapshot store's file names. */
export function folderFeedFiles(store: Pick<LocalSnapshotStore, 'fileOf'>): FeedFiles {
  return {
    async open(key: string): Promise<FeedFile | undefined> {
      let path: string | undefined;
      try {
        path = await store.fileOf(key);
      } catch (error) {
        // A key no file can stand for (an empty or dot segment, a name too long once escaped) names no object.
        if (hasErrorCode(error, ErrorCode.localState)) return undefined;
        throw error;
      }
      if (path === undefined) return undefined;
      let handle: FileHandle;
      try {
        handle = await open(path, 'r');
      } catch (error) {
        if (MISSING.has((error as NodeJS.ErrnoException).code ?? '')) return undefined;
        throw error;
      }
      let stats: Stats;
      try {
        stats = await handle.stat();
      } catch (error) {
        await handle.close();
        throw error;
      }
      // A folder opens on Linux: it is no object (S3 has none either).
      if (!stats.isFile()) {
        await handle.close();
        return undefined;
      }
      return openFile(handle, stats);
    },
  };
}

/** The file behind `handle`, its size and time taken from the same open file (a rename meanwhile changes neither). */
function openFile(handle: FileHandle, stats: Stats): FeedFile {
  return {
    size: stats.size,
    mtimeMs: stats.mtimeMs,
    stream: (range) =>
      handle.createReadStream({
        ...(range === undefined ? {} : { start: range.start, end: range.end }),
        highWaterMark: READ_CHUNK_BYTES,
        autoClose: true,
      }),
    close: () => handle.close(),
  };
}
