import { watermarkKeyOf } from '../contract/keys.js';
import { parseTimestamp, type Ticks } from '../contract/time.js';
import type { CursorState, SnapshotStore, WriteOptions } from '../stores/types.js';
import type { EngineLogger } from './engine-deps.js';
import { watermarkOf } from './layout.js';

/**
 * During a long run, `watermark.json` is written at most once a second. A consumer polling it (the ordered reader
 * of `commits/`) then trails the cursor by about a second plus one checkpoint, while the cost stays negligible: a
 * follower busy all day pays at most 86,400 PUTs ($0.43 at $0.005 per 1,000), against the 40 million or so leaf
 * PUTs it makes in that day at 500 leaves a second. A run shorter than this writes only its closing watermark.
 */
export const WATERMARK_INTERVAL_MS = 1_000;

/**
 * Writes `watermark.json` after the cursor moves: while the run goes on, at most once per interval, with the
 * cursor the checkpointer has just stored; at the end of every run, moved or not, once more with the cursor stored
 * then (unless that one is written already), so a watermark left behind (a run killed between its last checkpoint
 * and its closing write, a failed closing write) catches up at the next run, even one with nothing to take. It only
 * ever writes a cursor it was told is stored, so it may lag the stored cursor, never lead it; one write at a time;
 * and each write is conditional on the watermark it read ({@link writeWatermarkForward}), so it only moves forward.
 */
export class WatermarkWriter {
  private readonly key: string;
  private lastWritten: Ticks | undefined;
  private lastStartedMs: number;
  private writing: Promise<void> | undefined;
  /** Watermarks written (during the run and at its end). */
  writes = 0;

  constructor(
    private readonly snapshots: SnapshotStore,
    prefix: string,
    private readonly logger: EngineLogger,
    private readonly intervalMs: number = WATERMARK_INTERVAL_MS,
    private readonly now: () => number = Date.now,
    /** Passed to every watermark read and write: the run's retry count and log, and the end of its closing writes. */
    private readonly writeOptions: WriteOptions = {},
  ) {
    this.key = watermarkKeyOf(prefix);
    // The first one during the run comes an interval after its start: a short run writes only its closing one.
    this.lastStartedMs = now();
  }

  /** The checkpointer stored `state`: writes it as the watermark, unless one is in flight or was begun within the interval. */
  cursorStored(state: CursorState): void {
    if (this.writing !== undefined || this.now() - this.lastStartedMs < this.intervalMs) return;
    this.writing = this.write(state)
      // The closing write says it when the store fails; one missed in between only leaves the watermark older.
      .catch((error: unknown) =>
        this.logger.warn('could not write watermark.json during the run', {
          error: (error as Error)?.message ?? String(error),
        }),
      )
      .finally(() => {
        this.writing = undefined;
      });
  }

  /** At the end of a run, with the cursor stored then: waits for a write in flight, then writes `state` unless it is written already. Throws when the store fails. */
  async finish(state: CursorState): Promise<void> {
    while (this.writing !== undefined) await this.writing;
    if (this.lastWritten === state.value) return;
    await this.write(state);
  }

  private async write(state: CursorState): Promise<void> {
    this.lastStartedMs = this.now();
    const wrote = await writeWatermarkForward(this.snapshots, this.key, state, this.writeOptions);
    this.lastWritten = state.value;
    if (wrote) this.writes++;
  }
}

/** The cursor of the mirror's `watermark.json` under `prefix`, or undefined when it has none. */
export async function readWatermarkCursor(snapshots: SnapshotStore, prefix: string): Promise<Ticks | undefined> {
  const cursor = cursorText(await snapshots.getJson(watermarkKeyOf(prefix)));
  return cursor === undefined ? undefined : parseTimestamp(cursor);
}

/** The `cursor` text of a watermark document, if it has one. */
function cursorText(value: unknown): string | undefined {
  const cursor = (value as { cursor?: unknown } | undefined)?.cursor;
  return typeof cursor === 'string' ? cursor : undefined;
}

/** The cursor of a stored watermark document, or undefined when there is none or it is not one (it is then replaced). */
function storedCursor(value: unknown): Ticks | undefined {
  const cursor = cursorText(value);
  if (cursor === undefined) return undefined;
  try {
    return parseTimestamp(cursor);
  } catch {
    return undefined;
  }
}

/** Rounds of read-and-conditional-write one watermark write makes before it leaves the watermark to the writers that keep winning. */
const MAX_WATERMARK_ROUNDS = 10;

/**
 * Writes the watermark `key` (`{prefix}watermark.json`) for `state` unless the stored one is at or past it, and says
 * whether it wrote: the watermark only ever moves forward, whatever cursor writes it. A refill backfill (its own
 * cursor, `--until` the follower's cursor at a `--refilter`) and its finish would otherwise put back an older one
 * while the follower had moved on, and a consumer bounded by it would wait (or re-read) for nothing.
 * The write is conditional on what was read (S3: `If-Match` on its ETag, `If-None-Match: *` when there is none; a
 * folder: under its state lock): when another writer changed it in between, it is read again and compared again,
 * so two writers of the same prefix never put an older value back (run A reads 5, run B writes 20, A's 10 is
 * refused and A finds 20). After {@link MAX_WATERMARK_ROUNDS} lost rounds it gives up (false): others are writing it.
 * `options.signal` ends the read and the write in flight.
 */
export async function writeWatermarkForward(
  snapshots: SnapshotStore,
  key: string,
  state: { readonly value: Ticks; readonly commitId?: string },
  options: WriteOptions = {},
): Promise<boolean> {
  const reads = options.signal === undefined ? {} : { signal: options.signal };
  for (let round = 0; round < MAX_WATERMARK_ROUNDS; round++) {
    const stored = await snapshots.getTagged(key, reads);
    const cursor = stored === undefined ? undefined : storedCursor(parsedOrUndefined(stored.bytes));
    if (cursor !== undefined && cursor >= state.value) return false;
    if (await snapshots.putJsonIf(key, watermarkOf(state.value, state.commitId), stored?.tag, options)) return true;
  }
  return false;
}

/** A stored document's JSON, or undefined when it is not JSON (a watermark that is not JSON is replaced). */
function parsedOrUndefined(bytes: Buffer): unknown {
  try {
    return JSON.parse(bytes.toString('utf8'));
  } catch {
    return undefined;
  }
}
