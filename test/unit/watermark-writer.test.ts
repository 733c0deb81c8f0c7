/**
 * `watermark.json` during a run: at most once per interval, only cursors told stored, one write at a time, and
 * the closing write after any write in flight. A clock the test moves; a snapshot store that records.
 */
import { describe, expect, it } from 'vitest';
import { parseTimestamp } from '../../lambda/contract/time.js';
import type { CursorState, SnapshotStore } from '../../lambda/stores/types.js';
import { WatermarkWriter, WATERMARK_INTERVAL_MS } from '../../lambda/sync/watermark.js';

const quiet = { info() {}, warn() {}, error() {} };

function stateAt(second: number): CursorState {
  const stored = `2024-01-01T00:00:${String(second).padStart(2, '0')}.0000000Z`;
  return { value: parseTimestamp(stored), stored, commitId: `commit-${second}` };
}

/** Records each conditional PUT; a PUT completes (written) only when the test says so. `stored` is the watermark a GET finds. */
function recordingStore(stored: { cursor: string } | undefined = undefined) {
  const puts: { key: string; cursor: string; done: () => void; fail: (error: Error) => void }[] = [];
  const store = {
    getTagged: async () =>
      stored === undefined ? undefined : { bytes: Buffer.from(JSON.stringify(stored)), tag: 'stored' },
    putJsonIf: (key: string, value: unknown) =>
      new Promise<boolean>((resolve, reject) =>
        puts.push({ key, cursor: (value as { cursor: string }).cursor, done: () => resolve(true), fail: reject }),
      ),
  } as unknown as SnapshotStore;
  return { store, puts };
}

const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('WatermarkWriter', () => {
  it('writes none in the first interval of a run, then at most one per interval, none while one is in flight', async () => {
    let now = 10_000;
    const { store, puts } = recordingStore();
    const writer = new WatermarkWriter(store, 'p/', quiet, WATERMARK_INTERVAL_MS, () => now);
    writer.cursorStored(stateAt(1));
    now += 999;
    writer.cursorStored(stateAt(2));
    expect(puts).toHaveLength(0);
    now += 1;
    writer.cursorStored(stateAt(3));
    await settle();
    expect(puts.map((p) => [p.key, p.cursor])).toEqual([['p/watermark.json', stateAt(3).stored]]);
    now += 5_000;
    // In flight: none begun beside it, however late.
    writer.cursorStored(stateAt(4));
    expect(puts).toHaveLength(1);
    puts[0]!.done();
    await settle();
    // More than an interval since the last one began: at once.
    writer.cursorStored(stateAt(5));
    await settle();
    puts[1]!.done();
    await settle();
    now += 999;
    writer.cursorStored(stateAt(6));
    expect(puts).toHaveLength(2);
    now += 1;
    writer.cursorStored(stateAt(7));
    await settle();
    expect(puts.map((p) => p.cursor)).toEqual([stateAt(3).stored, stateAt(5).stored, stateAt(7).stored]);
  });

  it('the closing write waits for the one in flight, so an older watermark never lands after it', async () => {
    let now = 0;
    const { store, puts } = recordingStore();
    const writer = new WatermarkWriter(store, '', quiet, 1_000, () => now);
    now = 1_000;
    writer.cursorStored(stateAt(7));
    const closing = writer.finish(stateAt(9));
    await settle();
    expect(puts).toHaveLength(1);
    puts[0]!.done();
    await settle();
    expect(puts.map((p) => p.cursor)).toEqual([stateAt(7).stored, stateAt(9).stored]);
    puts[1]!.done();
    await closing;
    expect(writer.writes).toBe(2);
  });

  it('skips the closing write when its cursor is written already; a failed write during the run is only logged, the closing one throws', async () => {
    let now = 0;
    const { store, puts } = recordingStore();
    const warnings: string[] = [];
    const writer = new WatermarkWriter(
      store,
      '',
      { ...quiet, warn: (message) => warnings.push(message) },
      1_000,
      () => now,
    );
    now = 1_000;
    writer.cursorStored(stateAt(7));
    await settle();
    puts[0]!.done();
    await writer.finish(stateAt(7));
    expect(puts).toHaveLength(1);
    now = 2_000;
    writer.cursorStored(stateAt(8));
    await settle();
    puts[1]!.fail(new Error('S3 said no'));
    await settle();
    expect(warnings).toEqual(['could not write watermark.json during the run']);
    const closing = writer.finish(stateAt(8));
    await settle();
    puts[2]!.fail(new Error('S3 said no again'));
    await expect(closing).rejects.toThrow('S3 said no again');
  });

  it('never moves the stored watermark back: a cursor at or before it writes nothing', async () => {
    const { store, puts } = recordingStore({ cursor: stateAt(8).stored });
    const writer = new WatermarkWriter(store, '', quiet, 1_000, () => 0);
    await writer.finish(stateAt(5));
    await writer.finish(stateAt(8));
    expect(puts).toHaveLength(0);
    expect(writer.writes).toBe(0);
    const closing = writer.finish(stateAt(9));
    await settle();
    expect(puts.map((p) => p.cursor)).toEqual([stateAt(9).stored]);
    puts[0]!.done();
    await closing;
    expect(writer.writes).toBe(1);
  });
});
