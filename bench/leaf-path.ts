/**
 * The engine's per-leaf CPU outside the S3 PUT, piece by piece, in one process: UTF-8 decoding, `JSON.parse`,
 * `parseLeaf` (whole), a page's share (`parseCatalogPage` ÷ its items), Brotli decompression of a leaf (the
 * promisified async call the HTTP client makes, against the synchronous one), and the layout work per leaf
 * (metadata, a manifest's share). CPU time (`process.cpuUsage`), median of several rounds after a warm-up, in
 * µs per leaf. Not part of `npm run bench`: run `tsc -p bench/tsconfig.json && node dist/bench/leaf-path.js`
 * (`--commits N`, default 800) when changing the leaf path, before and after.
 */
import { promisify } from 'node:util';
import * as zlib from 'node:zlib';
import { parseArgs } from 'node:util';
import { parseCatalogPage, parseLeaf } from '../lambda/catalog/parsers/index.js';
import { parseTimestamp } from '../lambda/contract/index.js';
import { manifestOf, metadataOf, type ManifestEntry } from '../lambda/sync/index.js';
import { generateCatalog, layoutPages } from '../testkit/index.js';
import { leafCases, type LeafCase } from './leaf-cases.js';
import { median, round } from './stats.js';

const ORIGIN = 'https://api.nuget.org';
const ROUNDS = 9;

interface Case extends LeafCase {
  readonly br: Buffer;
}

/** Median CPU µs per unit of `fn` over {@link ROUNDS} rounds after two warm-up rounds. */
async function measure(units: number, fn: () => void | Promise<void>): Promise<{ cold: number; warm: number }> {
  const perUnit: number[] = [];
  for (let i = 0; i < ROUNDS + 2; i++) {
    const start = process.cpuUsage();
    await fn();
    const used = process.cpuUsage(start);
    perUnit.push((used.user + used.system) / units);
  }
  return { cold: round(perUnit[0]!, 1), warm: round(median(perUnit.slice(2)), 1) };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { commits: { type: 'string', default: '800' }, seed: { type: 'string', default: '42' } },
  });
  const catalog = generateCatalog({
    commits: Number(values.commits),
    seed: Number(values.seed),
    leavesPerCommit: [1, 20],
  });
  const cases: Case[] = leafCases(catalog, ORIGIN).map((c) => ({ ...c, br: zlib.brotliCompressSync(c.body) }));
  // Pages as the replica renders them (testkit's renderPage is not on its face): 550 items, pretty-printed.
  const pages = layoutPages(catalog.commits, 550, false).map((page) => {
    const items = page.entries.map(({ commit, leaf }) => ({
      '@id': `${ORIGIN}${leaf.path}`,
      '@type': `nuget:${leaf.type}`,
      commitId: commit.commitId,
      commitTimeStamp: commit.timestamp,
      'nuget:id': leaf.id,
      'nuget:version': leaf.version,
    }));
    const url = `${ORIGIN}/v3/catalog0/page${page.number}.json`;
    const document = {
      '@id': url,
      '@type': 'CatalogPage',
      commitId: page.newest.commitId,
      commitTimeStamp: page.newest.timestamp,
      count: items.length,
      items,
    };
    return { url, body: Buffer.from(JSON.stringify(document, null, 2)) };
  });
  const n = cases.length;
  const utf8 = new TextDecoder('utf-8', { fatal: true });
  const texts = cases.map((c) => utf8.decode(c.body));
  const brotliAsync = promisify(zlib.brotliDecompress);
  const byCommit = new Map<string, ManifestEntry[]>();
  for (const c of cases) {
    const list = byCommit.get(c.item.commitId) ?? [];
    list.push({
      key: `leaves/x/${c.item.id}/${c.item.version}.json`,
      id: c.item.id,
      version: c.item.version,
      type: c.item.type,
    });
    byCommit.set(c.item.commitId, list);
  }
  const commits = catalog.commits.map((commit) => ({
    ticks: parseTimestamp(commit.timestamp),
    commitId: commit.commitId,
    items: [],
  }));

  const rows: Record<string, { cold: number; warm: number }> = {};
  rows['decode (TextDecoder, fatal)'] = await measure(n, () => {
    for (const c of cases) utf8.decode(c.body);
  });
  rows['JSON.parse'] = await measure(n, () => {
    for (const t of texts) JSON.parse(t);
  });
  rows['parseLeaf (whole)'] = await measure(n, () => {
    for (const c of cases) parseLeaf(c.body, c.url, c.item);
  });
  const pageItems = pages.reduce(
    (sum, page) => sum + (JSON.parse(page.body.toString()) as { items: unknown[] }).items.length,
    0,
  );
  rows['parseCatalogPage, per item'] = await measure(pageItems, () => {
    for (const page of pages) parseCatalogPage(page.body, page.url);
  });
  rows['brotli, promisified async'] = await measure(n, async () => {
    for (const c of cases) await brotliAsync(c.br, { maxOutputLength: 1 << 25 });
  });
  rows['brotli, sync'] = await measure(n, () => {
    for (const c of cases) zlib.brotliDecompressSync(c.br, { maxOutputLength: 1 << 25 });
  });
  rows['metadataOf'] = await measure(n, () => {
    for (const c of cases) metadataOf(c.item);
  });
  rows['manifestOf + JSON.stringify, per leaf'] = await measure(n, () => {
    for (const commit of commits) JSON.stringify(manifestOf(commit, byCommit.get(commit.commitId) ?? []));
  });

  const meanBytes = Math.round(cases.reduce((sum, c) => sum + c.body.length, 0) / n);
  process.stdout.write(
    `${n} leaves of ${meanBytes} B, ${pages.length} pages (${pageItems} items); CPU µs per leaf, cold round / warm median\n`,
  );
  for (const [name, { cold, warm }] of Object.entries(rows)) {
    process.stdout.write(`  ${name.padEnd(40)} ${String(cold).padStart(8)} ${String(warm).padStart(8)}\n`);
  }
}

await main();
