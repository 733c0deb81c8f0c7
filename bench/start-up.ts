/**
 * Start-up (issue 24, part 4): what a command costs before it does anything, and the Lambda's cold start.
 *
 * - CLI: CPU seconds (user + system, read by a preload at the child's exit) and wall time of
 *   `catalog-sync --version`, `status` and a no-op `run` (already caught up) on a local folder, each the median
 *   of `repeat` fresh processes, against a catalog replica in this process: with the code cache of
 *   bin/catalog-sync.js off (NODE_DISABLE_COMPILE_CACHE=1: a first command after an install or an upgrade) and
 *   warm (every command after). And `node -e 0`, Node's own start, the floor under every figure: on a loaded machine
 *   all of them rise together.
 * - Lambda: the handler bundled exactly as the construct bundles it (`nodeBundling` of
 *   infra/constructs/sync-function.ts, through the esbuild API): its size, then in a fresh process the time to
 *   load it and to answer a first invocation (a fresh cursor, 5 commits) against the replica, DynamoDB Local (or
 *   dynalite) and s3rver. The servers are warmed first, as AWS's are: a whole invocation in a process of its own,
 *   then, before each measured process, a read and a write on its new table and bucket (a new table or bucket
 *   answers its first requests slower on the local servers).
 *
 * Alone: `node dist/bench/start-up.js [--repeat N] [--only cli|lambda]`.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, statSync, } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { latestNodeRuntime, nodeBundling } from '../infra/constructs/sync-function.js';
import { DeleteObjectCommand, HeadObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { DeleteCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { CatalogReplica, clientsFor, createBucket, createCursorTable, generateCatalog, startDynamo, startS3 } from '../testkit/index.js';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const CLI = join(REPO, 'bin', 'catalog-sync.js');

/** CPU and wall seconds of one command: medians over the runs. */
export interface Figures {
  readonly cpuSeconds: number;
  readonly wallSeconds: number;
}

/** One command's figures, with the code cache off (`cold`) and warm. */
export interface CommandFigures {
  readonly command: string;
  readonly cold: Figures;
  readonly warm: Figures;
  readonly runs: number;
}

/** One cold start: load, first invocation, their sum, and the whole process's CPU (Node's own start included). */
export interface ColdStart {
  readonly loadMs: number;
  readonly firstInvocationMs: number;
  readonly totalMs: number;
  readonly cpuMs: number;
}

export interface LambdaFigures {
  readonly bundleBytes: number;
  /** As the stack deploys it: NODE_OPTIONS=--enable-source-maps (infra/catalog-sync.ts), so Node reads the bundle's source map at load. */
  readonly withSourceMaps: ColdStart;
  readonly loadMs: number;
  readonly firstInvocationMs: number;
  readonly totalMs: number;
  /** CPU of the whole cold process (Node's own start included). */
  readonly cpuMs: number;
  /** Cold processes measured (the figures are the median one's, by total). */
  readonly runs: number;
  readonly nodeVersion: string;
}

export interface StartUpResult {
  /** `node -e 0`: Node's own start, under whatever load the machine had. */
  readonly node?: Figures;
  readonly cli: CommandFigures[];
  readonly lambda?: LambdaFigures;
  readonly targets: Array<{ readonly what: string; readonly met: boolean }>;
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/**
 * Runs `node <args>` under bash and reads the CPU the process used from bash's `times` (user + system of the
 * waited-for child, all its threads, to its very end). A preload reading `process.cpuUsage()` at the 'exit' event
 * missed what Node does after it: a V8 background thread still compiling undici's WebAssembly HTTP parser with
 * TurboFan, which the process waits for, was 0.06-0.09 CPU-s of a no-op `run` not counted before 2026-11-26.
 */
function measured(args: string[], env: NodeJS.ProcessEnv): Promise<{ cpuSeconds: number; wallSeconds: number; code: number | null }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const script = '"$@" >/dev/null 2>&1; status=$?; times >&2; exit $status';
    const child = spawn('bash', ['-c', script, 'bash', process.execPath, ...args], { env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      const wallSeconds = (performance.now() - started) / 1000;
      // `times`: the shell's own user and system time, then its children's ("0m0.123s 0m0.045s").
      const children = stderr.trim().split('\n').at(-1) ?? '';
      const seconds = [...children.matchAll(/(\d+)m([\d.]+)s/g)].map((m) => Number(m[1]) * 60 + Number(m[2]));
      if (seconds.length !== 2) return reject(new Error(`bash times: unexpected output ${JSON.stringify(stderr)}`));
      resolve({ cpuSeconds: seconds[0]! + seconds[1]!, wallSeconds, code });
    });
  });
}

