/**
 * The warm-Lambda checks, in a process of their own: one CatalogClient and one cursor store kept across
 * several runs of `runSlice`, as a warm Lambda keeps them between invocations, against a small replica of
 * its own (it is grown half-way, which would throw away the main replica's prepared documents).
 *
 * For every run it records, from the client side (a wrapper around HttpClient.get) and from the replica's
 * request log: the index requests and their status (200, or 304 to a conditional GET), the pages fetched
 * (checked: each at most once per run, and only pages newer than the cursor the run started from), and the
 * leaves.
 */
import { CatalogClient, type GetOptions, HttpClient, type HttpResponse } from '../lambda/catalog/index.js';
import { parseCatalogIndex } from '../lambda/catalog/parsers/index.js';
import { parseSettings, parseTimestamp, type Ticks } from '../lambda/contract/index.js';
import { awsClients, S3SnapshotStore } from '../lambda/stores/index.js';
import { runSlice } from '../lambda/sync/index.js';
import { MemoryCursorStore } from './memory-cursor-store.js';
import type { LogSummary } from './servers.js';

/** argv[2] of this process. */
export interface WarmConfig {
  readonly source: string;
  readonly catalogIndexUrl: string;
  readonly admin: string;
  readonly replica: string;
  readonly bucket: string;
  readonly cursorLatencyMs: number;
  readonly concurrency: number;
  /** MAX_LEAVES of the first two runs. */
  readonly sliceLeaves: number;
  /** Commits added to the catalog before the fifth run. */
  readonly appendCommits: number;
}

/** One run, as seen from both ends. */
export interface WarmRun {
  readonly run: number;
  readonly what: string;
  readonly cursorBefore: string;
  readonly cursorAfter: string;
  readonly stoppedBy: string;
  readonly leaves: number;
  readonly durationMs: number;
  /** Index GETs: status of each (200 full body, 304 not modified), whether conditional, bytes received. */
  readonly index: { status: number; conditional: boolean; bytes: number }[];
  /** Pages fetched, by their position in time (0 = oldest), and how many pages the index lists. */
  readonly pagesFetched: number[];
  readonly indexPages: number;
  /** Pages fetched more than once in this run. */
  readonly pagesFetchedTwice: number;
  /** Pages fetched whose newest commit is at or before the cursor the run started from (must be 0). */
  readonly pagesAtOrBeforeCursor: number;
  /** The replica's own count of requests. */
  readonly server: Omit<LogSummary, 'pages'>;
}

export interface WarmResult {
  readonly runs: WarmRun[];
  /** Every check that must hold, and whether it did. */
  readonly checks: { name: string; ok: boolean; detail: string }[];
}

