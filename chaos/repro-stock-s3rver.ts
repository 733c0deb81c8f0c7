/**
 * Reproduction of issue 10, item 0: "a cursor seen past a commit with a leaf missing". Four overlapping
 * `catalog-sync run` processes on one cursor (DynamoDB emulator + s3rver), a 240-commit generated catalog
 * that grows meanwhile, and a sampler that, all along, reads the cursor and then every object of every
 * commit at or before it (its manifest, and each leaf byte for byte against the generated catalog).
 *
 *   npx tsx chaos/repro-stock-s3rver.ts                 # stock s3rver (the setup)
 *   npx tsx chaos/repro-stock-s3rver.ts --s3 atomic     # s3rver with the suite's atomic-PUT patch
 *
 * Every S3 request of every CLI process goes through a logging proxy of its own (chaos/lib/s3-trace-proxy.ts),
 * so that for each object a sample found torn (missing, unreadable, short or different), it can say:
 *  - whether a PUT of that key (by which process) was in flight at the server while it was read;
 *  - whether some PUT of that key had been acknowledged before the cursor was read: if none had, the cursor
 *    moved before the leaf was stored, and the ENGINE is at fault;
 *  - whether a re-read right after the sample, and one after every run ended, find it whole.
 *
 * Exit 0: no torn read. 1: torn reads, every one explained by the emulator (an overwrite in flight, or read
 * right after its PUT's answer) and whole on re-read. 2: a fault the emulator does not explain (engine) or an
 * object still broken after every run ended.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { commitKey, leafKey, manifestKey, parseTimestamp } from '../lambda/contract/index.js';
import {
  appendCommits,
  CatalogReplica,
  clientsFor,
  generateCatalog,
  type GeneratedLeaf,
  leafBody,
  mulberry32,
  parseTicks,
} from '../testkit/index.js';
import { readS3Object, type ReadFault } from './lib/object-reads.js';
import { startCliRun } from './lib/runs.js';
import { S3Trace, startTraceProxy, type TraceProxy } from './lib/s3-trace-proxy.js';
import { startEmulators } from './lib/servers.js';
import { awsTarget } from './lib/targets.js';

const { values } = parseArgs({
  options: {
    s3: { type: 'string', default: 'stock' },
    seed: { type: 'string', default: '10' },
    commits: { type: 'string', default: '240' },
    grow: { type: 'string', default: '60' },
    processes: { type: 'string', default: '4' },
    dynamo: { type: 'string', default: 'auto' },
  },
});
if (values.s3 !== 'stock' && values.s3 !== 'atomic') throw new Error(`--s3 must be stock or atomic, got ${values.s3}`);
const seed = Number(values.seed);
const growBy = Number(values.grow);
const processes = Number(values.processes);
const random = mulberry32(seed);
const t0 = performance.now();
const now = (): number => performance.now() - t0;

interface TornRead {
  sample: number;
  key: string;
  fault: string;
  cursorCommit: number;
  /** ms since start: the read, and the cursor read before it. */
  readFromMs: number;
  readToMs: number;
  cursorReadMs: number;
  /** Clients (p0..p3) with a PUT of the key in flight at the server during the read. */
  overwrittenBy: string[];
  /** ms since start when the first PUT of the key was answered 200; null when none had been. */
  firstPutAnsweredMs: number | null;
  /** ms between that answer and the read's start. */
  sinceFirstPutMs: number | null;
  putsBefore: number;
  rereadSoon?: string;
  rereadAtEnd?: string;
  verdict?: string;
}

const emulators = await startEmulators({ dynamo: values.dynamo as 'auto', rawS3rver: values.s3 === 'stock' });
const catalog = generateCatalog({
  commits: Number(values.commits),
  seed,
  leavesPerCommit: [1, 4],
  start: '2015-02-01T17:00:00.1234567Z',
});
const replica = await CatalogReplica.start({ catalog, pageSize: 20, latencyMs: 2 });
const trace = new S3Trace();
const proxies: TraceProxy[] = [];
const target = await awsTarget(emulators, '');
const bucket = target.cliArgs()[3]!;
const clients = clientsFor({ dynamoEndpoint: emulators.dynamo.endpoint, s3Endpoint: emulators.s3.endpoint });
const expectedBodies = new Map<GeneratedLeaf, Buffer>();
const expectedBody = (leaf: GeneratedLeaf): Buffer => {
  let body = expectedBodies.get(leaf);
  if (!body) expectedBodies.set(leaf, (body = Buffer.from(leafBody(catalog, leaf, replica.origin))));
  return body;
};
const keysOf = (index: number): { key: string; expected?: Buffer }[] => {
  const commit = catalog.commits[index]!;
  const ck = commitKey(parseTimestamp(commit.timestamp));
  return [
    { key: manifestKey('', ck) },
    ...commit.leaves.map((leaf) => ({ key: leafKey('', ck, leaf.id, leaf.version), expected: expectedBody(leaf) })),
  ];
};

