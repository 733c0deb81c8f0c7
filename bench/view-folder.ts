/**
 * The latest view's folder row of `npm run bench`: a mirror of nuget.org's shape (view-shape.ts) written to a
 * temporary folder, then the view kept by `keepView` as `catalog-sync view --data-dir` keeps it (the folder's view
 * lock, durable writes, every default), then rebuilt by `rebuildView` into an empty view as `view --rebuild` does;
 * each again at `--concurrency 1`. Targets (issue 32): upkeep at least 1,000 commits/s, and neither slower at its
 * default concurrency than at 1 (the writers of one process once raced each other for the folder's lock).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { folderViewStores, keepView, rebuildView } from '../lambda/view/index.js';
import { LocalStore } from '../lambda/stores/index.js';
import { mulberry32 } from '../testkit/index.js';
import { round, timed } from './stats.js';
import { fillNugetShaped, withPeakMemory } from './view-shape.js';

/** What the folder row measured. */
export interface ViewFolderResult {
  readonly commits: number;
  readonly leaves: number;
  readonly upkeep: {
    readonly wallMs: number;
    readonly cpuMs: number;
    readonly commitsPerSec: number;
    readonly cpuPerLeafMs: number;
    readonly written: number;
    readonly batches: number;
    readonly peakRssGrowthMb: number;
  };
  readonly rebuild: Speed;
  /** The same at `--concurrency 1`. */
  readonly atConcurrency1: { readonly upkeep: Speed; readonly rebuild: Speed };
}

/** Wall and CPU of one pass over the folder's commits. */
export interface Speed {
  readonly wallMs: number;
  readonly cpuMs: number;
  readonly commitsPerSec: number;
}

/** Keeps, then rebuilds, the view of `commits` commits in a temporary folder (under `parent`, default the system's). */
export async function runViewFolderRow(options: {
  readonly commits: number;
  readonly seed: number;
  readonly log: (text: string) => void;
  readonly parent?: string;
}): Promise<ViewFolderResult> {
  const dir = await mkdtemp(join(options.parent ?? tmpdir(), 'catalog-sync-bench-view-'));
  try {
    // Written without fsyncs (it is the input, not what is measured); the view's own writes are durable.
    const filler = new LocalStore(dir, { durable: false });
    const objects: [string, Buffer][] = [];
    const leaves = fillNugetShaped(
      (key, bytes) => objects.push([key, bytes]),
      options.commits,
      mulberry32(options.seed),
    );
    for (let at = 0; at < objects.length; at += 64)
      await Promise.all(objects.slice(at, at + 64).map(([key, bytes]) => filler.putLeaf(key, bytes)));
    options.log(`latest view on a folder: ${options.commits} commits, ${leaves} leaves (${dir})`);
    const stores = folderViewStores(dir);
    const target = { documents: stores.documents, prefix: stores.prefix };
    const clear = () => rm(join(dir, 'packages'), { recursive: true, force: true });
    const upkeep = await withPeakMemory(() =>
      timed(() => keepView(target, { mirror: stores.mirror, cursors: stores.cursors })),
    );
    await clear();
    const rebuild = await timed(() => rebuildView(target, stores.mirror, stores.cursors));
    await clear();
    const one = { ...target, concurrency: 1 };
    const upkeep1 = await timed(() =>
      keepView(one, { mirror: stores.mirror, cursors: stores.cursors, name: 'view-bench-concurrency-1' }),
    );
    await clear();
    const rebuild1 = await timed(() => rebuildView(one, stores.mirror, stores.cursors));
    const speed = (measured: { wallMs: number; cpuMs: number }): Speed => ({
      wallMs: round(measured.wallMs, 0),
      cpuMs: round(measured.cpuMs, 0),
      commitsPerSec: round(options.commits / (measured.wallMs / 1000), 0),
    });
    const result: ViewFolderResult = {
      commits: options.commits,
      leaves,
      upkeep: {
        ...speed(upkeep.result),
        cpuPerLeafMs: round(upkeep.result.cpuMs / leaves, 3),
        written: upkeep.result.result.written,
        batches: upkeep.result.result.batches,
        peakRssGrowthMb: upkeep.peakRssGrowthMb,
      },
      rebuild: speed(rebuild),
      atConcurrency1: { upkeep: speed(upkeep1), rebuild: speed(rebuild1) },
    };
    options.log(`  ${viewFolderText(result).trimEnd()}`);
    return result;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The folder row's line in the report's text. */
export function viewFolderText(row: ViewFolderResult | undefined): string {
  if (row === undefined) return '';
  const { upkeep, rebuild, atConcurrency1: one } = row;
  return (
    `latest view on a folder: ${row.commits} commits (${row.leaves} leaves): upkeep ${upkeep.commitsPerSec} commits/s ` +
    `(${upkeep.wallMs} ms, ${upkeep.cpuMs} ms CPU = ${upkeep.cpuPerLeafMs} ms a leaf, ${upkeep.batches} batches, ${upkeep.written} indexes written, ` +
    `RSS +${upkeep.peakRssGrowthMb} MB at its peak); rebuild ${rebuild.commitsPerSec} commits/s (${rebuild.wallMs} ms, ${rebuild.cpuMs} ms CPU); ` +
    `at --concurrency 1: upkeep ${one.upkeep.commitsPerSec} commits/s (${one.upkeep.cpuMs} ms CPU), rebuild ${one.rebuild.commitsPerSec} commits/s (${one.rebuild.cpuMs} ms CPU)\n`
  );
}

if (import.meta.url === `file://${process.argv[1]}`) {
  // `node dist/bench/view-folder.js [commits] [parent folder]`: the folder row alone.
  const result = await runViewFolderRow({
    commits: Number(process.argv[2] ?? '4000'),
    seed: 23,
    log: (text) => console.log(text),
    ...(process.argv[3] === undefined ? {} : { parent: process.argv[3] }),
  });
  console.log(JSON.stringify(result));
}
