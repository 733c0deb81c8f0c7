import { defineConfig } from 'vitest/config';
import LongestFirstSequencer from './testkit/sequencer.js';

// The AWS SDK warns, once per process that loads it, that its 2027 releases need Node 22: under Node 20 that was
// 200 of npm test's 545 lines. Set here, the variable reaches the workers, the global setup and every CLI child.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

export default defineConfig({
  test: {
    testTimeout: 60_000,
    // A clean run prints each file, the summary and what failed: what a passing test wrote to the console is
    // dropped (a failing test's is shown), and only tests over 5 s are listed as slow (bench/ measures speed).
    silent: 'passed-only',
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
          // CDK synthesis needs no emulators. Its files stay isolated: test/infra/synth-kit.ts makes one temporary
          // folder per loading of the module and removes it after that file, so a shared module would lose it.
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          // ONE DynamoDB emulator and ONE s3rver for the whole run (testkit/global-setup.ts).
          globalSetup: ['testkit/global-setup.ts'],
        },
      },
    ],
  },
});