const torn: TornRead[] = [];
const figures = {
  samples: 0,
  sampleErrors: 0,
  objectsRead: 0,
  leavesRead: 0,
  runs: 0,
  runOutcomes: {} as Record<string, number>,
  grownBy: 0,
};
let runsDone = false;

/** Reads `items` with a few reads in flight; calls `onFault` for each torn one. */
async function readAll(
  items: { key: string; expected?: Buffer }[],
  onFault: (key: string, fault: string, fromMs: number, toMs: number) => void,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < items.length) {
        const item = items[next++]!;
        const fromMs = now();
        const fault: ReadFault = await readS3Object(clients.s3, bucket, item.key, item.expected);
        figures.objectsRead++;
        if (item.expected) figures.leavesRead++;
        if (fault) onFault(item.key, fault, fromMs, now());
      }
    }),
  );
}

async function sampler(): Promise<void> {
  const ticks = (): bigint[] => catalog.commits.map((c) => parseTicks(c.timestamp));
  while (!runsDone) {
    const cursorReadMs = now();
    let stored;
    try {
      stored = await target.readCursor();
    } catch {
      figures.sampleErrors++;
      continue;
    }
    const cursorReadEndMs = now();
    const index = stored ? ticks().indexOf(parseTicks(stored.cursor)) : -1;
    if (index < 0) {
      await new Promise((resolve) => setImmediate(resolve));
      continue;
    }
    const sample = ++figures.samples;
    // Newest first: the commits just behind the cursor are the ones other runs may still be rewriting.
    const items = [];
    for (let i = index; i >= 0; i--) items.push(...keysOf(i));
    const found: TornRead[] = [];
    await readAll(items, (key, fault, fromMs, toMs) => {
      const first = trace.firstPutAnswered(key);
      // Trace times are performance.now() of this process; ours are relative to t0.
      const firstMs = first ? first.answeredMs! - t0 : null;
      found.push({
        sample,
        key,
        fault,
        cursorCommit: index,
        readFromMs: Math.round(fromMs),
        readToMs: Math.round(toMs),
        cursorReadMs: Math.round(cursorReadMs),
        overwrittenBy: trace.putsOverlapping(key, fromMs + t0, toMs + t0).map((r) => r.client),
        firstPutAnsweredMs: firstMs !== null && firstMs <= cursorReadEndMs ? Math.round(firstMs) : null,
        sinceFirstPutMs: firstMs !== null ? Math.round(fromMs - firstMs) : null,
        putsBefore: trace.puts(key).filter((r) => r.answeredMs! - t0 < fromMs).length,
      });
    });
    // "A moment later": the same objects again, right after the sample.
    for (const read of found) {
      read.rereadSoon = (await readS3Object(clients.s3, bucket, read.key, expectedFor(read.key))) ?? 'whole';
      torn.push(read);
      process.stdout.write(
        `  sample ${sample}: ${read.key}: ${read.fault}; PUT in flight by ${read.overwrittenBy.join(',') || 'nobody'}; re-read: ${read.rereadSoon}\n`,
      );
    }
  }
}

/** The expected bytes of a leaf key, searched over the whole catalog (undefined for a manifest). */
function expectedFor(key: string): Buffer | undefined {
  for (let i = 0; i < catalog.commits.length; i++) {
    const found = keysOf(i).find((item) => item.key === key);
    if (found) return found.expected;
  }
  return undefined;
}

async function grow(): Promise<void> {
  // A few commits every 200 ms while the runs go on: later runs see a bigger catalog than earlier ones.
  for (let round = 0; figures.grownBy < growBy && !runsDone; round++) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    const n = Math.min(3, growBy - figures.grownBy);
    appendCommits(catalog, n, seed * 1000 + round);
    figures.grownBy += n;
  }
}

