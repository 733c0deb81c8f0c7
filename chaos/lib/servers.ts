/**
 * DynamoDB and S3 emulators that can be stopped and started again mid-run, on the same port, with their
 * data kept: DynamoDB Local with `-dbPath` (dynalite with a LevelDB `path` where Java is missing), and
 * s3rver with the same directory. Everything listens on 127.0.0.1 and lives under one temporary folder
 * (on /dev/shm when there is one), removed by {@link Emulators.close}.
 *
 * testkit/emulator-processes.ts starts in-memory emulators on a fresh port each time, which is right
 * for tests and useless here: a restarted in-memory DynamoDB Local has lost every table.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import {
  childScript,
  dynamoDbLocalDirectory,
  freePort,
  javaWorks,
  type ManagedChild,
  startChild,
  untilAnswering,
  waitForReady,
} from '../../testkit/index.js';

const READY_TIMEOUT_MS = 90_000;

/** One emulator process that can be stopped and started again on the same port with the same data. */
export interface Restartable {
  readonly name: string;
  readonly endpoint: string;
  readonly running: boolean;
  /** Times it was started (the first start included). */
  readonly starts: number;
  /** Stops the process: SIGTERM; SIGKILL after `graceMs`. Resolves once it has exited. */
  stop(graceMs?: number): Promise<void>;
  /** Starts it again on the same port, with the same data; resolves once it answers. */
  start(): Promise<void>;
}

abstract class RestartableProcess implements Restartable {
  protected child: ManagedChild | undefined;
  starts = 0;
  constructor(
    readonly name: string,
    protected port: number,
    protected readonly directory: string,
  ) {}
  get endpoint(): string {
    return `http://127.0.0.1:${this.port}`;
  }
  get running(): boolean {
    return this.child !== undefined;
  }
  async stop(graceMs = 2_000): Promise<void> {
    const child = this.child;
    this.child = undefined;
    await child?.stop(graceMs);
  }
  async start(): Promise<void> {
    if (this.child) return;
    let lastError: unknown;
    // The port was ours a moment ago; if another process took it meanwhile, say so (after a few tries).
    for (let attempt = 0; attempt < 5; attempt++) {
      try {
        this.child = await this.spawn();
        this.starts++;
        return;
      } catch (error) {
        lastError = error;
        await delay(200 * (attempt + 1));
      }
    }
    throw new Error(`${this.name} could not be started again on port ${this.port}: ${(lastError as Error).message}`);
  }
  protected abstract spawn(): Promise<ManagedChild>;
}

class S3rverProcess extends RestartableProcess {
  constructor(
    port: number,
    directory: string,
    private readonly raw: boolean,
  ) {
    super('s3rver', port, directory);
  }
  protected async spawn(): Promise<ManagedChild> {
    // The testkit's s3rver, on this port with this directory, stopped hard; without the long-segment patch,
    // and with `--raw` (no patch at all) for stock s3rver.
    const args = [
      '--openssl-legacy-provider',
      childScript('s3rver-server.mjs'),
      this.directory,
      '--port',
      String(this.port),
      '--hard-stop',
      '--no-long-segments',
      ...(this.raw ? ['--raw'] : []),
    ];
    const child = startChild('s3rver', process.execPath, args);
    try {
      await waitForReady(child, READY_TIMEOUT_MS);
      return child;
    } catch (error) {
      await child.stop();
      throw error;
    }
  }
}

class DynamoProcess extends RestartableProcess {
  constructor(
    port: number,
    directory: string,
    readonly kind: 'dynamodb-local' | 'dynalite',
  ) {
    super(kind === 'dynalite' ? 'dynalite' : 'DynamoDB Local', port, directory);
  }
  protected async spawn(): Promise<ManagedChild> {
    let child: ManagedChild;
    if (this.kind === 'dynalite') {
      child = startChild('dynalite', process.execPath, [
        childScript('dynalite-server.mjs'),
        '--path',
        this.directory,
        '--port',
        String(this.port),
        '--hard-stop',
      ]);
      try {
        await waitForReady(child, READY_TIMEOUT_MS);
      } catch (error) {
        await child.stop();
        throw error;
      }
    } else {
      const lib = dynamoDbLocalDirectory();
      child = startChild(
        'DynamoDB Local',
        process.execPath,
        [
          childScript('guard.mjs'),
          'java',
          // Start-up flags only: a restart is mostly JVM start-up, and these halve it.
          '-XX:TieredStopAtLevel=1',
          '-XX:+UseSerialGC',
          `-Djava.library.path=${join(lib, 'DynamoDBLocal_lib')}`,
          '-jar',
          join(lib, 'DynamoDBLocal.jar'),
          '-dbPath',
          this.directory,
          '-sharedDb',
          '-disableTelemetry',
          '-port',
          String(this.port),
        ],
        { ...process.env, DDB_LOCAL_TELEMETRY: '0' },
      );
    }
    try {
      await untilAnswering(this.endpoint, child, READY_TIMEOUT_MS);
      return child;
    } catch (error) {
      await child.stop();
      throw error;
    }
  }
}

/** The two emulators and their folder. */
export interface Emulators {
  readonly dynamo: Restartable & { readonly kind: 'dynamodb-local' | 'dynalite' };
  readonly s3: Restartable;
  /** Environment for the AWS SDK (this process and CLI children): endpoints, region, fake credentials. */
  env(): Record<string, string>;
  close(): Promise<void>;
}

/** Starts both emulators (in parallel) under a fresh temporary folder. */
export async function startEmulators(
  options: { dynamo?: 'auto' | 'dynamodb-local' | 'dynalite'; rawS3rver?: boolean } = {},
): Promise<Emulators> {
  const base = existsSync('/dev/shm') ? '/dev/shm' : tmpdir();
  const root = mkdtempSync(join(base, 'catalog-sync-chaos-'));
  const remove = (): void => rmSync(root, { recursive: true, force: true });
  process.once('exit', remove);
  const wanted = options.dynamo ?? 'auto';
  const kind = wanted === 'auto' ? (javaWorks() ? 'dynamodb-local' : 'dynalite') : wanted;
  mkdirSync(join(root, 'dynamo'));
  mkdirSync(join(root, 's3'));
  const dynamo = new DynamoProcess(await freePort(), join(root, 'dynamo'), kind);
  const s3 = new S3rverProcess(await freePort(), join(root, 's3'), options.rawS3rver ?? false);
  const started = await Promise.allSettled([dynamo.start(), s3.start()]);
  const failed = started.find((result) => result.status === 'rejected');
  const close = async (): Promise<void> => {
    await Promise.allSettled([dynamo.stop(), s3.stop()]);
    remove();
    process.off('exit', remove);
  };
  if (failed) {
    await close();
    throw (failed as PromiseRejectedResult).reason as Error;
  }
  return {
    dynamo,
    s3,
    env: () => ({
      AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint,
      AWS_ENDPOINT_URL_S3: s3.endpoint,
      S3_FORCE_PATH_STYLE: 'true',
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'S3RVER',
      AWS_SECRET_ACCESS_KEY: 'S3RVER',
    }),
    close,
  };
}
