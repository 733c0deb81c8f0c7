/**
 * The mirror the latest view's rows of `npm run bench` run on (view-upkeep.ts on an in-memory S3, view-folder.ts on
 * a folder): nuget.org's shape, and the peak memory of what runs on it.
 */
import { commitKey, formatTimestamp } from '../lambda/contract/index.js';
import type { Prng } from '../testkit/index.js';
import { round } from './stats.js';

/**
 * Fills a mirror (through `put`) with `commits` commits of nuget.org's shape: about 3 leaves a commit and 3 leaves an identity, 10
 * versions a package (nuget.org: ~12 M leaves, ~4 M identities, ~400 k packages), so `commits / 10` packages.
 */
export function fillNugetShaped(put: (key: string, bytes: Buffer) => void, commits: number, random: Prng): number {
  const base = 637_134_336_000_000_000n;
  const packages = Math.max(1, Math.floor(commits / 10));
  let leaves = 0;
  let last: { key: string; ticks: bigint } | undefined;
  for (let i = 0; i < commits; i++) {
    const ticks = base + BigInt(i) * 10_000_000n;
    const key = commitKey(ticks);
    const count = random.int(1, 5);
    const entries = [];
    const seen = new Set<string>();
    for (let n = 0; n < count; n++) {
      const id = `Package.${random.int(0, packages - 1)}`;
      const version = `1.${random.int(0, 4)}.${random.int(0, 1)}`;
      if (seen.has(`${id}/${version}`)) continue;
      seen.add(`${id}/${version}`);
      const type = random.chance(0.05) ? 'PackageDelete' : 'PackageDetails';
      const leafKey = `leaves/${key}/${id.toLowerCase()}/${version}.json`;
      const body =
        type === 'PackageDelete'
          ? { id, version }
          : {
              id,
              version,
              listed: !random.chance(0.1),
              ...(random.chance(0.1) ? { deprecation: { '@id': 'x', reasons: ['Legacy'] } } : {}),
            };
      put(leafKey, Buffer.from(JSON.stringify(body)));
      entries.push({ key: leafKey, id, version, type });
    }
    entries.sort((a, b) => (a.key < b.key ? -1 : 1));
    leaves += entries.length;
    put(
      `commits/${key}.json`,
      Buffer.from(
        JSON.stringify({
          commitId: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
          commitTimeStamp: formatTimestamp(ticks),
          leaves: entries,
        }),
      ),
    );
    last = { key, ticks };
  }
  if (last)
    put(
      'watermark.json',
      Buffer.from(
        JSON.stringify({
          cursor: formatTimestamp(last.ticks),
          commitId: null,
          commitKey: last.key,
          updatedAt: new Date().toISOString(),
        }),
      ),
    );
  return leaves;
}

/**
 * Runs `action` while sampling the RSS every 10 ms: its peak growth above the level at the start, MB (garbage not
 * yet collected included). With `node --expose-gc`, also the live heap's peak growth: a full collection every
 * 500 ms, then `heapUsed` (what the rebuild holds, without its garbage).
 */
export async function withPeakMemory<T>(
  action: () => Promise<T>,
): Promise<{ result: T; peakRssGrowthMb: number; peakLiveHeapGrowthMb: number | null }> {
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  const start = process.memoryUsage.rss();
  const heapStart = process.memoryUsage().heapUsed;
  let peak = start;
  let heapPeak = heapStart;
  let ticks = 0;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage.rss());
    if (gc !== undefined && ++ticks % 50 === 0) {
      gc();
      heapPeak = Math.max(heapPeak, process.memoryUsage().heapUsed);
    }
  }, 10);
  try {
    const result = await action();
    peak = Math.max(peak, process.memoryUsage.rss());
    return {
      result,
      peakRssGrowthMb: round((peak - start) / 1048576, 1),
      peakLiveHeapGrowthMb: gc === undefined ? null : round((heapPeak - heapStart) / 1048576, 1),
    };
  } finally {
    clearInterval(sampler);
  }
}
