/// <reference path="./provided.d.ts" />
/**
 * Vitest global setup: ONE DynamoDB emulator and ONE s3rver for the whole run, on 127.0.0.1.
 * Tests reach them through `testServices()` (env.ts) and create their own uniquely named tables
 * and buckets, so test files can run in parallel against them.
 */
import { existsSync } from 'node:fs';
import type { TestProject } from 'vitest/node';
import { CLI_BUNDLE } from './cli-process.js';
import { startDynamo, startS3, type DynamoEmulator, type S3Emulator } from './emulator-processes.js';

/**
 * Starts the emulators (in parallel), provides their endpoints, and returns the teardown that stops
 * them. If one fails to start, the other is stopped before the error is rethrown. Two projects use this file
 * (vitest.config.ts): vitest calls it once for each, in one process, and both get the same emulators, stopped
 * when the last project tears down.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  // The integration tests run the built CLI: `npm ci` no longer builds it (the package has no install script).
  if (!existsSync(CLI_BUNDLE))
    throw new Error(
      `${CLI_BUNDLE} is missing: run \`npm run build\` first (npm test and npm run test:integration build it)`,
    );
  const shared = globalThis as { [SHARED]?: SharedEmulators };
  shared[SHARED] ??= { users: 0, services: startEmulators() };
  const emulators = shared[SHARED];
  emulators.users += 1;
  const [dynamo, s3] = await emulators.services;
  project.provide('dynamoEndpoint', dynamo.endpoint);
  project.provide('dynamoKind', dynamo.kind);
  project.provide('s3Endpoint', s3.endpoint);
  return async () => {
    emulators.users -= 1;
    if (emulators.users > 0) return;
    delete shared[SHARED];
    await Promise.allSettled([dynamo, s3].map((service) => service.stop()));
  };
}

const SHARED = Symbol.for('catalog-sync.test-emulators');

interface SharedEmulators {
  users: number;
  readonly services: Promise<[DynamoEmulator, S3Emulator]>;
}

async function startEmulators(): Promise<[DynamoEmulator, S3Emulator]> {
  const [dynamo, s3] = await withJavaOptions(JVM_OPTIONS, () => Promise.allSettled([startDynamo(), startS3()]));
  if (dynamo.status === 'rejected' || s3.status === 'rejected') {
    await Promise.allSettled([dynamo, s3].map((r) => (r.status === 'fulfilled' ? r.value.stop() : undefined)));
    throw (dynamo.status === 'rejected' ? dynamo.reason : (s3 as PromiseRejectedResult).reason) as Error;
  }
  return [dynamo.value, s3.value];
}

/**
 * DynamoDB Local's JVM on the 2-core machine the tests share: the client compiler only (the optimizing one spent
 * about a third of the emulator's CPU compiling, for a run of minutes where its code is never hot for long) and
 * the serial collector (no parallel GC threads competing with the test processes). Measured on four DynamoDB
 * files: 36.4 CPU-s for the whole run without these, 26.9 with, the same wall time.
 */
const JVM_OPTIONS = '-XX:TieredStopAtLevel=1 -XX:+UseSerialGC';

/**
 * Runs `start` with `options` added to JAVA_TOOL_OPTIONS (which the JVM reads; a value already set comes first),
 * then restores the variable, so that only the emulator started here gets them, not the test processes.
 */
async function withJavaOptions<T>(options: string, start: () => Promise<T>): Promise<T> {
  const saved = process.env.JAVA_TOOL_OPTIONS;
  process.env.JAVA_TOOL_OPTIONS = saved ? `${saved} ${options}` : options;
  try {
    return await start();
  } finally {
    if (saved === undefined) delete process.env.JAVA_TOOL_OPTIONS;
    else process.env.JAVA_TOOL_OPTIONS = saved;
  }
}
