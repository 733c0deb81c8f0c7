/**
 * The consumer's rows of `npm run bench`: the reader (a fake S3 of its own, its latency the reader's target condition,
 * 20 ms a GET, whatever `--s3-latency` the engine rows use) and a named consumer at its defaults against the reader
 * alone (consumer-defaults.ts); their target lines and their text for the report.
 */
import type { ConsumerDefaultsConfig, ConsumerDefaultsResult } from './consumer-defaults.js';
import type { ConsumerReaderConfig, ConsumerReaderResult } from './consumer-reader.js';
import { runChild, startServers } from './children.js';

/** The target: manifests read in order at this rate or better, at 20 ms a GET. */
export const READER_TARGET_COMMITS_PER_SEC = 2_000;

/** Runs the reader over `commits` manifests at `latencyMs` a request. */
export async function runReaderRow(options: {
  commits: number;
  readAhead: number;
  latencyMs: number;
  seed: number;
  env: NodeJS.ProcessEnv;
  log: (text: string) => void;
}): Promise<ConsumerReaderResult> {
  const servers = await startServers({ catalogLatencyMs: 0, s3LatencyMs: options.latencyMs, replicas: [] });
  try {
    options.log(
      `consumer reader: ${options.commits} manifests, read-ahead ${options.readAhead}, S3 at ${options.latencyMs} ms a request`,
    );
    const config: ConsumerReaderConfig = {
      s3Endpoint: servers.ready.s3Endpoint,
      bucket: 'catalog-sync-reader',
      commits: options.commits,
      readAhead: options.readAhead,
      s3LatencyMs: options.latencyMs,
      seed: options.seed,
    };
    const result = await runChild<ConsumerReaderResult>('consumer-reader.js', config, options.env, [
      '--expose-gc',
      ...(process.env.READER_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.READER_CPU_PROF}`] : []),
    ]);
    options.log(
      `  ${result.commitsPerSec} commits/s, ${result.leavesPerSec} leaves/s; live heap ${result.heapMB.join(' ')} MB; RSS ${result.rssMB.at(0)} -> ${result.rssMB.at(-1)} MB`,
    );
    return result;
  } finally {
    servers.child.kill('SIGTERM');
  }
}

/** The reader's target lines. */
export function readerTargets(
  reader: ConsumerReaderResult | undefined,
): { target: string; value: string; ok: boolean }[] {
  if (reader === undefined) return [];
  const first = reader.heapMB[0] ?? 0;
  const last = reader.heapMB.at(-1) ?? 0;
  return [
    {
      target: `consumer reader: >= ${READER_TARGET_COMMITS_PER_SEC.toLocaleString('en-US')} commits/s of manifests at ${reader.s3LatencyMs} ms a GET`,
      value: `${reader.commitsPerSec.toLocaleString('en-US')} commits/s (${reader.leavesPerSec.toLocaleString('en-US')} leaves/s)`,
      ok: reader.commitsPerSec >= READER_TARGET_COMMITS_PER_SEC,
    },
    {
      target: `consumer reader: live heap flat over ${reader.commits.toLocaleString('en-US')} commits (last tenth within 5 MB of the first)`,
      value: `${first} -> ${last} MB`,
      ok: last - first <= 5,
    },
  ];
}

/** The reader's line in the report's text. */
export function readerText(reader: ConsumerReaderResult | undefined): string {
  if (reader === undefined) return '';
  return (
    `consumer reader: ${reader.commits} manifests (${reader.leaves} leaves) in ${reader.wallMs} ms at ${reader.s3LatencyMs} ms a request, read-ahead ${reader.readAhead}: ` +
    `${reader.commitsPerSec} commits/s, ${reader.leavesPerSec} leaves/s, ${reader.cpuMs} ms CPU; live heap by tenths ${reader.heapMB.join(' ')} MB, RSS ${reader.rssMB.join(' ')} MB\n`
  );
}

/** The target of a consumer at its defaults (issue 29): at least this share of the reader alone on the same mirror. */
export const DEFAULTS_TARGET_RATIO = 0.5;

/** Runs the consumer-at-its-defaults child over `commits` commits (the folder; and S3 + DynamoDB when `dynamoEndpoint`). */
export async function runConsumerDefaultsRow(options: {
  commits: number;
  seed: number;
  dynamoEndpoint: string | undefined;
  env: NodeJS.ProcessEnv;
  log: (text: string) => void;
}): Promise<ConsumerDefaultsResult> {
  options.log(
    `consumer at its defaults against the reader alone: ${options.commits} commits, a local folder${options.dynamoEndpoint === undefined ? '' : ' and s3rver + DynamoDB'}`,
  );
  const config: ConsumerDefaultsConfig = {
    commits: options.commits,
    rounds: 3,
    everyOneCommits: 300,
    seed: options.seed,
    ...(options.dynamoEndpoint === undefined ? {} : { dynamoEndpoint: options.dynamoEndpoint }),
  };
  const result = await runChild<ConsumerDefaultsResult>('consumer-defaults.js', config, options.env);
  for (const store of result.stores) {
    options.log(
      `  ${store.store}: reader ${store.reader.commitsPerSec} commits/s, consumer at its defaults ${store.defaults.commitsPerSec} commits/s (${store.ratio} of it), a checkpoint a commit ${store.everyOne.commitsPerSec} commits/s`,
    );
  }
  return result;
}

/** The consumer's target lines: one per store. */
export function consumerDefaultsTargets(
  result: ConsumerDefaultsResult | undefined,
): { target: string; value: string; ok: boolean }[] {
  return (result?.stores ?? []).map((store) => ({
    target: `consumer at its defaults >= ${DEFAULTS_TARGET_RATIO} of the reader alone (${store.store}, ${store.commits.toLocaleString('en-US')} commits of about 3 leaves)`,
    value: `${store.ratio} (${store.defaults.commitsPerSec.toLocaleString('en-US')} against ${store.reader.commitsPerSec.toLocaleString('en-US')} commits/s)`,
    ok: store.ratio >= DEFAULTS_TARGET_RATIO,
  }));
}

/** The consumer's lines in the report's text. */
export function consumerDefaultsText(result: ConsumerDefaultsResult | undefined): string {
  if (result === undefined) return '';
  return result.stores
    .map(
      (store) =>
        `consumer at its defaults, ${store.store}: ${store.commits} commits (${store.leaves} leaves); reader alone ${store.reader.commitsPerSec} commits/s (rounds ${store.reader.rounds.join(' ')}; ` +
        `${store.reader.cpuMsPer1000} ms CPU per 1,000), consumer ${store.defaults.commitsPerSec} commits/s (rounds ${store.defaults.rounds.join(' ')}; ${store.defaults.cpuMsPer1000} ms CPU per 1,000, ` +
        `${store.defaults.checkpoints} checkpoints) = ${store.ratio} of the reader; a checkpoint after every commit: ${store.everyOne.commitsPerSec} commits/s (${store.everyOne.cpuMsPer1000} ms CPU per 1,000)\n`,
    )
    .join('');
}