async function figures(args: string[], repeat: number, env: NodeJS.ProcessEnv, what: string): Promise<Figures> {
  const cpu: number[] = [];
  const wall: number[] = [];
  for (let i = 0; i < repeat; i++) {
    const run = await measured(args, env);
    if (run.code !== 0) throw new Error(`${what}: exit ${run.code}`);
    cpu.push(run.cpuSeconds);
    wall.push(run.wallSeconds);
  }
  return { cpuSeconds: median(cpu), wallSeconds: median(wall) };
}

/** `command` with the code cache off and warm, the runs of each interleaved. `env` holds the bench's own TMPDIR. */
async function commandFigures(command: string, args: string[], repeat: number, env: NodeJS.ProcessEnv): Promise<CommandFigures> {
  const cold: Figures[] = [];
  const warm: Figures[] = [];
  for (let i = 0; i < repeat; i++) {
    cold.push(await figures([CLI, ...args], 1, { ...env, NODE_DISABLE_COMPILE_CACHE: '1' }, command));
    warm.push(await figures([CLI, ...args], 1, env, command));
  }
  const medianOf = (runs: Figures[]): Figures => ({ cpuSeconds: median(runs.map((r) => r.cpuSeconds)), wallSeconds: median(runs.map((r) => r.wallSeconds)) });
  return { command, cold: medianOf(cold), warm: medianOf(warm), runs: repeat };
}

/** The handler bundled with the construct's own options; returns the bundle's path and size. */
async function bundleHandler(dir: string): Promise<{ file: string; bytes: number }> {
  const options = nodeBundling(latestNodeRuntime());
  const outfile = join(dir, 'handler', 'index.mjs');
  await build({
    entryPoints: [join(REPO, 'lambda', 'sync', 'lambda.ts')],
    outfile,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: options.target ?? 'node22',
    mainFields: options.mainFields ?? ['module', 'main'],
    minify: options.minify ?? false,
    sourcemap: options.sourceMap ?? false,
    sourcesContent: options.sourcesContent ?? false,
    external: options.externalModules ?? [],
    banner: { js: options.banner ?? '' },
    logLevel: 'warning',
  });
  return { file: outfile, bytes: statSync(outfile).size };
}

/** In a fresh process: import the bundle, invoke the handler once; prints `{ loadMs, firstInvocationMs }`. */
const INVOKE_SCRIPT = `
const started = performance.now();
const { handler } = await import(process.env.BUNDLE);
const loaded = performance.now();
const context = { getRemainingTimeInMillis: () => 60_000, awsRequestId: 'bench', functionName: 'catalog-sync-bench' };
const summary = await handler({}, context);
const answered = performance.now();
if (!summary || summary.commits !== 5) throw new Error('unexpected summary: ' + JSON.stringify(summary));
const cpu = process.cpuUsage();
process.stdout.write('\\nSTARTUP ' + JSON.stringify({ loadMs: loaded - started, firstInvocationMs: answered - loaded, cpuMs: (cpu.user + cpu.system) / 1000 }) + '\\n');
process.exit(0);
`;

/**
 * A read and a write on a new table and bucket from this process, so that the measured process does not pay for
 * the local servers' first requests to them (DynamoDB Local sets a new table up on its first use; s3rver a new
 * bucket's folders): on AWS the function's table and bucket are long warm.
 */