async function main(): Promise<void> {
  const config = JSON.parse(process.argv[2] ?? '{}') as WarmConfig;
  const http = new HttpClient({ connections: config.concurrency });
  const log: { url: string; status: number; bytes: number; conditional: boolean }[] = [];
  // Page URL -> newest commit on it, from the last index body received.
  let pageTicks = new Map<string, Ticks>();
  const get = http.get.bind(http);
  http.get = async (url: string, options: GetOptions): Promise<HttpResponse> => {
    const response = await get(url, options);
    const headers = options.headers ?? {};
    log.push({
      url,
      status: response.status,
      bytes: response.body.length,
      conditional: 'if-none-match' in headers || 'if-modified-since' in headers,
    });
    if (url === config.catalogIndexUrl && response.status === 200) {
      pageTicks = new Map(parseCatalogIndex(response.body, url).items.map((entry) => [entry.url, entry.commitTicks]));
    }
    return response;
  };
  const catalog = new CatalogClient(http, config.source);
  const cursors = new MemoryCursorStore(config.cursorLatencyMs);
  const s3 = awsClients(process.env, config.concurrency).s3;
  const snapshots = new S3SnapshotStore(config.bucket, s3);
  const runs: WarmRun[] = [];

  const adminGet = async (path: string, method = 'GET'): Promise<unknown> => {
    const response = await fetch(`${config.admin}${path}`, { method });
    if (!response.ok) throw new Error(`admin ${path}: HTTP ${response.status}`);
    return response.json();
  };
  await adminGet(`/log?replica=${config.replica}&clear=1`);

  const run = async (what: string, maxLeaves: number): Promise<void> => {
    log.length = 0;
    const settings = parseSettings({
      CATALOG_SOURCE: config.source,
      CURSOR_NAME: 'bench-warm',
      MAX_LEAVES: String(maxLeaves),
      MAX_COMMITS: '1000000',
      CONCURRENCY: String(config.concurrency),
    });
    const summary = await runSlice(settings, { catalog, cursors, snapshots });
    const cursorBefore = parseTimestamp(summary.cursorBefore);
    const byTime = [...pageTicks.entries()]
      .sort((a, b) => (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0))
      .map(([url]) => url);
    const pageRequests = log.filter((entry) => pageTicks.has(entry.url));
    const counts = new Map<string, number>();
    for (const entry of pageRequests) counts.set(entry.url, (counts.get(entry.url) ?? 0) + 1);
    const server = (await adminGet(`/log?replica=${config.replica}&clear=1`)) as LogSummary;
    const { pages: _pages, ...serverCounts } = server;
    runs.push({
      run: runs.length + 1,
      what,
      cursorBefore: summary.cursorBefore,
      cursorAfter: summary.cursorAfter,
      stoppedBy: summary.stoppedBy,
      leaves: summary.leaves,
      durationMs: summary.durationMs,
      index: log
        .filter((entry) => entry.url === config.catalogIndexUrl)
        .map(({ status, conditional, bytes }) => ({ status, conditional, bytes })),
      pagesFetched: [...counts.keys()].map((url) => byTime.indexOf(url)).sort((a, b) => a - b),
      indexPages: byTime.length,
      pagesFetchedTwice: [...counts.values()].filter((n) => n > 1).length,
      pagesAtOrBeforeCursor: [...counts.keys()].filter((url) => pageTicks.get(url)! <= cursorBefore).length,
      server: serverCounts,
    });
  };

  await run(`cold start, MAX_LEAVES=${config.sliceLeaves}`, config.sliceLeaves);
  await run(`warm, index unchanged, MAX_LEAVES=${config.sliceLeaves}`, config.sliceLeaves);
  await run('warm, index unchanged, to the head', 1_000_000);
  await run('warm, caught up, index unchanged', 1_000_000);
  const appended = (await adminGet(`/append?replica=${config.replica}&commits=${config.appendCommits}`, 'POST')) as {
    leaves: number;
  };
  await run(`warm, ${config.appendCommits} new commits (${appended.leaves} leaves)`, 1_000_000);
  await run('warm, caught up again, index unchanged', 1_000_000);
  await http.close();
  s3.destroy();

  const checks: WarmResult['checks'] = [];
  const check = (name: string, ok: boolean, detail: string): void => void checks.push({ name, ok, detail });
  const [r1, r2, r3, r4, r5, r6] = runs as [WarmRun, WarmRun, WarmRun, WarmRun, WarmRun, WarmRun];
  check(
    'cold run downloads the index once (200)',
    r1.index.length === 1 && r1.index[0]!.status === 200,
    JSON.stringify(r1.index),
  );
  for (const r of [r2, r3, r4, r6]) {
    check(
      `run ${r.run}: unchanged index is a conditional GET answered 304 (no body)`,
      r.index.length === 1 && r.index[0]!.conditional && r.index[0]!.status === 304 && r.index[0]!.bytes === 0,
      JSON.stringify(r.index),
    );
  }
  check(
    'run 5: changed index is a conditional GET answered 200 with the new body',
    r5.index.length === 1 && r5.index[0]!.conditional && r5.index[0]!.status === 200,
    JSON.stringify(r5.index),
  );
  check(
    'no page fetched twice within a run',
    runs.every((r) => r.pagesFetchedTwice === 0),
    runs.map((r) => r.pagesFetchedTwice).join(','),
  );
  check(
    'no page at or before the cursor is fetched (closed pages are never refetched across runs)',
    runs.every((r) => r.pagesAtOrBeforeCursor === 0),
    runs.map((r) => r.pagesAtOrBeforeCursor).join(','),
  );
  check(
    'caught-up run with an unchanged index fetches no page and no leaf',
    r4.pagesFetched.length === 0 && r4.leaves === 0 && r6.pagesFetched.length === 0,
    `${r4.pagesFetched.length} pages, ${r4.leaves} leaves`,
  );
  check(
    'after new commits only the newest page(s) are fetched',
    r5.pagesFetched.length > 0 && r5.pagesFetched.every((i) => i >= r4.indexPages - 1),
    `fetched ${JSON.stringify(r5.pagesFetched)} of ${r5.indexPages} pages (before: ${r4.indexPages})`,
  );
  check(
    'the service index is fetched once per warm client',
    runs.reduce((n, r) => n + r.server.serviceIndex, 0) === 1,
    runs.map((r) => r.server.serviceIndex).join(','),
  );
  const result: WarmResult = { runs, checks };
  process.send!({ type: 'result', result }, () => process.exit(0));
}

void main().catch((error: unknown) => {
  process.send?.({ type: 'error', error: String((error as Error)?.stack ?? error) }, () => process.exit(1));
});
