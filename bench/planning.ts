/**
 * Planning cost, in a process of its own (started with --expose-gc): a synthesized nuget.org-sized catalog
 * index (25,000 pages by default: realistic page URLs, commit ids, timestamps with 7 fractional digits, some
 * trimmed as nuget.org serves them, entries in shuffled order since the order is not defined) is parsed and
 * validated (`parseCatalogIndex`) and planned: for a backfill (`cutRanges` from the start of the catalog into ranges
 * of DEFAULT_RANGE_LEAVES leaves, and the ranges file they make) and for a warm follower (`pagesAfter` with the
 * cursor on the newest page: one page).
 *
 * The first iteration is what a cold Lambda pays (nothing JIT-compiled yet); the median of the others is a
 * warm one. Heap: what the parsed index keeps alive, and the peak growth while parsing.
 */
import { parseCatalogIndex } from '../lambda/catalog/parsers/index.js';
import { DEFAULT_RANGE_LEAVES, MIN_TICKS } from '../lambda/contract/index.js';
import { pagesAfter } from '../lambda/sync/index.js';
import { cutRanges } from '../lambda/backfill/index.js';
import { CATALOG_CONTEXT, formatTicks, TICKS_PER_SECOND, mulberry32 } from '../testkit/index.js';
import { profiled } from './profiler.js';
import { median, round } from './stats.js';

/** argv[2] of this process. */
export interface PlanningConfig {
  readonly pages: number;
  readonly iterations: number;
  readonly seed: number;
  /** When set, the first (cold) iteration runs under the V8 CPU profiler, written there. */
  readonly profileFile?: string;
}

export interface PlanningIteration {
  readonly parseMs: number;
  readonly planBackfillMs: number;
  readonly planFollowerMs: number;
  readonly totalMs: number;
}

export interface PlanningResult {
  readonly pages: number;
  readonly indexBytes: number;
  readonly cold: PlanningIteration;
  readonly warmMedian: PlanningIteration;
  /** Heap kept alive by the parsed index (after a full GC), MB. */
  readonly retainedHeapMB: number;
  /** Heap growth during the cold parse, before any GC, MB (an upper bound of the transient garbage). */
  readonly parseHeapGrowthMB: number;
  /** Peak RSS of the process, MB (Node itself is about 40 MB). */
  readonly maxRssMB: number;
  /** Pages planned for a backfill (in its ranges, lookahead pages not counted) and for a follower. */
  readonly backfillPages: number;
  /** Ranges of the backfill, and the size of its ranges file (what the Distributed Map's ItemReader reads). */
  readonly backfillRanges: number;
  readonly rangesFileBytes: number;
  /** Heap kept alive by the ranges (after a full GC, the index already parsed), MB. */
  readonly rangesHeapMB: number;
  readonly followerPages: number;
}

const INDEX_URL = 'https://api.nuget.org/v3/catalog0/index.json';

/** The index document, as nuget.org shapes it (compact JSON). */
export function synthesizeIndex(pages: number, seed: number): Buffer {
  const random = mulberry32(seed);
  const start = Date.parse('2015-02-01T06:22:45Z');
  const end = Date.parse('2025-06-01T00:00:00Z');
  const step = (end - start) / pages;
  const ordered = Array.from({ length: pages }, (_, i) => {
    const second = BigInt(Math.floor((start + i * step + random.next() * step * 0.9) / 1000));
    return {
      '@id': `https://api.nuget.org/v3/catalog0/page${i}.json`,
      '@type': 'CatalogPage',
      commitId: random.uuid(),
      // Seven fractional digits, sometimes with trailing zeros dropped as nuget.org serves them.
      commitTimeStamp: formatTicks(second * TICKS_PER_SECOND + BigInt(random.int(0, 9_999_999)), random.chance(0.1)),
      count: i === pages - 1 ? random.int(1, 549) : random.int(540, 550),
    };
  });
  const newest = ordered.at(-1)!;
  const items = random.shuffle(ordered);
  const document = {
    '@id': INDEX_URL,
    '@type': ['CatalogRoot', 'AppendOnlyCatalog', 'Permalink'],
    commitId: newest.commitId,
    commitTimeStamp: newest.commitTimeStamp,
    count: pages,
    'nuget:lastCreated': newest.commitTimeStamp,
    'nuget:lastDeleted': newest.commitTimeStamp,
    'nuget:lastEdited': newest.commitTimeStamp,
    items,
    '@context': CATALOG_CONTEXT,
  };
  return Buffer.from(JSON.stringify(document));
}

