/**
 * The follower's Lambda cold start, for the start-up figures (start-up.ts): the handler bundled exactly as the
 * construct bundles it, then in fresh processes the time to load it and to answer a first invocation against the
 * replica, DynamoDB Local (or dynalite) and s3rver, warmed first as AWS's servers are.
 */
import { spawn } from 'node:child_process';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { latestNodeRuntime, nodeBundling } from '../infra/constructs/sync-function.js';
import { DeleteObjectCommand, HeadObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { DeleteCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import {
  CatalogReplica,
  clientsFor,
  createBucket,
  createCursorTable,
  generateCatalog,
  startDynamo,
  startS3,
} from '../testkit/index.js';

const REPO = fileURLToPath(new URL('../../', import.meta.url));

/** One cold start: load, first invocation, their sum, and the whole process's CPU (Node's own start included). */
export interface ColdStart {
  readonly loadMs: number;
  readonly firstInvocationMs: number;
  readonly totalMs: number;
  readonly cpuMs: number;
}

/** The Lambda's figures: its bundle's size, and the median cold start without and with source maps. */
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
async function coldInvocation(
  file: string,
  source: string,
  dynamoEndpoint: string,
  s3Endpoint: string,
  name: string,
  sourceMaps = false,
): Promise<{ loadMs: number; firstInvocationMs: number; cpuMs: number }> {
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
    const child = spawn(process.execPath, [...flags, '--input-type=module', '-e', INVOKE_SCRIPT], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve(stdout) : reject(new Error(`first invocation: exit ${code}: ${stderr.slice(-2000)}`)),
    );
  });
  const marked = output.split('\n').find((line) => line.startsWith('STARTUP '));
  if (marked === undefined) throw new Error(`first invocation printed no figures: ${output.slice(-2000)}`);
  return JSON.parse(marked.slice('STARTUP '.length)) as { loadMs: number; firstInvocationMs: number; cpuMs: number };
}

/** The bundle's size and `repeat` cold starts of each kind (the median one's figures). */
export async function lambdaFigures(dir: string, repeat: number, log: (line: string) => void): Promise<LambdaFigures> {
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
    const medianRun = (runs: ColdStart[]): ColdStart =>
      [...runs].sort((a, b) => a.totalMs - b.totalMs)[Math.floor(runs.length / 2)]!;
    const { loadMs, firstInvocationMs, totalMs, cpuMs } = medianRun(plain);
    return {
      bundleBytes: bytes,
      withSourceMaps: medianRun(mapped),
      loadMs,
      firstInvocationMs,
      totalMs,
      cpuMs,
      runs: repeat,
      nodeVersion: process.version,
    };
  } finally {
    await replica.stop();
    await dynamo.stop();
    await s3.stop();
  }
}
