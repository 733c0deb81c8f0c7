/**
 * `npm run bench`: the catalog-sync benchmark. See bench/README.md.
 *
 * This process only orchestrates: the catalog replicas and the fake S3 run in one child (servers.ts),
 * DynamoDB Local in another (testkit/emulators), and every scenario in a child of its own
 * (scenario.ts, warm.ts, planning.ts), so each scenario's peak RSS and CPU time are its own.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { DEFAULT_CONCURRENCY } from '../lambda/contract/index.js';
import type { PlanningConfig, PlanningResult } from './planning.js';
import type { ValidationConfig, ValidationResult } from './validation.js';
import { formatProfile, summarizeProfile, type ProfileSummary } from './profile-summary.js';
import type { ScenarioConfig, ScenarioResult } from './scenario.js';
import type { ServersConfig, ServersReady, ReplicaInfo } from './servers.js';
import { machineCpuMs, round } from './stats.js';
import type { WarmConfig, WarmResult } from './warm.js';

const here = dirname(fileURLToPath(import.meta.url));
/** bench/ in the source tree (dist/bench/ -> ../../bench). */
const benchSource = join(here, '..', '..', 'bench');

const HELP = `npm run bench -- [options]

  --latency MS              catalog replica latency per request                    (default 20)
  --s3-latency MS           fake S3 latency per request                            (default 15)
  --cursor-latency MS       in-memory cursor store latency per call                (default 5)
  --concurrency N           leaves in flight (engine and ceiling)                  (default: DEFAULT_CONCURRENCY)
  --leaves N                slice of the side-by-side runs: ceilings, engine, engine on DynamoDB (default 5000)
  --rss-leaves LIST         engine slices for peak RSS vs slice size; '' to skip   (default 10000,30000)
  --sequential-leaves N     sample of the sequential algorithm (its rate is flat)  (default 300)
  --leaves-per-commit A-B   commit sizes of the main catalog                       (default 1-20)
  --small-commits-leaves N  engine on a catalog of 1-4-leaf commits; 0: skip       (default 2000)
  --sweep LIST              concurrencies to sweep; '' to skip                     (default 8,16,32,64)
  --sweep-leaves N          slice of each sweep run                                (default 2000)
  --planning-pages N        pages of the synthesized index                         (default 25000)
  --dynamo auto|on|off      also run the engine against DynamoDB Local             (default auto)
  --no-warm                 skip the warm-Lambda checks
  --no-profile              skip the profiled runs (engine and planning under --cpu-prof)
  --profile-leaves N        slice of the profiled engine run                       (default 2000)
  --repeat N                run the side-by-side set (ceilings, engine) N times, rotating their order; the
                            table shows each one's median run                      (default 1)
  --wait-idle S             before each scenario, wait up to S s for other processes to go quiet (default 0)
  --out DIR                 where results go                                       (default bench/results)
  --seed N                  catalog seed                                           (default 42)
`;

interface Options {
  latency: number;
  s3Latency: number;
  cursorLatency: number;
  concurrency: number;
  leaves: number;
  rssLeaves: number[];
  sequentialLeaves: number;
  leavesPerCommit: [number, number];
  smallCommitsLeaves: number;
  sweep: number[];
  sweepLeaves: number;
  planningPages: number;
  dynamo: 'auto' | 'on' | 'off';
  warm: boolean;
  profile: boolean;
  profileLeaves: number;
  waitIdle: number;
  repeat: number;
  out: string;
  seed: number;
}