function gc(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

async function main(): Promise<void> {
  const config = JSON.parse(process.argv[2] ?? '{}') as PlanningConfig;
  const body = synthesizeIndex(config.pages, config.seed);
  gc();
  const iterations: PlanningIteration[] = [];
  let retainedHeapMB = 0;
  let parseHeapGrowthMB = 0;
  let backfillPages = 0;
  let followerPages = 0;
  let backfillRanges = 0;
  let rangesFileBytes = 0;
  let rangesHeapMB = 0;
  for (let i = 0; i < config.iterations; i++) {
    gc();
    const heap0 = process.memoryUsage().heapUsed;
    const { index, backfill, follower, t0, t1, t2, t3, heapAfterParse } = await profiled(
      i === 0 ? config.profileFile : undefined,
      async () => {
        const t0 = performance.now();
        const index = parseCatalogIndex(body, INDEX_URL);
        const t1 = performance.now();
        const heapAfterParse = process.memoryUsage().heapUsed;
        const backfill = cutRanges(index, MIN_TICKS, index.commitTicks, DEFAULT_RANGE_LEAVES, 'bench');
        const t2 = performance.now();
        // A follower's cursor sits inside the newest page: just after the second newest page's commit.
        const newestFirst = [...index.items].sort((a, b) =>
          a.commitTicks < b.commitTicks ? 1 : a.commitTicks > b.commitTicks ? -1 : 0,
        );
        const secondNewest = newestFirst[1]?.commitTicks ?? MIN_TICKS;
        const t2f = performance.now();
        const follower = pagesAfter(index, secondNewest);
        const t3 = performance.now() - (t2f - t2);
        return { index, backfill, follower, t0, t1, t2, t3, heapAfterParse };
      },
    );
    if (i === 0) {
      parseHeapGrowthMB = (heapAfterParse - heap0) / 1024 / 1024;
      backfillPages = backfill.reduce((n, range) => n + range.pages.length, 0);
      backfillRanges = backfill.length;
      rangesFileBytes = Buffer.byteLength(JSON.stringify(backfill));
      followerPages = follower.length;
      gc();
      const withRanges = process.memoryUsage().heapUsed;
      backfill.length = 0;
      gc();
      retainedHeapMB = (process.memoryUsage().heapUsed - heap0) / 1024 / 1024;
      rangesHeapMB = (withRanges - process.memoryUsage().heapUsed) / 1024 / 1024;
    }
    iterations.push({ parseMs: t1 - t0, planBackfillMs: t2 - t1, planFollowerMs: t3 - t2, totalMs: t3 - t0 });
    // Keep `index` alive until measured.
    if (index.items.length !== config.pages)
      throw new Error(`parsed ${index.items.length} pages, expected ${config.pages}`);
  }
  const pick = (key: keyof PlanningIteration, list: PlanningIteration[]): number =>
    round(median(list.map((it) => it[key])), 1);
  const rest = iterations.slice(1);
  const roundIt = (it: PlanningIteration): PlanningIteration => ({
    parseMs: round(it.parseMs, 1),
    planBackfillMs: round(it.planBackfillMs, 1),
    planFollowerMs: round(it.planFollowerMs, 2),
    totalMs: round(it.totalMs, 1),
  });
  const result: PlanningResult = {
    pages: config.pages,
    indexBytes: body.length,
    cold: roundIt(iterations[0]!),
    warmMedian:
      rest.length === 0
        ? roundIt(iterations[0]!)
        : {
            parseMs: pick('parseMs', rest),
            planBackfillMs: pick('planBackfillMs', rest),
            planFollowerMs: pick('planFollowerMs', rest),
            totalMs: pick('totalMs', rest),
          },
    retainedHeapMB: round(retainedHeapMB, 1),
    parseHeapGrowthMB: round(parseHeapGrowthMB, 1),
    maxRssMB: round(process.resourceUsage().maxRSS / 1024, 1),
    backfillPages,
    followerPages,
    backfillRanges,
    rangesFileBytes,
    rangesHeapMB: round(rangesHeapMB, 1),
  };
  process.send!({ type: 'result', result }, () => process.exit(0));
}

void main().catch((error: unknown) => {
  process.send?.({ type: 'error', error: String((error as Error)?.stack ?? error) }, () => process.exit(1));
});
