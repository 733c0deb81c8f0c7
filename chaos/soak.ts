/**
 * `npm run soak -- --minutes N`: `catalog-sync run --follow` (the built CLI, a child process) follows a
 * catalog replica whose catalog keeps growing, for N minutes. Every few seconds it samples the child's RSS
 * (VmRSS from /proc), its live V8 heap (after a full GC forced through the inspector), and the lag (how long the oldest commit not yet under the stored cursor has been in the
 * catalog, and how many commits that is). At the end it stops the child with SIGTERM, checks every commit up
 * to the stored cursor byte for byte, and reports RSS first / last / max and the RSS slope (least squares, MB
 * per hour) over the second half: memory must not grow. See chaos/README.md.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { setTimeout as delay } from 'node:timers/promises';
import { parseTimestamp } from '../lambda/contract/index.js';
import {
  appendCommits,
  CatalogReplica,
  CLI,
  generateCatalog,
  parseTicks,
  readLocalCursor,
  verifyLocal,
} from '../testkit/index.js';
import { HeapProbe } from './lib/inspector.js';

const HELP = `npm run soak -- [options]

  --minutes N             how long to follow                                   (default 5)
  --sample-seconds S      seconds between samples                              (default 10)
  --commits-per-second R  catalog growth, appended once a second               (default 3)
  --poll-interval S       the CLI's --poll-interval                             (default 1)
  --concurrency N         the CLI's --concurrency                               (default 8)
  --initial-commits N     commits in the catalog at the start                   (default 500)
  --no-probe              do not attach the inspector (no live-heap figures, no forced GC)
  --out DIR               where results go                                      (default chaos/results)
`;

const here = dirname(fileURLToPath(import.meta.url));

interface Sample {
  /** Seconds since the child started. */
  t: number;
  rssMB: number;
  hwmMB: number;
  catalogCommits: number;
  /** Commits at or before the stored cursor. */
  storedCommits: number;
  lagCommits: number;
  /** Seconds since the oldest commit after the cursor was appended to the catalog (0 when caught up). */
  lagSeconds: number;
  runs: number;
  failedRuns: number;
  /** The child's V8 heap in use right after a full GC forced through the inspector, MB: its live heap. */
  liveHeapMB: number;
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      minutes: { type: 'string', default: '5' },
      'sample-seconds': { type: 'string', default: '10' },
      'commits-per-second': { type: 'string', default: '3' },
      'poll-interval': { type: 'string', default: '1' },
      concurrency: { type: 'string', default: '8' },
      'initial-commits': { type: 'string', default: '500' },
      'no-probe': { type: 'boolean', default: false },
      out: { type: 'string', default: join(here, 'results') },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(HELP);
    return 0;
  }
  const minutes = Number(values.minutes);
  const sampleSeconds = Number(values['sample-seconds']);
  const perSecond = Number(values['commits-per-second']);
  const initial = Number(values['initial-commits']);
  for (const [name, value] of Object.entries({ minutes, sampleSeconds, perSecond, initial })) {
    if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number`);
  }

  const catalog = generateCatalog({
    commits: initial,
    seed: 7,
    leavesPerCommit: [1, 4],
    sameMillisecondPairs: 5,
    trimTrailingZeros: true,
    semver2Ratio: 0.1,
  });
  /** Wall time (ms) each commit entered the catalog, by index. */
  const appendedAt: number[] = catalog.commits.map(() => Date.now());
  const ticks: bigint[] = catalog.commits.map((c) => parseTicks(c.timestamp));
  const replica = await CatalogReplica.start({ catalog });
  const dataDir = mkdtempSync(join(tmpdir(), 'catalog-sync-soak-'));
  process.stdout.write(
    `soak: ${minutes} min; catalog of ${initial} commits growing by ${perSecond}/s at ${replica.serviceIndexUrl}; ` +
      `catalog-sync run --follow --poll-interval ${values['poll-interval']} --concurrency ${values.concurrency} into ${dataDir}\n`,
  );

  const started = Date.now();
  // --inspect on 127.0.0.1: after reading the RSS, each sample forces a full GC through the inspector and reads
  // the heap in use, the live heap, which a leak makes climb whatever the RSS sawtooth does.
  const child = spawn(
    process.execPath,
    [
      ...(!values['no-probe'] ? ['--inspect=127.0.0.1:0'] : []),
      CLI,
      'run',
      '--follow',
      '--json',
      '--poll-interval',
      values['poll-interval'],
      '--concurrency',
      values.concurrency,
      '--source',
      replica.serviceIndexUrl,
      '--data-dir',
      dataDir,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } },
  );
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const killChild = (): void => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  };
  process.once('exit', killChild);
  let runs = 0;
  let failedRuns = 0;
  let pending = '';
  child.stdout.on('data', (chunk: Buffer) => {
    pending += chunk.toString('utf8');
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) {
      if (!line.trim()) continue;
      runs++;
      try {
        if ((JSON.parse(line) as { stoppedBy?: string }).stoppedBy === 'error') failedRuns++;
      } catch {
        failedRuns++;
      }
    }
  });
  const probe = !values['no-probe'] ? await HeapProbe.attach(child) : undefined;
  let stderrTail = '';
  child.stderr.on('data', (chunk: Buffer) => (stderrTail = (stderrTail + chunk.toString('utf8')).slice(-4000)));

  const end = started + minutes * 60_000;
  let seed = 1_000;
  let lastGrowth = Date.now();
  const growth = setInterval(() => {
    // Whole commits per elapsed second, so a slow tick does not slow the growth.
    const now = Date.now();
    const due = Math.round(((now - lastGrowth) / 1000) * perSecond);
    if (due < 1) return;
    lastGrowth = now;
    for (const commit of appendCommits(catalog, due, seed++)) {
      appendedAt.push(now);
      ticks.push(parseTicks(commit.timestamp));
    }
    // The request log would grow for ever; nothing reads it here.
    replica.clearLog();
  }, 1000);

  const samples: Sample[] = [];
  const header = `${'min'.padStart(6)} ${'RSS MB'.padStart(7)} ${'HWM MB'.padStart(7)} ${'live MB'.padStart(7)} ${'catalog'.padStart(8)} ${'stored'.padStart(8)} ${'behind'.padStart(7)} ${'lag s'.padStart(6)} ${'runs'.padStart(6)} ${'failed'.padStart(6)}`;
  process.stdout.write(`${header}\n`);
  try {
    while (Date.now() < end && child.exitCode === null) {
      await delay(Math.min(sampleSeconds * 1000, Math.max(0, end - Date.now())));
      if (child.exitCode !== null) break;
      const memory = memoryOf(child.pid!);
      const liveHeapMB = probe ? await probe.liveHeapMB().catch(() => Number.NaN) : Number.NaN;
      const cursor = await readLocalCursor(dataDir).catch(() => undefined);
      const index = cursor === undefined ? -1 : indexAtOrBefore(ticks, parseTicks(cursor));
      const lagSeconds = index + 1 < catalog.commits.length ? (Date.now() - appendedAt[index + 1]!) / 1000 : 0;
      const sample: Sample = {
        t: (Date.now() - started) / 1000,
        rssMB: memory.rssMB,
        hwmMB: memory.hwmMB,
        catalogCommits: catalog.commits.length,
        storedCommits: index + 1,
        lagCommits: catalog.commits.length - 1 - index,
        lagSeconds,
        runs,
        failedRuns,
        liveHeapMB,
      };
      samples.push(sample);
      process.stdout.write(
        `${(sample.t / 60).toFixed(1).padStart(6)} ${sample.rssMB.toFixed(1).padStart(7)} ${sample.hwmMB.toFixed(1).padStart(7)} ${sample.liveHeapMB.toFixed(1).padStart(7)} ${String(sample.catalogCommits).padStart(8)} ` +
          `${String(sample.storedCommits).padStart(8)} ${String(sample.lagCommits).padStart(7)} ${sample.lagSeconds.toFixed(1).padStart(6)} ${String(runs).padStart(6)} ${String(failedRuns).padStart(6)}\n`,
      );
    }
  } finally {
    clearInterval(growth);
  }
  const died = child.exitCode !== null ? `the CLI exited early (code ${child.exitCode}): ${stderrTail}` : undefined;
  probe?.close();
  // Ctrl-C semantics: finish in-flight leaves, checkpoint, exit 0.
  child.kill('SIGTERM');
  const exit = await Promise.race([exited, delay(60_000).then(() => undefined)]);
  if (!exit) killChild();
  const stopped = exit ? `exit code ${exit.code ?? exit.signal}` : 'did not stop within 60 s of SIGTERM (killed)';

  // Byte for byte, everything up to the stored cursor.
  const cursor = await readLocalCursor(dataDir);
  const problems =
    cursor === undefined
      ? ['no cursor stored']
      : await verifyLocal(dataDir, catalog, replica.origin, parseTimestamp(cursor));
  const storedIndex = cursor === undefined ? -1 : indexAtOrBefore(ticks, parseTicks(cursor));
  const leavesChecked = catalog.commits.slice(0, storedIndex + 1).reduce((n, c) => n + c.leaves.length, 0);
  await replica.stop();
  rmSync(dataDir, { recursive: true, force: true });

  const second = samples.filter((s) => s.t >= (minutes * 60) / 2);
  const rss = samples.map((s) => s.rssMB);
  const lags = samples.map((s) => s.lagSeconds);
  const summary = {
    minutes,
    samples: samples.length,
    rssFirstMB: round(rss[0] ?? 0),
    rssLastMB: round(rss.at(-1) ?? 0),
    rssMaxMB: round(Math.max(...rss)),
    rssMinMB: round(Math.min(...rss)),
    rssMeanSecondHalfMB: round(mean(second.map((s) => s.rssMB))),
    rssSlopeSecondHalfMBPerHour: round(slope(second.map((s) => [s.t / 3600, s.rssMB]))),
    rssSlopeAllMBPerHour: round(slope(samples.map((s) => [s.t / 3600, s.rssMB]))),
    hwmMB: round(Math.max(...samples.map((s) => s.hwmMB))),
    liveHeapFirstMB: round(samples[0]?.liveHeapMB ?? Number.NaN),
    liveHeapLastMB: round(samples.at(-1)?.liveHeapMB ?? Number.NaN),
    liveHeapMaxMB: round(Math.max(...samples.map((s) => s.liveHeapMB))),
    liveHeapMeanSecondHalfMB: round(mean(second.map((s) => s.liveHeapMB))),
    liveHeapSlopeSecondHalfMBPerHour: round(slope(second.map((s) => [s.t / 3600, s.liveHeapMB]))),
    lagSecondsMedian: round(percentile(lags, 0.5)),
    lagSecondsP95: round(percentile(lags, 0.95)),
    lagSecondsMax: round(Math.max(...lags)),
    lagSecondsMeanFirstHalf: round(mean(samples.filter((s) => s.t < (minutes * 60) / 2).map((s) => s.lagSeconds))),
    lagSecondsMeanSecondHalf: round(mean(second.map((s) => s.lagSeconds))),
    catalogCommitsStart: initial,
    catalogCommitsEnd: catalog.commits.length,
    commitsStored: storedIndex + 1,
    leavesChecked,
    runs,
    failedRuns,
    stopped,
    died,
    problems: problems.length,
    firstProblems: problems.slice(0, 10),
  };
  // The run in six equal spans: a leak shows as a climb from span to span, GC noise does not.
  const spans = Array.from({ length: 6 }, (_, k) => {
    const from = (minutes * 60 * k) / 6;
    const to = (minutes * 60 * (k + 1)) / 6;
    const inSpan = samples.filter((x) => x.t > from && x.t <= to);
    return {
      minutes: `${round(from / 60)}-${round(to / 60)}`,
      rssMeanMB: round(mean(inSpan.map((x) => x.rssMB))),
      rssMaxMB: round(Math.max(...inSpan.map((x) => x.rssMB))),
      liveHeapMeanMB: round(mean(inSpan.map((x) => x.liveHeapMB))),
      lagMeanSeconds: round(mean(inSpan.map((x) => x.lagSeconds))),
      lagMaxSeconds: round(Math.max(...inSpan.map((x) => x.lagSeconds))),
      catalogCommits: inSpan.at(-1)?.catalogCommits ?? 0,
    };
  });
  const spanTable = [
    `${'minutes'.padEnd(9)} ${'RSS mean'.padStart(9)} ${'RSS max'.padStart(8)} ${'live heap'.padStart(9)} ${'lag mean'.padStart(9)} ${'lag max'.padStart(8)} ${'catalog'.padStart(8)}`,
    ...spans
      .filter((x) => x.catalogCommits > 0)
      .map(
        (x) =>
          `${x.minutes.padEnd(9)} ${x.rssMeanMB.toFixed(1).padStart(9)} ${x.rssMaxMB.toFixed(1).padStart(8)} ${x.liveHeapMeanMB.toFixed(1).padStart(9)} ` +
          `${x.lagMeanSeconds.toFixed(2).padStart(9)} ${x.lagMaxSeconds.toFixed(2).padStart(8)} ${String(x.catalogCommits).padStart(8)}`,
      ),
  ].join('\n');
  const text = [
    '',
    spanTable,
    '',
    `RSS: first ${summary.rssFirstMB} MB, last ${summary.rssLastMB} MB, max ${summary.rssMaxMB} MB (peak HWM ${summary.hwmMB} MB); ` +
      `slope over the second half ${summary.rssSlopeSecondHalfMBPerHour} MB/h (whole run ${summary.rssSlopeAllMBPerHour} MB/h)`,
    `live V8 heap (after a forced full GC): first ${summary.liveHeapFirstMB} MB, last ${summary.liveHeapLastMB} MB, max ${summary.liveHeapMaxMB} MB; slope over the second half ${summary.liveHeapSlopeSecondHalfMBPerHour} MB/h`,
    `lag: median ${summary.lagSecondsMedian} s, p95 ${summary.lagSecondsP95} s, max ${summary.lagSecondsMax} s; mean first half ${summary.lagSecondsMeanFirstHalf} s, second half ${summary.lagSecondsMeanSecondHalf} s`,
    `catalog ${summary.catalogCommitsStart} -> ${summary.catalogCommitsEnd} commits; ${summary.commitsStored} stored, ${summary.leavesChecked} leaves checked byte for byte; ` +
      `${runs} runs (${failedRuns} failed); the CLI on SIGTERM: ${stopped}`,
    died ? `THE CLI DIED: ${died}` : '',
    `problems: ${problems.length}${problems.length ? `\n  ${problems.slice(0, 10).join('\n  ')}` : ''}`,
  ]
    .filter(Boolean)
    .join('\n');
  process.stdout.write(`${text}\n`);
  mkdirSync(values.out, { recursive: true });
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const json = {
    date: new Date().toISOString(),
    options: {
      minutes,
      sampleSeconds,
      perSecond,
      initial,
      pollInterval: values['poll-interval'],
      concurrency: values.concurrency,
      probe: !values['no-probe'],
    },
    machine: { cpus: cpus().length, model: cpus()[0]?.model, loadavgAtEnd: loadavg() },
    node: process.version,
    summary,
    spans,
    samples,
  };
  writeFileSync(join(values.out, `soak-${stamp}.json`), `${JSON.stringify(json, null, 2)}\n`);
  writeFileSync(join(values.out, 'soak-latest.json'), `${JSON.stringify(json, null, 2)}\n`);
  process.stdout.write(`results: ${join(values.out, `soak-${stamp}.json`)}\n`);
  return problems.length === 0 && !died ? 0 : 1;
}

/** VmRSS and VmHWM of a process, in MB. */
function memoryOf(pid: number): { rssMB: number; hwmMB: number } {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (name: string): number =>
      Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN);
    return { rssMB: kb('VmRSS') / 1024, hwmMB: kb('VmHWM') / 1024 };
  } catch {
    return { rssMB: Number.NaN, hwmMB: Number.NaN };
  }
}

/** Index of the newest commit at or before `t` (-1 when none). */
function indexAtOrBefore(ticks: readonly bigint[], t: bigint): number {
  let lo = 0;
  let hi = ticks.length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (ticks[mid]! <= t) {
      found = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found;
}

/** Least-squares slope of y over x. */
function slope(points: readonly (readonly [number, number])[]): number {
  if (points.length < 2) return Number.NaN;
  const mx = mean(points.map((p) => p[0]));
  const my = mean(points.map((p) => p[1]));
  let num = 0;
  let den = 0;
  for (const [x, y] of points) {
    num += (x - mx) * (y - my);
    den += (x - mx) ** 2;
  }
  return den === 0 ? Number.NaN : num / den;
}

function mean(values: readonly number[]): number {
  return values.length === 0 ? Number.NaN : values.reduce((a, b) => a + b, 0) / values.length;
}

function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
}

function round(value: number): number {
  return Math.round(value * 100) / 100;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`soak: ${(error as Error)?.stack ?? String(error)}\n`);
    process.exit(2);
  },
);
