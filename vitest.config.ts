import { defineConfig } from 'vitest/config';
import LongestFirstSequencer from './testkit/sequencer.js';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['testkit/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // vitest's default is one worker per core less one: a single worker on the 2-core machine, where most of a
    // test file's time is spent waiting (on CLI children, the emulators, replica latency, npm), not computing.
    // Three files at once keep both cores busy; more only adds contention. Each file has its own tables,
    // buckets, replicas and temporary folders, so files do not share state.
    maxWorkers: 3,
    // The long files first, so none starts last and runs alone (testkit/sequencer.ts).
    sequence: { sequencer: LongestFirstSequencer },
  },
});