async function warmTableAndBucket(dynamoEndpoint: string, s3Endpoint: string, name: string): Promise<void> {
  const clients = clientsFor({ dynamoEndpoint, s3Endpoint });
  try {
    const key = { pk: 'bench-warm-up', sk: 'bench-warm-up' };
    await clients.documents.send(new PutCommand({ TableName: name, Item: key }));
    await clients.documents.send(new GetCommand({ TableName: name, Key: key, ConsistentRead: true }));
    await clients.documents.send(new DeleteCommand({ TableName: name, Key: key }));
    await clients.s3.send(new PutObjectCommand({ Bucket: name, Key: 'bench-warm-up', Body: 'warm-up' }));
    await clients.s3.send(new DeleteObjectCommand({ Bucket: name, Key: 'bench-warm-up' }));
    await clients.s3.send(new HeadObjectCommand({ Bucket: name, Key: 'bench-warm-up' })).catch(() => undefined);
  } finally {
    clients.destroy();
  }
}

/** One cold process: load the bundle, answer one invocation into a new table and bucket named `name`. */
async function coldInvocation(file: string, source: string, dynamoEndpoint: string, s3Endpoint: string, name: string, sourceMaps = false): Promise<{ loadMs: number; firstInvocationMs: number; cpuMs: number }> {
  await createCursorTable(dynamoEndpoint, name);
  await createBucket(s3Endpoint, name);
  await warmTableAndBucket(dynamoEndpoint, s3Endpoint, name);
  const env = {
    PATH: process.env.PATH ?? '',
    BUNDLE: file,
    CATALOG_SOURCE: source,
    CURSOR_TABLE: name,
    SNAPSHOT_BUCKET: name,
    AWS_ENDPOINT_URL_DYNAMODB: dynamoEndpoint,
    AWS_ENDPOINT_URL_S3: s3Endpoint,
    S3_FORCE_PATH_STYLE: 'true',
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'S3RVER',
    AWS_SECRET_ACCESS_KEY: 'S3RVER',
    AWS_LAMBDA_FUNCTION_NAME: 'catalog-sync-bench',
    POWERTOOLS_METRICS_DISABLED: 'true',
    ...(sourceMaps ? { NODE_OPTIONS: '--enable-source-maps' } : {}),
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  };
  const output = await new Promise<string>((resolve, reject) => {
    // CATALOG_SYNC_STARTUP_PROFILE=<dir>: a CPU profile of the cold start, for profile-summary.js.
    const profile = process.env.CATALOG_SYNC_STARTUP_PROFILE;
    const flags = profile === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', profile, '--cpu-prof-interval', '100'];
    const child = spawn(process.execPath, [...flags, '--input-type=module', '-e', INVOKE_SCRIPT], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(stdout) : reject(new Error(`first invocation: exit ${code}: ${stderr.slice(-2000)}`))));
  });
  const marked = output.split('\n').find((line) => line.startsWith('STARTUP '));
  if (marked === undefined) throw new Error(`first invocation printed no figures: ${output.slice(-2000)}`);
  return JSON.parse(marked.slice('STARTUP '.length)) as { loadMs: number; firstInvocationMs: number; cpuMs: number };
}

