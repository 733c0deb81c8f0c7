/**
 * Input the follower must not pass over in silence (issue 30, item 6). The catalog's commit times are assumed to
 * grow: the follower takes the commits after its cursor.
 * - A commit dated more than 15 minutes after the clock (a feed writer with a fast clock) would move the cursor past
 *   every genuine commit written after it with an earlier time: the run stops before it with an error naming it
 *   and its page, every commit before it stored and checkpointed.
 * - A commit appended behind the cursor (a clock that went back) is never taken: the run says so, a warning naming
 *   it and `behindCursor` in its summary, on S3 and in a folder; commits taken before (a page spans the cursor) and
 *   commits before `START_CURSOR` are not counted.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatTimestamp } from '../../lambda/contract/time.js';
import { LocalStore } from '../../lambda/stores/local-store.js';
import type { EngineDeps } from '../../lambda/sync/index.js';
import { generateCatalog, type GeneratedCatalog } from '../../testkit/catalog-generator.js';
import { CatalogReplica } from '../../testkit/catalog-replica.js';
import { formatTicks, parseTicks, TICKS_PER_MILLISECOND } from '../../testkit/catalog-time.js';
import { SyncHarness, commitTicks } from '../../testkit/sync-harness.js';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'catalog-sync-untrusted-time-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('a commit from the future', () => {
  it('stops the run before it with an error naming it and its page; everything before it is stored', async () => {
    const past = generateCatalog({ commits: 4, seed: 3061, leavesPerCommit: [1, 2] });
    const tomorrow = formatTicks(BigInt(Date.now() + 86_400_000) * TICKS_PER_MILLISECOND, false);
    const future = generateCatalog({ commits: 1, seed: 3062, start: tomorrow, leavesPerCommit: [1, 1] });
    const catalog: GeneratedCatalog = { commits: [...past.commits, ...future.commits] };
    const replica = await CatalogReplica.start({ catalog, pageSize: 10 });
    try {
      const harness = await SyncHarness.create();
      const error = (await harness.run(replica.serviceIndexUrl).catch((e: unknown) => e)) as {
        summary: {
          stoppedBy: string;
          cursorAfter: string;
          commits: number;
          error: { url: string; message: string; code: string };
        };
      };
      const lastPast = formatTimestamp(commitTicks(past, 3));
      expect(error.summary).toMatchObject({ stoppedBy: 'error', commits: 4, cursorAfter: lastPast });
      expect(error.summary.error.code).toBe('CS_ERR_INVALID_DOCUMENT');
      expect(error.summary.error.url).toMatch(/\/page0\.json$/);
      expect(error.summary.error.message).toContain(
        `commit ${formatTicks(parseTicks(tomorrow), false)} (${future.commits[0]!.commitId}) is dated more than 15 minutes after this machine's clock`,
      );
      expect(await harness.cursor()).toBe(lastPast);
    } finally {
      await replica.stop();
    }
  });
});

const subjects: { name: string; stores: (harness: SyncHarness, name: string) => Partial<EngineDeps> }[] = [
  { name: 'S3 + DynamoDB', stores: () => ({}) },
  {
    name: 'a folder',
    stores: (_harness, name) => {
      const store = new LocalStore(join(dir, name));
      return { cursors: store, snapshots: store, runLog: store };
    },
  },
];

describe.each(subjects.map((subject) => [subject.name, subject] as const))(
  'a commit appended behind the cursor, %s',
  (name, subject) => {
    it('is counted in behindCursor and logged by name; the commits taken before and those before START_CURSOR are not', async () => {
      const catalog = generateCatalog({ commits: 6, seed: 3063, leavesPerCommit: [1, 2] });
      const replica = await CatalogReplica.start({ catalog, pageSize: 20 });
      try {
        const harness = await SyncHarness.create();
        const stores = subject.stores(harness, `behind-${name.length}`);
        const warnings: { message: string; extra: Record<string, unknown> | undefined }[] = [];
        const logger = {
          info() {},
          error() {},
          warn: (message: string, extra?: Record<string, unknown>) => warnings.push({ message, extra }),
        };
        const first = await harness.run(replica.serviceIndexUrl, {}, { ...stores, logger });
        expect(first).toMatchObject({ stoppedBy: 'caught-up', commits: 6 });
        expect(first.behindCursor).toBeUndefined();
        // A writer whose clock went back appends a commit between the 3rd and 4th, then a genuine one after the cursor.
        const late = generateCatalog({
          commits: 1,
          seed: 3064,
          start: formatTicks(parseTicks(catalog.commits[2]!.timestamp) + 1n, false),
          leavesPerCommit: [1, 1],
        });
        const next = generateCatalog({
          commits: 1,
          seed: 3065,
          start: formatTicks(parseTicks(catalog.commits[5]!.timestamp) + 10_000_000n, false),
          leavesPerCommit: [1, 1],
        });
        replica.setCatalog({ commits: [...catalog.commits, ...late.commits, ...next.commits] });
        const second = await harness.run(replica.serviceIndexUrl, {}, { ...stores, logger });
        expect(second).toMatchObject({
          stoppedBy: 'caught-up',
          commits: 1,
          behindCursor: 1,
          cursorAfter: formatTicks(parseTicks(next.commits[0]!.timestamp), false),
        });
        const behind = warnings.filter((w) => w.message.startsWith('a commit appeared behind the cursor'));
        expect(behind.map((w) => [w.extra?.commitTimeStamp, w.extra?.commitId])).toEqual([
          [formatTicks(parseTicks(late.commits[0]!.timestamp), false), late.commits[0]!.commitId],
        ]);
        // A new mirror starting at the 3rd commit: the page spans its start, and nothing at or before it is counted
        // (it takes the 4th to 6th, the late one, whose time is after its start, and the newest).
        const fresh = await SyncHarness.create();
        const started = await fresh.run(
          replica.serviceIndexUrl,
          { START_CURSOR: catalog.commits[2]!.timestamp },
          subject.stores(fresh, `start-${name.length}`),
        );
        expect(started).toMatchObject({ stoppedBy: 'caught-up', commits: 5 });
        expect(started.behindCursor).toBeUndefined();
      } finally {
        await replica.stop();
      }
    });
  },
);
