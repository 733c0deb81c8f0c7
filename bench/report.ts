/**
 * The benchmark's report: the targets it checks, the table and the lines it prints, and the JSON it writes to
 * results/, from the figures run.ts gathered.
 */
import { cpus, totalmem } from 'node:os';
import { relative } from 'node:path';
import { backfillReport, backfillTargets, type BackfillRows } from './backfill-rows.js';
import type { ConsumerReaderResult } from './consumer-reader.js';
import { consumerDefaultsTargets, consumerDefaultsText, readerTargets, readerText } from './consumer-rows.js';
import type { ConsumerDefaultsResult } from './consumer-defaults.js';
import { viewTargets, viewText, type ViewRowResult } from './view-upkeep.js';
import { largeLeafTargets, largeLeafText, type LargeLeafRow } from './large-leaf-row.js';
import type { Servers } from './children.js';
import { nugetRatioLine, nugetRatios, nugetTargets, type NugetRows } from './nuget-rows.js';
import type { Options } from './options.js';
import type { PlanningResult } from './planning.js';
import { costInputsFrom, lambdaCostReport } from './lambda-cost.js';
import { catchUpInputsFrom, catchUpReport } from './catch-up.js';
import { formatProfile, type ProfileSummary } from './profile-summary.js';
import type { Row } from './row.js';
import type { ScenarioResult } from './scenario-types.js';
import { round } from './stats.js';
import type { ValidationResult } from './validation.js';
import type { WarmResult } from './warm.js';

export type { Row } from './row.js';

/** Growth of the heap used after full GCs during a run, MB (first sample after 1,000 leaves to the last). */
function liveGrowth(row: ScenarioResult): number {
  const samples = row.afterMajorGc.filter((s) => s.leaves >= 1_000);
  return samples.length < 2 ? 0 : samples.at(-1)!.heapUsedMB - samples[0]!.heapUsedMB;
}

function liveTrend(row: ScenarioResult): string {
  const samples = row.afterMajorGc.filter((s) => s.leaves >= 1_000);
  if (samples.length < 2) return 'too few full GCs to tell';
  return `${samples[0]!.heapUsedMB} MB at ${samples[0]!.leaves} leaves -> ${samples.at(-1)!.heapUsedMB} MB at ${samples.at(-1)!.leaves}`;
}

/** Everything a run gathered, as run.ts hands it over. */
export interface BenchResults {
  opts: Options;
  /** `performance.now()` when the run started. */
  started: number;
  /** Cores busy with other processes before the run started. */
  initialLoad: number;
  servers: Servers;
  dynamo: { kind: string } | undefined;
  profileDir: string;
  sequential: Row;
  ceiling: Row;
  engine: Row;
  ceilingLean: Row;
  engineDynamo: Row | undefined;
  rss: Row[];
  /** The headline: nuget.org's shape (nuget-rows.ts). */
  nuget: NugetRows | undefined;
  sweep: Row[];
  profiled: Row | undefined;
  planning: PlanningResult;
  planningProfile: ProfileSummary | undefined;
  validation: ValidationResult;
  warm: WarmResult | undefined;
  backfill: BackfillRows | undefined;
  reader: ConsumerReaderResult | undefined;
  /** A named consumer at its defaults against the reader alone (issue 29). */
  consumerDefaults: ConsumerDefaultsResult | undefined;
  view: ViewRowResult | undefined;
  /** One commit of large leaves at a 512 MB Lambda's memory (large-leaf-row.ts). */
  largeLeaves: LargeLeafRow | undefined;
}

