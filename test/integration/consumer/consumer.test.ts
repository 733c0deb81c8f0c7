/**
 * The consumer (issue 22), on S3 + DynamoDB and on the local folder: a named consumer reading while the follower
 * runs, while a backfill writes ranges out of order, and two instances of one name at once. Every commit up to the
 * watermark is delivered in order, none skipped, none past the watermark (checked inside the handler, against the
 * watermark as stored at that moment), and the cursor only ever moves by conditional writes that never overlap.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  consume,
  consumerKey,
  ConsumeStop,
  readCommits,
  readWatermark,
  WakeUp,
  type Mirror,
  type MirrorCommit,
} from '../../../lambda/consumer/index.js';
import { commitKeyOf } from '../../../lambda/contract/keys.js';
import { formatTimestamp, parseTimestamp } from '../../../lambda/contract/time.js';
import type { CompareAndSetResult, CursorState, CursorStore, CursorTarget } from '../../../lambda/stores/types.js';
import { runSlice } from '../../../lambda/sync/index.js';
import { finishBackfill, planBackfill, runRange } from '../../../lambda/backfill/index.js';
import {
  openTarget,
  settingsOf,
  TARGET_KINDS,
  withDeps,
  type BackfillTarget,
} from '../../../testkit/backfill-harness.js';
import { generateCatalog, leafBody, type GeneratedCatalog } from '../../../testkit/catalog-generator.js';
import { CatalogReplica } from '../../../testkit/catalog-replica.js';
import { waitFor } from '../../../testkit/cli-process.js';
import { mulberry32 } from '../../../testkit/prng.js';
import { commitTicks } from '../../../testkit/sync-harness.js';

/** Every successful cursor write as `[from, to]` (stored values), across every instance sharing the store. */
class WriteLog implements CursorStore {
  readonly writes: [string | null, string][] = [];
  constructor(private readonly inner: CursorStore) {}
  read(name: string): Promise<CursorState | undefined> {
    return this.inner.read(name);
  }
  async compareAndSet(
    name: string,
    expected: CursorState | undefined,
    next: CursorTarget,
  ): Promise<CompareAndSetResult> {
    const result = await this.inner.compareAndSet(name, expected, next);
    if (result.outcome === 'written') this.writes.push([expected?.stored ?? null, formatTimestamp(next.value)]);
    return result;
  }
}