async function lambdaFigures(dir: string, repeat: number, log: (line: string) => void): Promise<LambdaFigures> {
  const { file, bytes } = await bundleHandler(dir);
  log(`lambda bundle: ${(bytes / 1024).toFixed(0)} KiB`);
  const replica = await CatalogReplica.start({ catalog: generateCatalog({ commits: 5, seed: 24 }), pageSize: 10 });
  const dynamo = await startDynamo();
  const s3 = await startS3();
  try {
    // A fresh process per invocation: the first only warms the servers (DynamoDB Local's JVM, s3rver), as AWS's
    // are warm; the next are the measured cold starts of the handler.
    await coldInvocation(file, replica.serviceIndexUrl, dynamo.endpoint, s3.endpoint, 'startup-warm-up');
    // Then `repeat` cold processes (each its own new table and bucket) without source maps and as many with them,
    // interleaved; the figures of the median one by total.
    const plain: ColdStart[] = [];
    const mapped: ColdStart[] = [];
    const cold = async (name: string, sourceMaps: boolean): Promise<ColdStart> => {
      const run = await coldInvocation(file, replica.serviceIndexUrl, dynamo.endpoint, s3.endpoint, name, sourceMaps);
      return { ...run, totalMs: run.loadMs + run.firstInvocationMs };
    };
    for (let i = 0; i < repeat; i++) {
      plain.push(await cold(`startup-${i}`, false));
      mapped.push(await cold(`startup-maps-${i}`, true));
    }
    const medianRun = (runs: ColdStart[]): ColdStart => [...runs].sort((a, b) => a.totalMs - b.totalMs)[Math.floor(runs.length / 2)]!;
    const { loadMs, firstInvocationMs, totalMs, cpuMs } = medianRun(plain);
    return { bundleBytes: bytes, withSourceMaps: medianRun(mapped), loadMs, firstInvocationMs, totalMs, cpuMs, runs: repeat, nodeVersion: process.version };
  } finally {
    await replica.stop();
    await dynamo.stop();
    await s3.stop();
  }
}

/** Which figures to measure: the CLI's commands, the Lambda's cold start, or both (the default). */
export interface StartUpParts {
  readonly cli?: boolean;
  readonly lambda?: boolean;
}

