/**
 * Reproduction of the invariant violation the chaos suite found (kill #2 of `--kind kill --seed 4`), fixed in
 * 9ea4581: a commit split across pages was released incomplete when two pages share the newest commit timestamp
 * and sort (by URL, as strings) in the wrong order: `page10.json` < `page9.json`. Exit 1 before the fix, 0 now.
 *
 *   npx tsx chaos/repro-split-pages.ts
 *
 * It picks a generated catalog whose page layout has that shape (pageSize 4, commits split across pages,
 * as the replica's `splitCommits` serves them), runs ONE engine slice from scratch into a local folder, and
 * reports (a) every cursor write at which some commit at or before the cursor was not stored whole
 * (checked at the instant of the write, as test/integration/sync.test.ts does), and (b) what verifyLocal
 * finds at the end. Exits 1 when the violation shows.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CatalogClient, HttpClient } from '../lambda/catalog/index.js';
import { formatTimestamp, parseSettings, parseTimestamp } from '../lambda/contract/index.js';
import { openLocalStores } from '../lambda/stores/index.js';
import { runSlice } from '../lambda/sync/index.js';
import {
  CatalogReplica,
  generateCatalog,
  type GeneratedCatalog,
  layoutPages,
  pagePath,
  parseTicks,
  RecordingCursorStore,
  verifyLocal,
} from '../testkit/index.js';

const PAGE_SIZE = 4;

/** Simulates the engine's page order (newest commit, then URL as a string) and release rule; returns a commit released twice. */
function doublyReleased(catalog: GeneratedCatalog): number | undefined {
  const pages = layoutPages(catalog.commits, PAGE_SIZE, true)
    .map((p) => ({
      url: pagePath(p.number),
      newest: parseTicks(p.newest.timestamp),
      commits: p.entries.map((e) => catalog.commits.indexOf(e.commit)),
    }))
    .sort((a, b) => (a.newest < b.newest ? -1 : a.newest > b.newest ? 1 : a.url < b.url ? -1 : a.url > b.url ? 1 : 0));
  const pending = new Set<number>();
  const released = new Set<number>();
  for (const page of pages) {
    for (const c of page.commits) {
      if (released.has(c)) return c;
      pending.add(c);
    }
    for (const c of [...pending]) {
      if (parseTicks(catalog.commits[c]!.timestamp) < page.newest) {
        pending.delete(c);
        released.add(c);
      }
    }
  }
  return undefined;
}

let catalog: GeneratedCatalog | undefined;
let victim: number | undefined;
for (let seed = 1; seed < 1000 && victim === undefined; seed++) {
  catalog = generateCatalog({ commits: 24, seed, leavesPerCommit: [1, 4] });
  victim = doublyReleased(catalog);
}
if (!catalog || victim === undefined) throw new Error('no catalog with the shape found');
const commit = catalog.commits[victim]!;
const layout = layoutPages(catalog.commits, PAGE_SIZE, true);
process.stdout.write(
  `catalog: ${catalog.commits.length} commits, ${layout.length} pages of ${PAGE_SIZE} (commits split across pages)\n`,
);
for (const page of layout.slice(-4)) {
  process.stdout.write(
    `  ${pagePath(page.number)} newest ${page.newest.timestamp}: commits ${page.entries.map((e) => `#${catalog!.commits.indexOf(e.commit)}`).join(' ')}\n`,
  );
}
process.stdout.write(
  `commit #${victim} (${commit.timestamp}, ${commit.leaves.length} leaves) is on two pages, and the engine reads them in the order above sorted by (newest, URL string)\n\n`,
);

const replica = await CatalogReplica.start({ catalog, pageSize: PAGE_SIZE, splitCommits: true, latencyMs: 5 });
let violations = 0;
try {
  violations += await scenario('1. one run from scratch', {});
  // 2. The same, bounded by a DEPENDS_ON cursor between the split commit and the newest: the run stops at a
  //    page of the shared-timestamp group before reading the other one.
  const bound = catalog.commits[victim + 1]!;
  violations += await scenario(`2. one run from scratch with DEPENDS_ON at commit #${victim + 1}`, {
    dependsOn: bound.timestamp,
  });
} finally {
  await replica.stop();
}
process.stdout.write(violations ? '\nVIOLATION reproduced\n' : '\nno violation\n');
process.exit(violations ? 1 : 0);

async function scenario(title: string, options: { dependsOn?: string }): Promise<number> {
  process.stdout.write(`\n${title}\n`);
  const dir = mkdtempSync(join(tmpdir(), 'catalog-sync-repro-'));
  const { cursors, runLog, snapshots } = openLocalStores(dir);
  const atWrite: string[] = [];
  const recording = new RecordingCursorStore(cursors, async (value) => {
    // Temporary files of the run's own writes in flight are not the point here.
    for (const problem of (await verifyLocal(dir, catalog!, replica.origin, value)).filter(
      (p) => !p.startsWith('temporary file'),
    )) {
      atWrite.push(`cursor written ${formatTimestamp(value)}: ${problem}`);
    }
  });
  if (options.dependsOn) {
    await cursors.compareAndSet('upstream', undefined, {
      value: parseTimestamp(options.dependsOn),
      commitId: 'x',
      runId: 'x',
    });
  }
  const settings = parseSettings({
    CATALOG_SOURCE: replica.serviceIndexUrl,
    CONCURRENCY: '4',
    ...(options.dependsOn ? { DEPENDS_ON: 'upstream' } : {}),
  });
  const http = new HttpClient({ connections: 4 });
  try {
    const summary = await runSlice(settings, {
      catalog: new CatalogClient(http, settings.source),
      cursors: recording,
      snapshots,
      runLog,
    });
    process.stdout.write(
      `   run: ${summary.stoppedBy}, ${summary.commits} commits completed, cursor ${summary.cursorAfter}\n`,
    );
    const atEnd = await verifyLocal(dir, catalog!, replica.origin, parseTimestamp(summary.cursorAfter));
    process.stdout.write(
      `   at the instant of a cursor write, commits at or before it not stored whole: ${atWrite.length}\n${atWrite.map((p) => `     ${p}\n`).join('')}`,
    );
    process.stdout.write(
      `   verifyLocal up to the cursor after the run: ${atEnd.length} problem(s)\n${atEnd.map((p) => `     ${p}\n`).join('')}`,
    );
    return atWrite.length + atEnd.length;
  } finally {
    await http.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
