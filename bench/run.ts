/**
 * `npm run bench`: the catalog-sync benchmark. See bench/README.md.
 *
 * This process only orchestrates: the catalog replicas and the fake S3 run in one child (servers.ts),
 * DynamoDB Local in another (testkit/emulators), and every scenario in a child of its own
 * (scenario.ts, warm.ts, planning.ts; scenario-runner.ts runs one), so each scenario's peak RSS and CPU time are
 * its own.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { runBackfillRows, type BackfillRows } from './backfill-rows.js';
import type { ConsumerReaderResult } from './consumer-reader.js';
import { runConsumerDefaultsRow, runReaderRow } from './consumer-rows.js';
import type { ConsumerDefaultsResult } from './consumer-defaults.js';
import { runViewRow, type ViewRowResult } from './view-upkeep.js';
import { runLargeLeafRow, type LargeLeafRow } from './large-leaf-row.js';
import { feedText } from './feed-report.js';
import { feedRowsOptions, runFeedRows } from './feed-row.js';
import type { BackfillScenarioConfig, BackfillScenarioResult } from './backfill-scenario.js';
import { machineLoad, runChild, startServers } from './children.js';
import { runNugetRows } from './nuget-rows.js';
import { options } from './options.js';
import { benchEnv, scenarioRunner } from './scenario-runner.js';
import type { PlanningConfig, PlanningResult } from './planning.js';
import { summarizeProfile, type ProfileSummary } from './profile-summary.js';
import { report, type Row } from './report.js';
import type { ServersConfig } from './servers.js';
import { measureStartUp, startUpText, type StartUpResult } from './start-up.js';
import { measureVerifyRate, verifyRateText, type VerifyRateRow } from './verify-rate.js';
import type { ValidationConfig, ValidationResult } from './validation.js';
import type { WarmConfig, WarmResult } from './warm.js';

async function main(): Promise<void> {
  // The SDK warns that it will need Node 22 from 2027 (the Lambda runtime is nodejs22.x): noise here.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
  const opts = options();
  const started = performance.now();
  const log = (text: string): void =>
    void process.stderr.write(`[bench ${((performance.now() - started) / 1000).toFixed(0).padStart(3)}s] ${text}\n`);
  const mainLeaves = Math.max(
    opts.leaves,
    ...opts.rssLeaves,
    opts.sweep.length > 0 ? opts.sweepLeaves : 0,
    opts.sequentialLeaves,
    opts.profile ? opts.profileLeaves : 0,
  );
  const replicas: ServersConfig['replicas'] = [
    // A page more than the largest slice, so every slice ends on its limit rather than at the head.
    { name: 'main', leaves: mainLeaves + 600, leavesPerCommit: opts.leavesPerCommit, seed: opts.seed, pageSize: 550 },
    ...(opts.nugetLeaves > 0
      ? [
          {
            name: 'nuget',
            leaves: Math.max(opts.nugetLeaves, opts.tailLeaves, opts.sequentialLeaves) + 600,
            leavesPerCommit: [1, 4] as const,
            seed: opts.seed + 1,
            pageSize: 550,
          },
        ]
      : []),
    ...(opts.backfillLeaves > 0
      ? [
          {
            name: 'backfill',
            leaves: opts.backfillLeaves,
            leavesPerCommit: opts.leavesPerCommit,
            seed: opts.seed + 3,
            pageSize: 550,
          },
        ]
      : []),
    ...(opts.warm
      ? [{ name: 'warm', leaves: 2_500, leavesPerCommit: opts.leavesPerCommit, seed: opts.seed + 2, pageSize: 550 }]
      : []),
  ];
  const initialLoad = await machineLoad(1_000);
  log(
    `machine: ${cpus().length} cores, ${initialLoad.toFixed(2)} cores busy before starting (load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')})`,
  );
  log(`generating and preparing catalogs (${replicas.map((r) => `${r.name}: ${r.leaves} leaves`).join(', ')})`);
  const servers = await startServers({ catalogLatencyMs: opts.latency, s3LatencyMs: opts.s3Latency, replicas });
  log(`servers ready in ${(servers.ready.setupMs / 1000).toFixed(1)} s: S3 ${servers.ready.s3Endpoint}`);

  let dynamo: { endpoint: string; kind: string; stop(): Promise<void> } | undefined;
  const dynamoTable = 'catalog-sync-bench';
  if (opts.dynamo !== 'off') {
    try {
      const emulators = await import('../testkit/index.js');
      dynamo = await emulators.startDynamo();
      await emulators.createCursorTable(dynamo.endpoint, dynamoTable);
      log(`DynamoDB emulator (${dynamo.kind}) at ${dynamo.endpoint}`);
    } catch (error) {
      if (opts.dynamo === 'on') throw error;
      log(`no DynamoDB emulator (${(error as Error).message.split('\n')[0]}): skipping the DynamoDB scenario`);
    }
  }

  const env = benchEnv(servers.ready.s3Endpoint, dynamo?.endpoint);

  const { waitIdle, profileDir, profilePath, scenario } = scenarioRunner({ opts, servers, env, log });

  const mainSource = servers.replica('main').serviceIndexUrl;
  const base = { source: mainSource, cursor: 'memory' as const };

  await waitIdle();
  log(`planning: ${opts.planningPages} pages`);
  const planningConfig: PlanningConfig = { pages: opts.planningPages, iterations: 6, seed: opts.seed };
  const planning = await runChild<PlanningResult>('planning.js', planningConfig, env, ['--expose-gc']);
  log(
    `  cold ${planning.cold.totalMs} ms (parse ${planning.cold.parseMs} ms), warm ${planning.warmMedian.totalMs} ms, retained heap ${planning.retainedHeapMB} MB`,
  );
  log('leaf validation: parseLeaf over a generated catalog');
  const validation = await runChild<ValidationResult>(
    'validation.js',
    { commits: 800, rounds: 8, seed: opts.seed } satisfies ValidationConfig,
    env,
  );
  log(
    `  ${validation.leaves} leaves of ${validation.meanLeafBytes} B: cold ${validation.coldMicrosPerLeaf} µs CPU/leaf, warm ${validation.warmMicrosPerLeaf} µs`,
  );

  const sequential = await scenario({
    ...base,
    kind: 'sequential',
    label: 'sequential (documented algorithm)',
    leaves: opts.sequentialLeaves,
    concurrency: 1,
  });
  // The side-by-side set, `--repeat` times in rotating order (the machine's load drifts): each one's median run.
  const set = [
    {
      ...base,
      kind: 'ceiling' as const,
      label: 'ceiling (bare loop, SDK PUT)',
      leaves: opts.leaves,
      concurrency: opts.concurrency,
    },
    {
      ...base,
      kind: 'engine' as const,
      label: 'engine, in-memory cursor',
      leaves: opts.leaves,
      concurrency: opts.concurrency,
    },
    {
      ...base,
      kind: 'ceiling-lean' as const,
      label: 'ceiling (bare loop, lean PUT)',
      leaves: opts.leaves,
      concurrency: opts.concurrency,
    },
  ];
  const runs = set.map((): Row[] => []);
  for (let round = 0; round < opts.repeat; round++) {
    for (let k = 0; k < set.length; k++) {
      const i = (k + round) % set.length;
      runs[i]!.push(await scenario(set[i]!));
    }
  }
  const medianRun = (list: Row[]): Row => {
    const sorted = [...list].sort((a, b) => a.leavesPerSec - b.leavesPerSec);
    const picked = sorted[Math.floor((sorted.length - 1) / 2)]!;
    return list.length > 1 ? { ...picked, repeats: list.map((r) => r.leavesPerSec) } : picked;
  };
  const [ceiling, engine, ceilingLean] = runs.map(medianRun) as [Row, Row, Row];
  const engineDynamo = dynamo
    ? await scenario({
        ...base,
        kind: 'engine',
        label: `engine, ${dynamo.kind} cursor`,
        leaves: opts.leaves,
        concurrency: opts.concurrency,
        cursor: 'dynamo',
        dynamoTable,
      })
    : undefined;
  const rss: Row[] = [];
  for (const leaves of opts.rssLeaves) {
    rss.push(
      await scenario({
        ...base,
        kind: 'engine',
        label: `engine, ${leaves}-leaf slice`,
        leaves,
        concurrency: opts.concurrency,
      }),
    );
  }
  const nuget =
    opts.nugetLeaves > 0
      ? await runNugetRows(
          (config, shape) => scenario(config, false, shape),
          servers.replica('nuget').serviceIndexUrl,
          opts,
        )
      : undefined;
  const sweep: Row[] = [];
  for (const concurrency of opts.sweep) {
    sweep.push(
      await scenario({
        ...base,
        kind: 'engine',
        label: `sweep: engine c=${concurrency}`,
        leaves: opts.sweepLeaves,
        concurrency,
      }),
    );
  }
  const profiled = opts.profile
    ? await scenario(
        {
          ...base,
          kind: 'engine',
          label: 'engine, under the CPU profiler',
          leaves: opts.profileLeaves,
          concurrency: opts.concurrency,
        },
        true,
      )
    : undefined;
  let planningProfile: ProfileSummary | undefined;
  if (opts.profile) {
    const profileFile = profilePath('planning');
    await runChild<PlanningResult>(
      'planning.js',
      { ...planningConfig, iterations: 1, profileFile } satisfies PlanningConfig,
      env,
      ['--expose-gc'],
    );
    planningProfile = summarizeProfile(profileFile);
  }

  let backfill: BackfillRows | undefined;
  if (opts.backfillLeaves > 0 && opts.backfillWorkers.length > 0) {
    const info = servers.replica('backfill');
    const runRow = async (config: BackfillScenarioConfig): Promise<BackfillScenarioResult> => {
      await waitIdle();
      await servers.admin('/s3?reset=1');
      return runChild<BackfillScenarioResult>('backfill-scenario.js', config, env);
    };
    backfill = await runBackfillRows(
      runRow,
      {
        source: info.serviceIndexUrl,
        bucket: 'catalog-sync-bench',
        workers: opts.backfillWorkers,
        rangeLeaves: opts.rangeLeaves,
        concurrency: opts.concurrency,
        log,
      },
      { leaves: info.leaves, commits: info.commits, pages: info.pages },
    );
  }

  let warm: WarmResult | undefined;
  if (opts.warm) {
    await waitIdle();
    log('warm-Lambda checks');
    const info = servers.replica('warm');
    warm = await runChild<WarmResult>(
      'warm.js',
      {
        source: info.serviceIndexUrl,
        catalogIndexUrl: info.catalogIndexUrl,
        admin: servers.ready.admin,
        replica: 'warm',
        bucket: 'catalog-sync-bench',
        cursorLatencyMs: opts.cursorLatency,
        concurrency: opts.concurrency,
        sliceLeaves: 1_200,
        appendCommits: 5,
      } satisfies WarmConfig,
      env,
    );
  }

  let reader: ConsumerReaderResult | undefined;
  if (opts.readerCommits > 0) {
    await waitIdle();
    reader = await runReaderRow({
      commits: opts.readerCommits,
      readAhead: opts.readerReadAhead,
      latencyMs: 20,
      seed: opts.seed,
      env,
      log,
    });
  }
  let consumerDefaults: ConsumerDefaultsResult | undefined;
  if (opts.consumerCommits > 0) {
    await waitIdle();
    consumerDefaults = await runConsumerDefaultsRow({
      commits: opts.consumerCommits,
      seed: opts.seed,
      dynamoEndpoint: dynamo?.endpoint,
      env,
      log,
    });
  }
  let view: ViewRowResult | undefined;
  if (opts.viewCommits > 0) {
    await waitIdle();
    view = await runViewRow({ commits: opts.viewCommits, folderCommits: opts.viewFolderCommits, seed: opts.seed, log });
  }
  let largeLeaves: LargeLeafRow | undefined;
  if (opts.largeLeaves > 0) {
    await waitIdle();
    largeLeaves = await runLargeLeafRow({
      leaves: opts.largeLeaves,
      mib: opts.largeLeafMib,
      concurrency: opts.concurrency,
      env,
      log,
    });
  }

  servers.child.kill('SIGTERM');
  await dynamo?.stop();

  // Start-up (issue 24): after the other rows, with the servers stopped; it starts its own.
  let startUp: StartUpResult | undefined;
  if (opts.startUp) {
    await waitIdle();
    startUp = await measureStartUp(5, log);
  }
  // The audit's rate (issue 24): `catalog-sync verify` over a whole mirror, on S3 and a folder.
  let audit: VerifyRateRow[] | undefined;
  if (opts.verifyLeaves > 0) {
    await waitIdle();
    audit = await measureVerifyRate(
      { leaves: opts.verifyLeaves, ranges: 8, s3LatencyMs: opts.s3Latency, catalogLatencyMs: opts.latency },
      log,
    );
  }

  const { text, json } = report({
    opts,
    started,
    initialLoad,
    servers,
    dynamo,
    profileDir,
    sequential,
    ceiling,
    engine,
    ceilingLean,
    engineDynamo,
    rss,
    nuget,
    sweep,
    profiled,
    planning,
    planningProfile,
    validation,
    warm,
    backfill,
    reader,
    consumerDefaults,
    view,
    largeLeaves,
  });
  process.stdout.write(
    `${text}\n${startUp === undefined ? '' : `\n${startUpText(startUp)}\n`}${audit === undefined ? '' : `\n${verifyRateText(audit)}\n`}`,
  );
  if (startUp !== undefined) (json as Record<string, unknown>).startUp = startUp;
  if (audit !== undefined) (json as Record<string, unknown>).audit = audit;
  // The private feed (issue 33): its own servers (a package source, s3rver behind a latency front).
  if (opts.feedPackages > 0) {
    await waitIdle();
    const feed = await runFeedRows(feedRowsOptions(opts, log));
    process.stdout.write(`\n${feedText(feed)}\n`);
    (json as Record<string, unknown>).feed = feed;
  }

  mkdirSync(opts.out, { recursive: true });
  const stamp = new Date()
    .toISOString()
    .replace(/\.\d+Z$/, 'Z')
    .replace(/:/g, '-');
  writeFileSync(join(opts.out, `${stamp}.json`), `${JSON.stringify(json, null, 2)}\n`);
  writeFileSync(join(opts.out, 'latest.json'), `${JSON.stringify(json, null, 2)}\n`);
  log(`wrote ${join(opts.out, `${stamp}.json`)} and latest.json`);
}

void main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
