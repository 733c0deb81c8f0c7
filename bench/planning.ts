/**
 * Planning cost, in a process of its own (started with --expose-gc): a synthesized nuget.org-sized catalog
 * index (25,000 pages by default: realistic page URLs, commit ids, timestamps with 7 fractional digits, some
 * trimmed as nuget.org serves them, entries in shuffled order since the order is not defined) is parsed and
 * validated (`parseCatalogIndex`) and planned (`pagesAfter`): for a backfill (cursor at the start: every page)
 * and for a warm follower (cursor on the newest page: one page).
 *
 * The first iteration is what a cold Lambda pays (nothing JIT-compiled yet); the median of the others is a
 * warm one. Heap: what the parsed index keeps alive, and the peak growth while parsing.
 */
import { parseCatalogIndex } from '../lambda/catalog/schemas.js';
import { MIN_TICKS } from '../lambda/catalog/timestamp.js';
import { pagesAfter } from '../lambda/sync/commit-stream.js';
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
  /** Pages planned for a backfill and for a follower. */
  readonly backfillPages: number;
  readonly followerPages: number;
}

const INDEX_URL = 'https://api.nuget.org/v3/catalog0/index.json';

/** A mulberry32 PRNG: deterministic input for every run. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function uuid(random: () => number): string {
  const hex = Array.from({ length: 32 }, () => Math.floor(random() * 16).toString(16)).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** `2015-02-01T06:22:45.8488496Z`, sometimes with trailing zeros dropped as nuget.org does. */
function timestamp(epochMs: number, ticks: number, random: () => number): string {
  const seconds = new Date(Math.floor(epochMs / 1000) * 1000).toISOString().slice(0, 19);
  let fraction = String(ticks).padStart(7, '0');
  if (random() < 0.1) fraction = fraction.replace(/0+$/, '');
  return fraction === '' ? `${seconds}Z` : `${seconds}.${fraction}Z`;
}

/** The index document, as nuget.org shapes it (compact JSON). */
export function synthesizeIndex(pages: number, seed: number): Buffer {
  const random = prng(seed);
  const start = Date.parse('2015-02-01T06:22:45Z');
  const end = Date.parse('2025-06-01T00:00:00Z');
  const step = (end - start) / pages;
  const items = Array.from({ length: pages }, (_, i) => {
    const ms = start + i * step + random() * step * 0.9;
    return {
      '@id': `https://api.nuget.org/v3/catalog0/page${i}.json`,
      '@type': 'CatalogPage',
      commitId: uuid(random),
      commitTimeStamp: timestamp(ms, Math.floor(random() * 10_000_000), random),
      count: i === pages - 1 ? 1 + Math.floor(random() * 549) : 540 + Math.floor(random() * 11),
    };
  });
  const newest = items.at(-1)!;
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
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
    '@context': {
      '@vocab': 'http://schema.nuget.org/catalog#',
      nuget: 'http://schema.nuget.org/schema#',
      items: { '@id': 'item', '@container': '@set' },
      parent: { '@type': '@id' },
      commitTimeStamp: { '@type': 'http://www.w3.org/2001/XMLSchema#dateTime' },
      'nuget:lastCreated': { '@type': 'http://www.w3.org/2001/XMLSchema#dateTime' },
      'nuget:lastDeleted': { '@type': 'http://www.w3.org/2001/XMLSchema#dateTime' },
      'nuget:lastEdited': { '@type': 'http://www.w3.org/2001/XMLSchema#dateTime' },
    },
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
  for (let i = 0; i < config.iterations; i++) {
    gc();
    const heap0 = process.memoryUsage().heapUsed;
    const { index, backfill, follower, t0, t1, t2, t3, heapAfterParse } = await profiled(i === 0 ? config.profileFile : undefined, async () => {
      const t0 = performance.now();
      const index = parseCatalogIndex(body, INDEX_URL);
      const t1 = performance.now();
      const heapAfterParse = process.memoryUsage().heapUsed;
      const backfill = pagesAfter(index, MIN_TICKS);
      const t2 = performance.now();
      // A follower's cursor sits inside the newest page: just after the second newest page's commit.
      const secondNewest = backfill.at(-2)?.commitTicks ?? MIN_TICKS;
      const follower = pagesAfter(index, secondNewest);
      const t3 = performance.now();
      return { index, backfill, follower, t0, t1, t2, t3, heapAfterParse };
    });
    if (i === 0) {
      parseHeapGrowthMB = (heapAfterParse - heap0) / 1024 / 1024;
      backfillPages = backfill.length;
      followerPages = follower.length;
      gc();
      retainedHeapMB = (process.memoryUsage().heapUsed - heap0) / 1024 / 1024;
    }
    iterations.push({ parseMs: t1 - t0, planBackfillMs: t2 - t1, planFollowerMs: t3 - t2, totalMs: t3 - t0 });
    // Keep `index` alive until measured.
    if (index.items.length !== config.pages) throw new Error(`parsed ${index.items.length} pages, expected ${config.pages}`);
  }
  const pick = (key: keyof PlanningIteration, list: PlanningIteration[]): number => round(median(list.map((it) => it[key])), 1);
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
        : { parseMs: pick('parseMs', rest), planBackfillMs: pick('planBackfillMs', rest), planFollowerMs: pick('planFollowerMs', rest), totalMs: pick('totalMs', rest) },
    retainedHeapMB: round(retainedHeapMB, 1),
    parseHeapGrowthMB: round(parseHeapGrowthMB, 1),
    maxRssMB: round(process.resourceUsage().maxRSS / 1024, 1),
    backfillPages,
    followerPages,
  };
  process.send!({ type: 'result', result }, () => process.exit(0));
}

void main().catch((error: unknown) => {
  process.send?.({ type: 'error', error: String((error as Error)?.stack ?? error) }, () => process.exit(1));
});