/** Every start-up figure; `repeat` fresh processes per CLI command and for the Lambda's cold start. */
export async function measureStartUp(
  repeat = 5,
  log: (line: string) => void = () => undefined,
  parts: StartUpParts = { cli: true, lambda: true },
): Promise<StartUpResult> {
  const dir = mkdtempSync(join(tmpdir(), 'catalog-sync-startup-'));
  try {
    const measuredCli = parts.cli === false ? undefined : await cliFigures(dir, repeat, log);
    const cli = measuredCli?.commands ?? [];
    let lambda: LambdaFigures | undefined;
    if (parts.lambda !== false) {
      log('start-up: Lambda bundle and first invocation');
      lambda = await lambdaFigures(dir, repeat, log);
    }
    const noop = cli[2];
    const targets: Array<{ what: string; met: boolean }> = [];
    if (noop) {
      targets.push({ what: `no-op local run < 0.15 CPU-s, code cache warm (${noop.warm.cpuSeconds.toFixed(3)})`, met: noop.warm.cpuSeconds < 0.15 });
      targets.push({ what: `no-op local run < 0.15 CPU-s, code cache off (${noop.cold.cpuSeconds.toFixed(3)})`, met: noop.cold.cpuSeconds < 0.15 });
    }
    if (lambda) {
      targets.push({ what: `handler bundle loaded + first invocation < 250 ms (${lambda.totalMs.toFixed(0)})`, met: lambda.totalMs < 250 });
      const deployed = lambda.withSourceMaps.totalMs;
      targets.push({ what: `the same with the stack's --enable-source-maps (${deployed.toFixed(0)})`, met: deployed < 250 });
    }
    return { ...(measuredCli ? { node: measuredCli.node } : {}), cli, ...(lambda ? { lambda } : {}), targets };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function cliFigures(dir: string, repeat: number, log: (line: string) => void): Promise<{ node: Figures; commands: CommandFigures[] }> {
  const replica = await CatalogReplica.start({ catalog: generateCatalog({ commits: 50, seed: 24 }), pageSize: 20 });
  try {
    const folder = join(dir, 'mirror');
    const at = ['--source', replica.serviceIndexUrl, '--data-dir', folder];
    // The code cache of these runs in a temp folder of the bench's own.
    const temp = join(dir, 'tmp');
    mkdirSync(temp);
    const env = { ...process.env, TMPDIR: temp };
    // Caught up first: the measured `run` finds nothing to do. This run also writes the code cache.
    const first = await measured([CLI, 'run', ...at, '--no-progress'], env);
    if (first.code !== 0) throw new Error(`catch-up run: exit ${first.code}`);
    log('start-up: CLI commands');
    return {
      node: await figures(['-e', '0'], repeat, env, 'node -e 0'),
      commands: [
        await commandFigures('catalog-sync --version', ['--version'], repeat, env),
        await commandFigures('catalog-sync status (folder)', ['status', ...at], repeat, env),
        await commandFigures('catalog-sync run (folder, no-op)', ['run', ...at, '--no-progress'], repeat, env),
      ],
    };
  } finally {
    await replica.stop();
  }
}

/** The start-up table, for the report. */
export function startUpText(result: StartUpResult): string {
  const lines = [
    'Start-up (median of fresh processes; CPU = user + system; code cache of bin/catalog-sync.js off | warm)',
    '  command                              CPU s off   warm    wall s off   warm',
  ];
  const cell = (n: number, width: number): string => n.toFixed(3).padStart(width);
  if (result.node) lines.push(`  ${'node -e 0 (Node alone)'.padEnd(36)} ${cell(result.node.cpuSeconds, 9)} ${''.padStart(6)}  ${cell(result.node.wallSeconds, 10)}`);
  for (const row of result.cli) {
    lines.push(`  ${row.command.padEnd(36)} ${cell(row.cold.cpuSeconds, 9)} ${cell(row.warm.cpuSeconds, 6)}  ${cell(row.cold.wallSeconds, 10)} ${cell(row.warm.wallSeconds, 6)}`);
  }
  if (result.lambda) {
    const l = result.lambda;
    lines.push(
      `  Lambda handler bundle: ${(l.bundleBytes / 1024).toFixed(0)} KiB (ESM, minified, as the construct bundles it); ` +
        `load ${l.loadMs.toFixed(0)} ms + first invocation ${l.firstInvocationMs.toFixed(0)} ms = ${l.totalMs.toFixed(0)} ms, ${l.cpuMs.toFixed(0)} ms CPU in all ` +
        `(median of ${l.runs} cold processes, Node ${l.nodeVersion}, local servers warmed first); ` +
        `as deployed (NODE_OPTIONS=--enable-source-maps): load ${l.withSourceMaps.loadMs.toFixed(0)} ms + first invocation ${l.withSourceMaps.firstInvocationMs.toFixed(0)} ms = ${l.withSourceMaps.totalMs.toFixed(0)} ms`,
    );
  }
  // The machine's speed varies from one hour to the next (Node's own start has measured 0.072 to 0.12 CPU-s here):
  // what a command adds to Node's own start compares across runs better than its whole figure.
  const noop = result.cli[2];
  if (result.node && noop) {
    lines.push(`  no-op run above Node's own start: ${(noop.warm.cpuSeconds - result.node.cpuSeconds).toFixed(3)} CPU-s warm, ${(noop.cold.cpuSeconds - result.node.cpuSeconds).toFixed(3)} off`);
  }
  for (const target of result.targets) lines.push(`  target ${target.met ? 'met' : 'NOT met'}: ${target.what}`);
  return lines.join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const repeatAt = process.argv.indexOf('--repeat');
  const repeat = repeatAt > 0 ? Number(process.argv[repeatAt + 1]) : 5;
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
  // --only cli | --only lambda: one half of the figures.
  const onlyAt = process.argv.indexOf('--only');
  const only = onlyAt > 0 ? process.argv[onlyAt + 1] : undefined;
  const parts = only === undefined ? undefined : { cli: only === 'cli', lambda: only === 'lambda' };
  measureStartUp(repeat, (line) => process.stderr.write(`${line}\n`), parts).then(
    (result) => {
      process.stdout.write(`${startUpText(result)}\n${JSON.stringify(result)}\n`);
      process.exit(0);
    },
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