function options(): Options {
  const { values } = parseArgs({
    options: {
      latency: { type: 'string', default: '20' },
      's3-latency': { type: 'string', default: '15' },
      'cursor-latency': { type: 'string', default: '5' },
      concurrency: { type: 'string', default: String(DEFAULT_CONCURRENCY) },
      leaves: { type: 'string', default: '5000' },
      'rss-leaves': { type: 'string', default: '10000,30000' },
      'sequential-leaves': { type: 'string', default: '300' },
      'leaves-per-commit': { type: 'string', default: '1-20' },
      'small-commits-leaves': { type: 'string', default: '2000' },
      sweep: { type: 'string', default: '8,16,32,64' },
      'sweep-leaves': { type: 'string', default: '2000' },
      'planning-pages': { type: 'string', default: '25000' },
      dynamo: { type: 'string', default: 'auto' },
      'no-warm': { type: 'boolean', default: false },
      'no-profile': { type: 'boolean', default: false },
      'profile-leaves': { type: 'string', default: '2000' },
      'wait-idle': { type: 'string', default: '0' },
      repeat: { type: 'string', default: '1' },
      out: { type: 'string', default: join(benchSource, 'results') },
      seed: { type: 'string', default: '42' },
      help: { type: 'boolean', default: false },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(HELP);
    process.exit(0);
  }
  const int = (name: string, text: string, min = 0): number => {
    if (!/^\d+$/.test(text.trim()) || Number(text) < min) throw new Error(`--${name}: ${JSON.stringify(text)} must be a whole number >= ${min}`);
    return Number(text);
  };
  const list = (name: string, text: string): number[] => (text.trim() === '' ? [] : text.split(',').map((part) => int(name, part.trim(), 1)));
  const range = /^(\d+)-(\d+)$/.exec(values['leaves-per-commit']);
  if (!range || Number(range[1]) < 1 || Number(range[2]) < Number(range[1])) throw new Error('--leaves-per-commit must be A-B with 1 <= A <= B');
  const dynamo = values.dynamo;
  if (dynamo !== 'auto' && dynamo !== 'on' && dynamo !== 'off') throw new Error('--dynamo must be auto, on or off');
  return {
    latency: int('latency', values.latency),
    s3Latency: int('s3-latency', values['s3-latency']),
    cursorLatency: int('cursor-latency', values['cursor-latency']),
    concurrency: int('concurrency', values.concurrency, 1),
    leaves: int('leaves', values.leaves, 1),
    rssLeaves: list('rss-leaves', values['rss-leaves']),
    sequentialLeaves: int('sequential-leaves', values['sequential-leaves'], 1),
    leavesPerCommit: [Number(range[1]), Number(range[2])],
    smallCommitsLeaves: int('small-commits-leaves', values['small-commits-leaves']),
    sweep: list('sweep', values.sweep),
    sweepLeaves: int('sweep-leaves', values['sweep-leaves'], 1),
    planningPages: int('planning-pages', values['planning-pages'], 2),
    dynamo,
    warm: !values['no-warm'],
    profile: !values['no-profile'],
    profileLeaves: int('profile-leaves', values['profile-leaves'], 1),
    waitIdle: int('wait-idle', values['wait-idle']),
    repeat: int('repeat', values.repeat, 1),
    out: values.out,
    seed: int('seed', values.seed),
  };
}

/** Runs a child script with IPC; resolves with its `{ type: 'result' }` message once it has exited (and written any profile). */
function runChild<T>(script: string, config: unknown, env: NodeJS.ProcessEnv, execArgv: string[] = [], timeoutMs = 900_000): Promise<T> {
  return new Promise((resolve, reject) => {
    const child: ChildProcess = fork(join(here, script), [JSON.stringify(config)], { env, execArgv, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    let outcome: { result: T } | { error: Error } | undefined;
    const timer = setTimeout(() => {
      outcome ??= { error: new Error(`${script} took longer than ${timeoutMs} ms`) };
      child.kill('SIGKILL');
    }, timeoutMs);
    child.on('message', (message: { type: string; result?: T; error?: string }) => {
      if (message.type === 'result') outcome ??= { result: message.result as T };
      else if (message.type === 'error') outcome ??= { error: new Error(`${script}: ${message.error}`) };
    });
    child.on('error', (error) => {
      outcome ??= { error };
    });
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      if (outcome && 'result' in outcome) resolve(outcome.result);
      else reject(outcome?.error ?? new Error(`${script} exited (${code ?? signal}) without a result`));
    });
  });
}

interface Servers {
  ready: ServersReady;
  child: ChildProcess;
  replica(name: string): ReplicaInfo;
  admin<T>(path: string): Promise<T>;
}

function startServers(config: ServersConfig): Promise<Servers> {
  return new Promise((resolve, reject) => {
    const child = fork(join(here, 'servers.js'), [JSON.stringify(config)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    child.once('exit', (code) => reject(new Error(`servers exited (${code}) before they were ready`)));
    child.once('message', (message: ServersReady) => {
      resolve({
        ready: message,
        child,
        replica: (name) => message.replicas.find((r) => r.name === name)!,
        admin: async <T>(path: string): Promise<T> => {
          const response = await fetch(`${message.admin}${path}`);
          if (!response.ok) throw new Error(`admin ${path}: HTTP ${response.status}: ${await response.text()}`);
          return (await response.json()) as T;
        },
      });
    });
  });
}

/** A scenario's figures plus what the servers saw meanwhile. */
interface Row extends ScenarioResult {
  readonly serverCpuMs: number;
  /** Server CPU as a share of one core over the scenario's wall time. */
  readonly serverCpuShare: number;
  /** CPU of every other process (other sessions, DynamoDB Local, ...) as a share of one core; NaN if unknown. */
  readonly othersCpuShare: number;
  readonly leafRequests: number;
  readonly pageRequests: number;
  readonly s3Puts: number;
  readonly profile?: ProfileSummary;
  /** With --repeat: leaves/s of every run of this scenario (the row is the median one). */
  readonly repeats?: number[];
}

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

/** Cores busy with anything during the next `ms`. */
async function machineLoad(ms: number): Promise<number> {
  const before = machineCpuMs();
  await new Promise((resolve) => setTimeout(resolve, ms));
  return (machineCpuMs() - before) / ms;
}

async function main(): Promise<void> {
  // The SDK warns that it will need Node 22 from 2027 (the Lambda runtime is nodejs22.x): noise here.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
  const opts = options();
  const started = performance.now();
  const log = (text: string): void => void process.stderr.write(`[bench ${((performance.now() - started) / 1000).toFixed(0).padStart(3)}s] ${text}\n`);
  const mainLeaves = Math.max(opts.leaves, ...opts.rssLeaves, opts.sweep.length > 0 ? opts.sweepLeaves : 0, opts.sequentialLeaves, opts.profile ? opts.profileLeaves : 0);
  const replicas: ServersConfig['replicas'] = [
    // A page more than the largest slice, so every slice ends on its limit rather than at the head.
    { name: 'main', leaves: mainLeaves + 600, leavesPerCommit: opts.leavesPerCommit, seed: opts.seed, pageSize: 550 },
    ...(opts.smallCommitsLeaves > 0 ? [{ name: 'small', leaves: opts.smallCommitsLeaves + 600, leavesPerCommit: [1, 4] as const, seed: opts.seed + 1, pageSize: 550 }] : []),
    ...(opts.warm ? [{ name: 'warm', leaves: 2_500, leavesPerCommit: opts.leavesPerCommit, seed: opts.seed + 2, pageSize: 550 }] : []),
  ];
  const initialLoad = await machineLoad(1_000);
  log(`machine: ${cpus().length} cores, ${initialLoad.toFixed(2)} cores busy before starting (load average ${loadavg().map((l) => l.toFixed(1)).join(' ')})`);
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

  const noFile = join(here, 'no-such-aws-file');
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'bench',
    AWS_SECRET_ACCESS_KEY: 'bench',
    AWS_CONFIG_FILE: noFile,
    AWS_SHARED_CREDENTIALS_FILE: noFile,
    AWS_EC2_METADATA_DISABLED: 'true',
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    AWS_ENDPOINT_URL_S3: servers.ready.s3Endpoint,
    S3_FORCE_PATH_STYLE: 'true',
    ...(dynamo ? { AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint } : {}),
  };
  delete env.AWS_SESSION_TOKEN;
  delete env.AWS_PROFILE;

  const waitIdle = async (): Promise<void> => {
    if (opts.waitIdle <= 0) return;
    const until = performance.now() + opts.waitIdle * 1000;
    for (;;) {
      const busy = await machineLoad(1_000);
      if (busy < 0.3 || performance.now() >= until) {
        if (busy >= 0.3) log(`  still ${busy.toFixed(2)} cores busy with other processes after ${opts.waitIdle} s: going on`);
        return;
      }
    }
  };

  const profileDir = join(opts.out, 'profiles');
  const profilePath = (label: string): string => {
    mkdirSync(profileDir, { recursive: true });
    return join(profileDir, `${label.replace(/[^A-Za-z0-9._]+/g, '-').replace(/^-+|-+$/g, '')}.cpuprofile`);
  };
  const scenario = async (config: Omit<ScenarioConfig, 's3Endpoint' | 'bucket' | 'cursorLatencyMs'>, profile = false): Promise<Row> => {
    await waitIdle();
    log(`${config.label}: ${config.leaves} leaves, concurrency ${config.concurrency}`);
    const replicaName = config.source === servers.replica('main').serviceIndexUrl ? 'main' : 'small';
    await servers.admin(`/log?replica=${replicaName}&clear=1`);
    await servers.admin('/s3?reset=1');
    const cpu0 = await servers.admin<{ userUs: number; systemUs: number }>('/cpu');
    const profileFile = profile ? profilePath(config.label) : undefined;
    const result = await runChild<ScenarioResult>(
      'scenario.js',
      {
        ...config,
        s3Endpoint: servers.ready.s3Endpoint,
        bucket: 'catalog-sync-bench',
        cursorLatencyMs: opts.cursorLatency,
        ...(profileFile ? { profileFile } : {}),
      } satisfies ScenarioConfig,
      env,
    );
    const cpu1 = await servers.admin<{ userUs: number; systemUs: number }>('/cpu');
    const serverLog = await servers.admin<{ leaves: number; pageRequests: number }>(`/log?replica=${replicaName}&clear=1`);
    const s3 = await servers.admin<{ puts: number }>('/s3?reset=1');
    const serverCpuMs = (cpu1.userUs + cpu1.systemUs - cpu0.userUs - cpu0.systemUs) / 1000;
    const row: Row = {
      ...result,
      serverCpuMs: round(serverCpuMs, 1),
      serverCpuShare: round(serverCpuMs / result.wallMs, 2),
      othersCpuShare: round(Math.max(0, result.machineCpuMs - result.cpuMs - serverCpuMs) / result.wallMs, 2),
      leafRequests: serverLog.leaves,
      pageRequests: serverLog.pageRequests,
      s3Puts: s3.puts,
      ...(profileFile ? { profile: summarizeProfile(profileFile) } : {}),
    };
    log(
      `  ${row.leavesPerSec} leaves/s, p50 ${row.perLeafMs.p50} ms, p99 ${row.perLeafMs.p99} ms, ${row.cpuPerLeafMs} ms CPU/leaf, ` +
        `ELU ${row.eventLoopUtilization}, RSS ${row.maxRssMB} MB; servers ${Math.round(row.serverCpuShare * 100)}%, others ${Math.round(row.othersCpuShare * 100)}% of a core`,
    );
    return row;
  };

  const mainSource = servers.replica('main').serviceIndexUrl;
  const base = { source: mainSource, cursor: 'memory' as const };

  await waitIdle();
  log(`planning: ${opts.planningPages} pages`);
  const planningConfig: PlanningConfig = { pages: opts.planningPages, iterations: 6, seed: opts.seed };
  const planning = await runChild<PlanningResult>('planning.js', planningConfig, env, ['--expose-gc']);
  log(`  cold ${planning.cold.totalMs} ms (parse ${planning.cold.parseMs} ms), warm ${planning.warmMedian.totalMs} ms, retained heap ${planning.retainedHeapMB} MB`);
  log('leaf validation: parseLeaf over a generated catalog');
  const validation = await runChild<ValidationResult>('validation.js', { commits: 800, rounds: 8, seed: opts.seed } satisfies ValidationConfig, env);
  log(`  ${validation.leaves} leaves of ${validation.meanLeafBytes} B: cold ${validation.coldMicrosPerLeaf} µs CPU/leaf, warm ${validation.warmMicrosPerLeaf} µs`);

  const sequential = await scenario({ ...base, kind: 'sequential', label: 'sequential (documented algorithm)', leaves: opts.sequentialLeaves, concurrency: 1 });
  // The side-by-side set, `--repeat` times in rotating order (the machine's load drifts): each one's median run.
  const set = [
    { ...base, kind: 'ceiling' as const, label: 'ceiling (bare loop, SDK PUT)', leaves: opts.leaves, concurrency: opts.concurrency },
    { ...base, kind: 'engine' as const, label: 'engine, in-memory cursor', leaves: opts.leaves, concurrency: opts.concurrency },
    { ...base, kind: 'ceiling-lean' as const, label: 'ceiling (bare loop, lean PUT)', leaves: opts.leaves, concurrency: opts.concurrency },
    { ...base, kind: 'engine' as const, store: 'lean' as const, label: 'engine + lean PUT store (what-if)', leaves: opts.leaves, concurrency: opts.concurrency },
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
  const [ceiling, engine, ceilingLean, engineLean] = runs.map(medianRun) as [Row, Row, Row, Row];
  const engineDynamo = dynamo
    ? await scenario({ ...base, kind: 'engine', label: `engine, ${dynamo.kind} cursor`, leaves: opts.leaves, concurrency: opts.concurrency, cursor: 'dynamo', dynamoTable })
    : undefined;
  const rss: Row[] = [];
  for (const leaves of opts.rssLeaves) {
    rss.push(await scenario({ ...base, kind: 'engine', label: `engine, ${leaves}-leaf slice`, leaves, concurrency: opts.concurrency }));
  }
  const small =
    opts.smallCommitsLeaves > 0
      ? await scenario({
          source: servers.replica('small').serviceIndexUrl,
          cursor: 'memory',
          kind: 'engine',
          label: 'engine, 1-4-leaf commits',
          leaves: opts.smallCommitsLeaves,
          concurrency: opts.concurrency,
        })
      : undefined;
  const sweep: Row[] = [];
  for (const concurrency of opts.sweep) {
    sweep.push(await scenario({ ...base, kind: 'engine', label: `sweep: engine c=${concurrency}`, leaves: opts.sweepLeaves, concurrency }));
  }
  const profiled = opts.profile
    ? await scenario({ ...base, kind: 'engine', label: 'engine, under the CPU profiler', leaves: opts.profileLeaves, concurrency: opts.concurrency }, true)
    : undefined;
  let planningProfile: ProfileSummary | undefined;
  if (opts.profile) {
    const profileFile = profilePath('planning');
    await runChild<PlanningResult>('planning.js', { ...planningConfig, iterations: 1, profileFile } satisfies PlanningConfig, env, ['--expose-gc']);
    planningProfile = summarizeProfile(profileFile);
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

  servers.child.kill('SIGTERM');
  await dynamo?.stop();

  // ---- Report ----
  const ratioSeq = engine.leavesPerSec / sequential.leavesPerSec;
  const ratioCeiling = engine.leavesPerSec / ceiling.leavesPerSec;
  const ratioCeilingLean = engine.leavesPerSec / ceilingLean.leavesPerSec;
  const ratioLeanLean = engineLean.leavesPerSec / ceilingLean.leavesPerSec;
  const ratioLeanSeq = engineLean.leavesPerSec / sequential.leavesPerSec;
  const rssSmallest = rss[0];
  const rssLargest = rss.at(-1);
  const targets = [
    { target: `engine >= 15x sequential (${opts.latency} ms latency)`, value: `${ratioSeq.toFixed(1)}x`, ok: ratioSeq >= 15 },
    { target: 'engine >= 0.9 of the ceiling (bare loop, same SDK PUT)', value: ratioCeiling.toFixed(2), ok: ratioCeiling >= 0.9 },
    ...rss.map((r, i) => ({ target: `peak RSS <= 256 MB (${opts.rssLeaves[i]}-leaf slice)`, value: `${r.maxRssMB} MB`, ok: r.maxRssMB <= 256 })),
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
    { target: `${planning.pages}-page index parsed and planned <= 500 ms (cold process)`, value: `${planning.cold.totalMs} ms`, ok: planning.cold.totalMs <= 500 },
    ...(warm
      ? [{ target: 'warm Lambda: index by conditional GET, closed pages never refetched', value: `${warm.checks.filter((c) => c.ok).length}/${warm.checks.length} checks`, ok: warm.checks.every((c) => c.ok) }]
      : []),
  ];

  const out: string[] = [];
  const p = (line = ''): void => void out.push(line);
  const main = servers.replica('main');
  p();
  p(`catalog-sync benchmark — ${new Date().toISOString()} — ${cpus().length} x ${cpus()[0]?.model ?? 'cpu'}, Node ${process.version}`);
  p(
    `catalog latency ${opts.latency} ms/request, S3 latency ${opts.s3Latency} ms/request, in-memory cursor ${opts.cursorLatency} ms/call; ` +
      `main catalog: ${main.leaves} leaves in ${main.commits} commits (${main.meanLeavesPerCommit.toFixed(1)} leaves/commit), ${main.pages} pages, mean leaf ${main.meanLeafBytes} B`,
  );
  p(`other processes on the machine: ${initialLoad.toFixed(2)} cores busy at the start (last column: during each scenario)`);
  p();
  const header = ['scenario', 'conc', 'leaves', 'commits', 'leaves/s', 'p50 ms', 'p99 ms', 'CPU ms/leaf', 'ELU', 'GC ms', 'peak RSS MB', 'servers CPU', 'others CPU'];
  const table: string[][] = [header];
  const shown = [sequential, ceiling, ceilingLean, engine, engineLean, ...(engineDynamo ? [engineDynamo] : []), ...rss, ...(small ? [small] : []), ...sweep, ...(profiled ? [profiled] : [])];
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
  p(`ratios: engine/sequential = ${ratioSeq.toFixed(1)}x   engine/ceiling (SDK PUT) = ${ratioCeiling.toFixed(2)}   engine/ceiling (lean PUT) = ${ratioCeilingLean.toFixed(2)}`);
  p(`what-if, engine + lean PUT store: /sequential = ${ratioLeanSeq.toFixed(1)}x   /ceiling (lean PUT) = ${ratioLeanLean.toFixed(2)}`);
  p(
    `planning: ${planning.pages} pages (${(planning.indexBytes / 1024 / 1024).toFixed(1)} MB index): cold ${planning.cold.totalMs} ms ` +
      `(parse+validate ${planning.cold.parseMs} ms, plan backfill ${planning.cold.planBackfillMs} ms -> ${planning.backfillPages} pages, ` +
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
        r.index.map((i) => `${i.conditional ? 'conditional, ' : ''}${i.status}${i.bytes ? ` (${(i.bytes / 1024).toFixed(1)} kB)` : ''}`).join('; ') || '-',
        r.pagesFetched.length === 0 ? `none of ${r.indexPages}` : `${JSON.stringify(r.pagesFetched)} of ${r.indexPages}`,
        String(r.leaves),
        `${r.server.total}: service index ${r.server.serviceIndex}, index ${r.server.index}, pages ${r.server.pageRequests}, leaves ${r.server.leaves}`,
      ]);
    }
    const ww = wh.map((_, i) => Math.max(...wt.map((row) => row[i]!.length)));
    wt.forEach((row, n) => {
      p('  ' + row.map((cell, i) => cell.padEnd(ww[i]!)).join('  ').trimEnd());
      if (n === 0) p('  ' + ww.map((w) => '-'.repeat(w)).join('  '));
    });
    for (const c of warm.checks) p(`  ${c.ok ? 'ok  ' : 'FAIL'} ${c.name}${c.ok ? '' : `: ${c.detail}`}`);
  }
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
  process.stdout.write(text + '\n');

  mkdirSync(opts.out, { recursive: true });
  const stamp = new Date().toISOString().replace(/\.\d+Z$/, 'Z').replace(/:/g, '-');
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
      engineOverSequential: round(ratioSeq, 2),
      engineOverCeiling: round(ratioCeiling, 3),
      engineOverCeilingLean: round(ratioCeilingLean, 3),
      leanEngineOverSequential: round(ratioLeanSeq, 2),
      leanEngineOverCeilingLean: round(ratioLeanLean, 3),
    },
    planning: { ...planning, ...(planningProfile ? { profile: planningProfile } : {}) },
    validation,
    warm: warm ?? null,
    targets,
    durationMs: Math.round(performance.now() - started),
    table: text,
  };
  writeFileSync(join(opts.out, `${stamp}.json`), JSON.stringify(json, null, 2) + '\n');
  writeFileSync(join(opts.out, 'latest.json'), JSON.stringify(json, null, 2) + '\n');
  log(`wrote ${join(opts.out, `${stamp}.json`)} and latest.json`);
}

void main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
