/** The SlowDown gauge of the range worker's S3 store (lambda/stores/s3-backpressure.ts): halve, window, raise. */
import { describe, expect, it } from 'vitest';
import { BackpressureSnapshotStore, SlowDownGauge } from '../../lambda/stores/s3-backpressure.js';
import type { SnapshotStore } from '../../lambda/stores/types.js';

describe('SlowDownGauge', () => {
  it('halves on a SlowDown, once per window of PUTs, and raises by one per clean window, up to max', () => {
    const gauge = new SlowDownGauge(32);
    gauge.slowDown();
    expect(gauge.limit).toBe(16);
    gauge.slowDown(); // the same burst: no second cut before 16 PUTs completed
    gauge.slowDown();
    expect(gauge.limit).toBe(16);
    for (let i = 0; i < 16; i++) gauge.release(true), gauge['active']++;
    expect(gauge.limit).toBe(17); // 16 clean PUTs since the last SlowDown: one more
    gauge.slowDown(); // a window passed since the cut: cut again
    expect(gauge.limit).toBe(8);
    expect(gauge.lowest).toBe(8);
    expect(gauge.slowDowns).toBe(4);
    for (let i = 0; i < 1000; i++) gauge.release(true), gauge['active']++;
    expect(gauge.limit).toBe(32);
    for (let i = 0; i < 10; i++) {
      gauge.slowDown();
      for (let j = 0; j < 40; j++) gauge.release(false), gauge['active']++;
    }
    expect(gauge.limit).toBe(1);
  });

  it('keeps the PUTs in flight under the limit', async () => {
    const gauge = new SlowDownGauge(4);
    gauge.slowDown(); // limit 2
    let inFlight = 0;
    let most = 0;
    const over: string[] = [];
    const releases: Array<() => void> = [];
    const inner: SnapshotStore = {
      putLeaf: () =>
        new Promise<void>((resolve) => {
          most = Math.max(most, ++inFlight);
          if (inFlight > gauge.limit) over.push(`${inFlight} in flight, limit ${gauge.limit}`);
          releases.push(() => {
            inFlight--;
            resolve();
          });
        }),
      putJson: async () => {},
      getJson: async () => undefined,
      getTagged: async () => undefined,
      putJsonIf: async () => true,
      deleteKey: async () => {},
      listKeys: async function* () {},
    };
    const store = new BackpressureSnapshotStore(inner, gauge);
    const puts = Array.from({ length: 10 }, (_, i) => store.putLeaf(`k${i}`, Buffer.from('x'), {}));
    let done = 0;
    void Promise.all(puts).then(() => (done = 10));
    while (done < 10) {
      await new Promise((resolve) => setImmediate(resolve));
      releases.shift()?.();
    }
    expect(over).toEqual([]);
    expect(most).toBeGreaterThan(2); // 2, raised by one after each clean window
    expect(gauge.inFlight).toBe(0);
  });
});
