import { rmSync } from 'node:fs';
import { defineConfig } from 'vitest/config';
import LongestFirstSequencer from './testkit/sequencer.js';
import { LAMBDA_FACE_FILES } from './testkit/lambda-face-files.js';
import { memoryTempFolder } from './testkit/memory-temp.js';

// The AWS SDK warns, once per process that loads it, that its 2027 releases need Node 22: under Node 20 that was
// 200 of npm test's 545 lines. Set here, the variable reaches the workers, the global setup and every CLI child.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
// The run's temporary files (the tests' data folders, the CLI's code cache, the CDK apps) in memory where the machine
// has a memory folder that fits (testkit/memory-temp.ts): the engine syncs every file it writes, a no-op on tmpfs,
// about 10% of the integration tests' CPU on the disk-backed /tmp. Set in TMPDIR, it reaches the workers and every
// child; the folder goes when the run ends.
if (process.env.CATALOG_SYNC_TEST_TMPDIR === undefined) {
  const folder = memoryTempFolder();
  if (folder !== undefined) {
    process.env.CATALOG_SYNC_TEST_TMPDIR = folder;
    process.env.TMPDIR = folder;
    process.once('exit', () => rmSync(folder, { recursive: true, force: true }));
  }
}

export default defineConfig({
  test: {
    testTimeout: 60_000,
    // A clean run prints each file, the summary and what failed: what a passing test wrote to the console is
    // dropped (a failing test's is shown), and only tests over 5 s are listed as slow (bench/ measures speed).
    silent: 'passed-only',
    // What Powertools writes to stdout and stderr (its own Console, which vitest does not intercept) goes through
    // the console too, so it is shown with a failing test only; and each file's changes to process.env are undone
    // after it, as its worker goes on to the next file.
    setupFiles: ['testkit/quiet-stdout.ts', 'testkit/env-per-file.ts', 'testkit/synth-folder-cleanup.ts'],
    slowTestThreshold: 5_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // vitest's default is one worker per core less one: a single worker on the 2-core machine, where most of a
    // test file's time is spent waiting (on CLI children, the emulators, replica latency, npm), not computing.
    // Three files at once keep both cores busy; more only adds contention. Each file has its own tables,
    // buckets, replicas and temporary folders, so files do not share state.
    maxWorkers: 3,
    // The long files first, so none starts last and runs alone (testkit/sequencer.ts).
    sequence: { sequencer: LongestFirstSequencer },
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          // Pure code, no emulators: the files share their worker processes instead of each loading vitest,
          // zod and the engine again (most of a unit file's time). Mocks and stubbed variables are undone after
          // each test so that no file sees another's.
          isolate: false,
          restoreMocks: true,
          unstubEnvs: true,
          unstubGlobals: true,
        },
      },
      {
        extends: true,
        test: {
          name: 'infra',
          include: ['test/infra/**/*.test.ts'],
          // CDK synthesis needs no emulators. The files share their worker processes: aws-cdk-lib and cdk-nag are
          // loaded once per worker, not once per file (a third of the project's CPU). Each file builds its own apps;
          // testkit/synth-folder-cleanup.ts removes a file's synthesis folder after it.
          isolate: false,
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          exclude: [...LAMBDA_FACE_FILES],
          // ONE DynamoDB emulator and ONE s3rver for the whole run (testkit/global-setup.ts), shared with the project
          // below.
          globalSetup: ['testkit/global-setup.ts'],
          // Each file makes its own tables, buckets, replicas, folders and clients (and testkit/env-per-file.ts
          // undoes what it set in process.env): the files share their worker processes, so that the engine, the SDK and the testkit are
          // loaded once per worker instead of once per file (about 100 CPU-s of a run on 2 cores, measured).
          isolate: false,
        },
      },
      {
        extends: true,
        test: {
          name: 'integration-lambda',
          include: [...LAMBDA_FACE_FILES],
          globalSetup: ['testkit/global-setup.ts'],
          // The files share their worker processes, each loading the faces afresh (testkit/fresh-modules.ts).
          isolate: false,
          setupFiles: ['testkit/fresh-modules.ts'],
        },
      },
    ],
  },
});