/** The printed report (`text`) and the results file's content (`json`). */
export function report(results: BenchResults): { text: string; json: unknown } {
  const { opts, started, initialLoad, servers, dynamo, profileDir, sequential, ceiling, engine, ceilingLean } = results;
  const { engineDynamo, rss, nuget, sweep, profiled, planning, planningProfile, validation, warm, backfill } = results;
  const ratioSeq = engine.leavesPerSec / sequential.leavesPerSec;
  const ratioCeiling = engine.leavesPerSec / ceiling.leavesPerSec;
  const ratioCeilingLean = engine.leavesPerSec / ceilingLean.leavesPerSec;
  const rssSmallest = rss[0];
  const rssLargest = rss.at(-1);
  const targets = [
    ...nugetTargets(nuget),
    ...viewTargets(results.view, nuget?.engine.leavesPerSec),
    // Issue 14's targets (the engine row is the production path: leaf and manifest PUTs signed and sent by the engine).
    {
      target: `engine >= 20x sequential (${opts.latency} ms latency)`,
      value: `${ratioSeq.toFixed(1)}x`,
      ok: ratioSeq >= 20,
    },
    {
      target: 'engine >= 0.9 of the ceiling (bare loop, SDK PutObject)',
      value: ratioCeiling.toFixed(2),
      ok: ratioCeiling >= 0.9,
    },
    {
      target: 'engine CPU <= 1.2 ms per leaf, end to end',
      value: `${engine.cpuPerLeafMs} ms`,
      ok: engine.cpuPerLeafMs <= 1.2,
    },
    ...rss.map((r, i) => ({
      target: `peak RSS <= 256 MB (${opts.rssLeaves[i]}-leaf slice)`,
      value: `${r.maxRssMB} MB`,
      ok: r.maxRssMB <= 256,
    })),
    ...(rssSmallest && rssLargest && rssLargest !== rssSmallest
      ? [
          {
            target: `peak RSS flat with the slice (${opts.rssLeaves[0]} -> ${opts.rssLeaves.at(-1)} leaves: within 10%)`,
            value: `${rssSmallest.maxRssMB} -> ${rssLargest.maxRssMB} MB (${rssLargest.maxRssMB >= rssSmallest.maxRssMB ? '+' : ''}${Math.round((rssLargest.maxRssMB / rssSmallest.maxRssMB - 1) * 100)}%)`,
            ok: rssLargest.maxRssMB <= rssSmallest.maxRssMB * 1.1,
          },
          {
            target: `live heap flat with the slice (heap used after full GCs, ${opts.rssLeaves.at(-1)}-leaf slice: last within 5 MB of the first)`,
            value: liveTrend(rssLargest),
            ok: liveGrowth(rssLargest) <= 5,
          },
        ]
      : []),
    {
      target: `${planning.pages}-page index parsed and planned <= 500 ms (cold process)`,
      value: `${planning.cold.totalMs} ms`,
      ok: planning.cold.totalMs <= 500,
    },
    {
      target: `backfill plan: ${planning.pages}-page index parsed and cut into ranges <= 1 s (cold process)`,
      value: `${round(planning.cold.parseMs + planning.cold.planBackfillMs, 1)} ms`,
      ok: planning.cold.parseMs + planning.cold.planBackfillMs <= 1000,
    },
    ...backfillTargets(backfill),
    ...readerTargets(results.reader),
    ...largeLeafTargets(results.largeLeaves),
    ...consumerDefaultsTargets(results.consumerDefaults),
    ...(warm
      ? [
          {
            target: 'warm Lambda: index by conditional GET, closed pages never refetched',
            value: `${warm.checks.filter((c) => c.ok).length}/${warm.checks.length} checks`,
            ok: warm.checks.every((c) => c.ok),
          },
        ]
      : []),
  ];

  const out: string[] = [];
  const p = (line = ''): void => void out.push(line);
  const main = servers.replica('main');
  p();
  p(
    `catalog-sync benchmark — ${new Date().toISOString()} — ${cpus().length} x ${cpus()[0]?.model ?? 'cpu'}, Node ${process.version}`,
  );
  p(
    `catalog latency ${opts.latency} ms/request, S3 latency ${opts.s3Latency} ms/request, in-memory cursor ${opts.cursorLatency} ms/call; ` +
      `main catalog: ${main.leaves} leaves in ${main.commits} commits (${main.meanLeavesPerCommit.toFixed(1)} leaves/commit), ${main.pages} pages, mean leaf ${main.meanLeafBytes} B`,
  );
  const nugetReplica = nuget ? servers.ready.replicas.find((r) => r.name === 'nuget') : undefined;
  if (nuget && nugetReplica) {
    p(
      `headline rows ("nuget:"): nuget.org's shape, catalog ${opts.latency} ms, S3 ${nuget.s3LatencyMs} ms/request, concurrency ${opts.concurrency}: ` +
        `${nugetReplica.leaves} leaves in ${nugetReplica.commits} commits (${nugetReplica.meanLeavesPerCommit.toFixed(1)} leaves/commit)`,
    );
  }
  p(
    `other processes on the machine: ${initialLoad.toFixed(2)} cores busy at the start (last column: during each scenario)`,
  );
  p();
  const header = [
    'scenario',
    'conc',
    'leaves',
    'commits',
    'leaves/s',
    'p50 ms',
    'p99 ms',
    'CPU ms/leaf',
    'ELU',
    'GC ms',
    'peak RSS MB',
    'servers CPU',
    'others CPU',
  ];
  const table: string[][] = [header];
  const headline = nuget ? [nuget.sequential, nuget.ceiling, nuget.engine, ...nuget.tails.map((t) => t.row)] : [];
  const shown = [
    ...headline,
    sequential,
    ceiling,
    ceilingLean,
    engine,
    ...(engineDynamo ? [engineDynamo] : []),
    ...rss,
    ...sweep,
    ...(profiled ? [profiled] : []),
  ];
  const percent = (share: number): string => (Number.isFinite(share) ? `${Math.round(share * 100)}%` : '-');
  for (const r of shown) {
    table.push([
      r.label,
      String(r.concurrency),
      String(r.leaves),
      String(r.commits),
      r.leavesPerSec.toFixed(1),
      r.perLeafMs.p50.toFixed(1),
      r.perLeafMs.p99.toFixed(1),
      r.cpuPerLeafMs.toFixed(2),
      r.eventLoopUtilization.toFixed(2),
      r.gcMs.toFixed(0),
      r.maxRssMB.toFixed(1),
      percent(r.serverCpuShare),
      percent(r.othersCpuShare),
    ]);
  }
  const widths = header.map((_, i) => Math.max(...table.map((row) => row[i]!.length)));
  table.forEach((row, n) => {
    p(row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  '));
    if (n === 0) p(widths.map((w) => '-'.repeat(w)).join('  '));
  });
  p();
  for (const line of nugetRatioLine(nuget)) p(line);
  p(
    `ratios: engine/sequential = ${ratioSeq.toFixed(1)}x   engine/ceiling (SDK PUT) = ${ratioCeiling.toFixed(2)}   engine/ceiling (lean PUT) = ${ratioCeilingLean.toFixed(2)}`,
  );
  p(
    `planning: ${planning.pages} pages (${(planning.indexBytes / 1024 / 1024).toFixed(1)} MB index): cold ${planning.cold.totalMs} ms ` +
      `(parse+validate ${planning.cold.parseMs} ms, cut a backfill into ranges ${planning.cold.planBackfillMs} ms -> ${planning.backfillRanges} ranges, ${(planning.rangesFileBytes / 1024 / 1024).toFixed(1)} MB ranges file, ${planning.rangesHeapMB} MB heap, ` +
      `plan follower ${planning.cold.planFollowerMs} ms -> ${planning.followerPages} page); warm ${planning.warmMedian.totalMs} ms; ` +
      `heap kept by the parsed index ${planning.retainedHeapMB} MB, peak RSS ${planning.maxRssMB} MB`,
  );
  p(
    `leaf validation (parseLeaf: JSON, zod, checks against the page item): ${validation.leaves} leaves of ${validation.meanLeafBytes} B mean, ` +
      `cold ${validation.coldMicrosPerLeaf} µs CPU/leaf, warm ${validation.warmMicrosPerLeaf} µs`,
  );
  if (warm) {
    p();
    p('warm Lambda (one CatalogClient and cursor store across runs, as a warm Lambda keeps them):');
    const wh = ['run', 'what', 'index GET', 'pages fetched (by age, 0 = oldest)', 'leaves', 'requests the replica saw'];
    const wt: string[][] = [wh];
    for (const r of warm.runs) {
      wt.push([
        String(r.run),
        r.what,
        r.index
          .map(
            (i) =>
              `${i.conditional ? 'conditional, ' : ''}${i.status}${i.bytes ? ` (${(i.bytes / 1024).toFixed(1)} kB)` : ''}`,
          )
          .join('; ') || '-',
        r.pagesFetched.length === 0
          ? `none of ${r.indexPages}`
          : `${JSON.stringify(r.pagesFetched)} of ${r.indexPages}`,
        String(r.leaves),
        `${r.server.total}: service index ${r.server.serviceIndex}, index ${r.server.index}, pages ${r.server.pageRequests}, leaves ${r.server.leaves}`,
      ]);
    }
    const ww = wh.map((_, i) => Math.max(...wt.map((row) => row[i]!.length)));
    wt.forEach((row, n) => {
      p(
        `  ${row
          .map((cell, i) => cell.padEnd(ww[i]!))
          .join('  ')
          .trimEnd()}`,
      );
      if (n === 0) p(`  ${ww.map((w) => '-'.repeat(w)).join('  ')}`);
    });
    for (const c of warm.checks) p(`  ${c.ok ? 'ok  ' : 'FAIL'} ${c.name}${c.ok ? '' : `: ${c.detail}`}`);
  }
  if (backfill) for (const line of backfillReport(backfill)) p(line);
  if (results.reader) p(readerText(results.reader).trimEnd());
  if (results.consumerDefaults) p(consumerDefaultsText(results.consumerDefaults).trimEnd());
  if (results.view) p(viewText(results.view).trimEnd());
  if (results.largeLeaves) p(largeLeafText(results.largeLeaves).trimEnd());
  p();
  const costInputs = costInputsFrom({
    cpuMsPerLeaf: engine.cpuPerLeafMs,
    peakRssMb: Math.max(engine.maxRssMB, ...rss.map((r) => r.maxRssMB)),
  });
  const lambdaCost = lambdaCostReport(costInputs);
  for (const line of lambdaCost.split('\n')) p(line);
  p();
  const catchUp = catchUpReport(catchUpInputsFrom({ scenarios: shown }), nuget?.engine.leavesPerSec);
  for (const line of catchUp.split('\n')) p(line);
  p();
  p('targets:');
  for (const t of targets) p(`  ${t.ok ? 'met   ' : 'MISSED'} ${t.target}: ${t.value}`);
  if (profiled?.profile) {
    p();
    p(`CPU profile of "${profiled.label}" (${relative(process.cwd(), profileDir) || '.'}):`);
    for (const line of formatProfile(profiled.profile, 12)) p(`  ${line}`);
  }
  if (planningProfile) {
    p();
    p(`CPU profile of planning (one cold iteration):`);
    for (const line of formatProfile(planningProfile, 8)) p(`  ${line}`);
  }
  p();
  const text = out.join('\n');

  const json = {
    date: new Date().toISOString(),
    machine: {
      cpus: cpus().length,
      model: cpus()[0]?.model,
      memoryMB: Math.round(totalmem() / 1024 / 1024),
      node: process.version,
      platform: process.platform,
      othersBusyCoresAtStart: round(initialLoad, 2),
    },
    // Paths relative to where the bench ran, so a results file names no folder of one machine.
    options: { ...opts, out: relative(process.cwd(), opts.out) || '.' },
    servers: { setupMs: round(servers.ready.setupMs, 0), replicas: servers.ready.replicas },
    dynamo: dynamo?.kind ?? null,
    scenarios: shown,
    ratios: {
      ...(nuget ? { nuget: nugetRatios(nuget) } : {}),
      engineOverSequential: round(ratioSeq, 2),
      engineOverCeiling: round(ratioCeiling, 3),
      engineOverCeilingLean: round(ratioCeilingLean, 3),
    },
    planning: { ...planning, ...(planningProfile ? { profile: planningProfile } : {}) },
    validation,
    warm: warm ?? null,
    backfill: backfill ?? null,
    consumerReader: results.reader ?? null,
    consumerDefaults: results.consumerDefaults ?? null,
    latestView: results.view ?? null,
    largeLeaves: results.largeLeaves ?? null,
    lambdaCost: { inputs: costInputs, text: lambdaCost },
    catchUp: { text: catchUp },
    targets,
    durationMs: Math.round(performance.now() - started),
    table: text,
  };
  return { text, json };
}