describe.each(TARGET_KINDS)('consumer: %s', (kind) => {
  let catalog: GeneratedCatalog;
  let replica: CatalogReplica;
  let allKeys: string[];
  const targets: BackfillTarget[] = [];

  beforeAll(async () => {
    catalog = generateCatalog({
      commits: 60,
      seed: 2222,
      leavesPerCommit: [1, 4],
      sameMillisecondPairs: 4,
      deleteRatio: 0.1,
    });
    replica = await CatalogReplica.start({ catalog, pageSize: 9 });
    allKeys = catalog.commits.map((commit) => commitKeyOf(commit.timestamp));
  });
  afterAll(async () => {
    await replica.stop();
    for (const target of targets) target.close();
  });

  async function fresh(): Promise<{ target: BackfillTarget; mirror: Mirror }> {
    const target = await openTarget(kind);
    targets.push(target);
    return { target, mirror: { store: target.stores.snapshots, prefix: '', where: kind } };
  }

  /** Problems of a delivered commit: past the watermark as stored now, or leaves whose bodies are not the served bytes. */
  async function check(mirror: Mirror, commit: MirrorCommit): Promise<string[]> {
    const problems: string[] = [];
    const watermark = await readWatermark(mirror);
    if (watermark === undefined || commit.commitKey > watermark.commitKey)
      problems.push(`${commit.commitKey} delivered past the watermark ${watermark?.commitKey}`);
    const generated = catalog.commits.find((c) => commitKeyOf(c.timestamp) === commit.commitKey);
    if (generated === undefined || generated.commitId !== commit.commitId)
      return [...problems, `${commit.commitKey}: not a commit of the catalog`];
    if (commit.leaves.length !== generated.leaves.length)
      problems.push(`${commit.commitKey}: ${commit.leaves.length} leaves, not ${generated.leaves.length}`);
    for (const leaf of commit.leaves) {
      const source = generated.leaves.find((l) => l.id === leaf.id && l.version === leaf.version);
      if (source === undefined || !(await leaf.body()).equals(Buffer.from(leafBody(catalog, source, replica.origin))))
        problems.push(`${leaf.key}: body differs`);
    }
    return problems;
  }

  it('reads while the follower runs: every commit, in order, never past the watermark, bodies exact', async () => {
    const { target, mirror } = await fresh();
    const settings = settingsOf(replica.serviceIndexUrl, { MAX_COMMITS: '7' });
    const wake = new WakeUp();
    const stop = new AbortController();
    const delivered: string[] = [];
    const problems: string[] = [];
    const running = consume(
      'indexer',
      async (commit, context) => {
        expect(context.idempotencyKey).toBe(commit.commitKey);
        problems.push(...(await check(mirror, commit)));
        delivered.push(commit.commitKey);
      },
      // Started before the follower's first write: its place holds no mirror yet, which it awaits.
      {
        mirror,
        cursors: target.stores.cursors,
        follow: true,
        wake,
        signal: stop.signal,
        poll: { minMs: 5, maxMs: 50 },
        checkpointEvery: 3,
        awaitMirror: true,
      },
    );
    let slices = 0;
    for (;;) {
      const summary = await withDeps(target, settings, (deps) => runSlice(settings, deps));
      slices++;
      wake.wake();
      if (summary.caughtUp) break;
    }
    expect(slices).toBeGreaterThan(5);
    const head = formatTimestamp(commitTicks(catalog, -1));
    await waitFor(
      async () => (await target.stores.cursors.read(consumerKey(mirror, 'indexer')))?.stored === head,
      'the consumer to checkpoint the head',
    );
    stop.abort();
    const result = await running;
    expect(problems).toEqual([]);
    expect(delivered).toEqual(allKeys);
    expect(result).toMatchObject({
      consumer: 'indexer',
      cursorBefore: null,
      cursorAfter: head,
      commits: 60,
      stoppedBy: ConsumeStop.aborted,
    });
    // The plain reader, from a time (inclusive) and after a key (exclusive), to the watermark.
    const since: string[] = [];
    for await (const commit of readCommits(mirror, { since: catalog.commits[10]!.timestamp }))
      since.push(commit.commitKey);
    expect(since).toEqual(allKeys.slice(10));
    const after: string[] = [];
    for await (const commit of readCommits(mirror, { after: allKeys[10]!, readAhead: 2 })) after.push(commit.commitKey);
    expect(after).toEqual(allKeys.slice(11));
  });

  it('during a backfill delivers nothing past the watermark though later manifests exist; then the rest in order', async () => {
    const { target, mirror } = await fresh();
    const first = settingsOf(replica.serviceIndexUrl, { MAX_COMMITS: '10' });
    await withDeps(target, first, (deps) => runSlice(first, deps));
    const settings = settingsOf(replica.serviceIndexUrl);
    const { plan, ranges } = await withDeps(target, settings, (deps) =>
      planBackfill(settings, deps, { rangeLeaves: 12 }),
    );
    expect(ranges.length).toBeGreaterThan(5);
    const delivered: string[] = [];
    const cursors = new WriteLog(target.stores.cursors);
    const options = { mirror, cursors, checkpointEvery: 2, checkpointIntervalMs: 60_000 };
    const tenth = formatTimestamp(commitTicks(catalog, 9));
    for (const range of mulberry32(22).shuffle([...ranges])) {
      await withDeps(target, settings, (deps) => runRange(settings, deps, range));
      const result = await consume('scanner', (commit) => void delivered.push(commit.commitKey), options);
      expect(result.cursorAfter).toBe(tenth);
    }
    const manifests = (await target.keys()).filter((key) => key.startsWith('commits/'));
    expect(manifests).toHaveLength(60);
    expect(delivered).toEqual(allKeys.slice(0, 10));
    await withDeps(target, settings, (deps) => finishBackfill(settings, deps, plan.backfillId));
    const result = await consume('scanner', (commit) => void delivered.push(commit.commitKey), options);
    expect(result).toMatchObject({
      cursorBefore: tenth,
      cursorAfter: formatTimestamp(commitTicks(catalog, -1)),
      commits: 50,
      stoppedBy: ConsumeStop.caughtUp,
    });
    expect(delivered).toEqual(allKeys);
    // Checkpoints: every two commits and at the end, each from the value the one before wrote.
    expect(cursors.writes[0]).toEqual([null, formatTimestamp(commitTicks(catalog, 1))]);
    for (let i = 1; i < cursors.writes.length; i++) expect(cursors.writes[i]![0]).toBe(cursors.writes[i - 1]![1]);
  });

  it('two instances of one name at once without a lease: ranges advanced never overlap, every commit delivered in order by someone', async () => {
    const { target, mirror } = await fresh();
    const settings = settingsOf(replica.serviceIndexUrl);
    await withDeps(target, settings, (deps) => runSlice(settings, deps));
    const cursors = new WriteLog(target.stores.cursors);
    const random = mulberry32(5);
    const run = async (): Promise<{ delivered: string[]; stoppedBy: string }> => {
      const delivered: string[] = [];
      const result = await consume(
        'twin',
        async (commit) => {
          // Each instance yields at random points, so the two interleave differently at each commit.
          for (let i = random.int(0, 3); i > 0; i--) await new Promise((resolve) => setImmediate(resolve));
          delivered.push(commit.commitKey);
        },
        // No lease (the write log keeps none): both run at once, the conditional writes alone keep them apart.
        { mirror, cursors, readAhead: 4, checkpointEvery: 1 },
      );
      return { delivered, stoppedBy: result.stoppedBy };
    };
    const [a, b] = await Promise.all([run(), run()]);
    for (const { delivered } of [a, b]) expect(delivered).toEqual(allKeys.slice(0, delivered.length));
    expect(new Set([...a.delivered, ...b.delivered])).toEqual(new Set(allKeys));
    expect([a.stoppedBy, b.stoppedBy]).toContain(ConsumeStop.lostRace);
    // Each write moved the cursor from what the write before stored: no commit was advanced past twice.
    expect(cursors.writes[0]![0]).toBeNull();
    for (let i = 1; i < cursors.writes.length; i++) {
      expect(cursors.writes[i]![0]).toBe(cursors.writes[i - 1]![1]);
      expect(parseTimestamp(cursors.writes[i]![1])).toBeGreaterThan(parseTimestamp(cursors.writes[i]![0]!));
    }
    expect(cursors.writes.at(-1)![1]).toBe(formatTimestamp(commitTicks(catalog, -1)));
  });

  it('a consumer never passes one it depends on; a failing handler leaves the cursor on the commit before it', async () => {
    const { target, mirror } = await fresh();
    const settings = settingsOf(replica.serviceIndexUrl);
    await withDeps(target, settings, (deps) => runSlice(settings, deps));
    const { cursors } = target.stores;
    const failOn = allKeys[7]!;
    await expect(
      consume(
        'upstream',
        (commit) => {
          if (commit.commitKey === failOn) throw new Error('index unavailable');
        },
        { mirror, cursors },
      ),
    ).rejects.toMatchObject({
      code: 'CS_ERR_CONSUMER_HANDLER',
      commitKey: failOn,
      cause: { message: 'index unavailable' },
    });
    expect((await cursors.read(consumerKey(mirror, 'upstream')))?.stored).toBe(
      formatTimestamp(commitTicks(catalog, 6)),
    );
    const downstream: string[] = [];
    const result = await consume('downstream', (commit) => void downstream.push(commit.commitKey), {
      mirror,
      cursors,
      dependsOn: ['upstream'],
    });
    expect(downstream).toEqual(allKeys.slice(0, 7));
    expect(result.cursorAfter).toBe(formatTimestamp(commitTicks(catalog, 6)));
    // A redelivery starts right after the last checkpoint: the failed commit comes first.
    const again: string[] = [];
    await consume('upstream', (commit) => void again.push(commit.commitKey), { mirror, cursors });
    expect(again).toEqual(allKeys.slice(7));
    await expect(consume('catalog-to-s3', () => undefined, { mirror, cursors })).rejects.toMatchObject({
      code: 'CS_ERR_CONSUMER',
    });
  });
});