/** One slot: `catalog-sync run` after `catalog-sync run` through its own tracing proxy, until caught up with a catalog that stopped growing. */
async function slot(n: number): Promise<void> {
  const proxy = await startTraceProxy(emulators.s3.endpoint, `p${n}`, trace);
  proxies.push(proxy);
  const env = { ...emulators.env(), AWS_ENDPOINT_URL_S3: proxy.endpoint };
  for (let run = 0; run < 60; run++) {
    const args = ['--max-commits', String(random.int(10, 60)), '--concurrency', String(random.int(2, 16))];
    const result = await startCliRun(target, replica.serviceIndexUrl, args, env).done;
    figures.runs++;
    figures.runOutcomes[result.outcome] = (figures.runOutcomes[result.outcome] ?? 0) + 1;
    if (result.outcome === 'error')
      process.stdout.write(`  p${n} run failed: ${result.stderr.trim().split('\n').at(-1)}\n`);
    if (result.outcome === 'caught-up' && figures.grownBy >= growBy) return;
  }
}

process.stdout.write(
  `${values.s3} s3rver at ${emulators.s3.endpoint}, ${emulators.dynamo.name}; catalog of ${catalog.commits.length} commits growing by ${growBy}; ${processes} overlapping CLI processes\n`,
);
let exitCode = 0;
try {
  const sampling = sampler();
  const growing = grow();
  await Promise.all(Array.from({ length: processes }, (_, n) => slot(n)));
  runsDone = true;
  await Promise.all([sampling, growing]);
  // After every run ended, no writer is left: read every torn object once more, and everything up to the cursor.
  for (const read of torn)
    read.rereadAtEnd = (await readS3Object(clients.s3, bucket, read.key, expectedFor(read.key))) ?? 'whole';
  const finalCursor = await target.readCursor();
  const head = catalog.commits.length - 1;
  const finalIndex = finalCursor
    ? catalog.commits.findIndex((c) => parseTicks(c.timestamp) === parseTicks(finalCursor.cursor))
    : -1;
  const lostAtEnd: string[] = [];
  const all = [];
  for (let i = 0; i <= finalIndex; i++) all.push(...keysOf(i));
  await readAll(all, (key, fault) => lostAtEnd.push(`${key}: ${fault}`));

  for (const read of torn) {
    if (read.firstPutAnsweredMs === null)
      read.verdict = 'ENGINE: no PUT of it had been acknowledged when the cursor past it was read';
    else if (read.rereadAtEnd !== 'whole') read.verdict = 'LOST: still broken after every run ended';
    else if (read.overwrittenBy.length > 0) read.verdict = 'emulator: read during an overwrite of the same key';
    else read.verdict = `emulator: read ${read.sinceFirstPutMs} ms after a PUT's answer, no PUT in flight`;
  }
  const count = (prefix: string): number => torn.filter((r) => r.verdict!.startsWith(prefix)).length;
  const summary = {
    s3: values.s3,
    dynamo: emulators.dynamo.name,
    seed,
    ...figures,
    s3Requests: trace.requests,
    finalCursorCommit: finalIndex,
    head,
    tornReads: torn.length,
    tornDuringOverwrite: torn.filter((r) => r.verdict!.startsWith('emulator: read during')).length,
    tornAfterAnswerNoOverwrite: torn.filter(
      (r) => r.verdict!.startsWith('emulator: read ') && !r.verdict!.startsWith('emulator: read during'),
    ).length,
    wholeOnRereadSoon: torn.filter((r) => r.rereadSoon === 'whole').length,
    wholeAtEnd: torn.filter((r) => r.rereadAtEnd === 'whole').length,
    engine: count('ENGINE'),
    lost: count('LOST') + lostAtEnd.length,
    lostAtEnd,
    faults: countBy(torn.map((r) => r.fault.replace(/\d+/g, 'N'))),
    torn: torn.slice(0, 40),
  };
  process.stdout.write(`\n${JSON.stringify({ ...summary, torn: undefined }, null, 2)}\n`);
  const out = join(dirname(fileURLToPath(import.meta.url)), 'results');
  mkdirSync(out, { recursive: true });
  const file = join(out, `repro-stock-s3rver-${values.s3}-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, `${JSON.stringify(summary, null, 2)}\n`);
  process.stdout.write(`written to ${file}\n`);
  if (finalIndex !== head)
    process.stdout.write(`the runs ended with the cursor at commit #${finalIndex}, not the head #${head}\n`);
  exitCode = summary.engine + summary.lost > 0 ? 2 : torn.length > 0 ? 1 : 0;
} finally {
  await Promise.all(proxies.map((p) => p.close()));
  clients.destroy();
  target.close();
  await replica.stop();
  await emulators.close();
}
process.exit(exitCode);

function countBy(items: string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const item of items) counts[item] = (counts[item] ?? 0) + 1;
  return counts;
}
