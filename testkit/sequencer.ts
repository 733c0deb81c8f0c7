/**
 * The order vitest starts test files in: the long files first, so that with several workers no long file
 * starts last and runs alone at the end (the run lasts as long as its longest tail).
 *
 * vitest's own order is longest first too, but only from the durations it cached on this machine
 * (node_modules/.vite): a fresh clone, as CI runs, has none and gets largest file first, which is not the
 * same (package.test.ts is short text and a long install). So the known slow files carry a weight here, from
 * measured durations; the others follow in vitest's order. A stale weight only costs a worse order.
 */
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Measured seconds per file on the 2-core machine (three workers; 2026-11-26, after the integration and infra
 * files came to share their workers' modules), for the files over about 5 s: vitest's JSON reporter, endTime -
 * startTime. Update when a file becomes much slower or faster.
 */
export const KNOWN_SECONDS: Readonly<Record<string, number>> = {
  'test/integration/cli/cli-backfill.test.ts': 38,
  'test/integration/sync.test.ts': 37,
  'test/integration/cli/cli-aws.test.ts': 29,
  'test/integration/view/view.test.ts': 29,
  'test/integration/cli/cli-id-filter.test.ts': 25,
  'test/integration/cli/cli-local-run.test.ts': 24,
  'test/integration/backfill/backfill.test.ts': 23,
  'test/integration/cli/cli-new-user.test.ts': 22,
  'test/integration/consumer/consumer-kill.test.ts': 22,
  'test/integration/quarantine.test.ts': 17,
  'test/integration/cli/cli-verify.test.ts': 17,
  // Its npm pack + install (beforeAll) waits on npm and the registry more than it computes: started early.
  'test/integration/package.test.ts': 16,
  'test/integration/consumer/consumer.test.ts': 16,
  'test/infra/synth.test.ts': 15,
  'test/integration/backfill/backfill-definition-run.test.ts': 15,
  'test/integration/backfill/backfill-rules.test.ts': 14,
  'test/integration/bad-documents.test.ts': 14,
  'test/integration/backfill/backfill-handlers.test.ts': 13,
  'test/integration/view/view-kill.test.ts': 13,
  'test/integration/s3-put/s3-put-aborts.test.ts': 12,
  'test/integration/view/view-property.test.ts': 11,
  'test/integration/cli/cli-backfill-aws.test.ts': 10,
  'test/infra/alarm-routing.test.ts': 10,
  'test/integration/cli/cli-local-status.test.ts': 10,
  'test/integration/cli/cli-local-dates.test.ts': 9,
  'test/integration/cli/cli-local-follow.test.ts': 9,
  'test/integration/cli/cli-backfill-one-plan.test.ts': 9,
  'test/integration/cli/cli-backfill-kill.test.ts': 9,
  'test/integration/cli/cli-network.test.ts': 8,
  'test/infra/dashboard.test.ts': 8,
  'test/integration/cli/cli-changes.test.ts': 8,
  'test/infra/source-secret.test.ts': 8,
  'test/unit/fast-path.test.ts': 7,
  'test/integration/s3-put/s3-put-retries.test.ts': 7,
  'test/integration/demo.test.ts': 6,
};

/**
 * `files` with the known long ones first, longest first (by {@link KNOWN_SECONDS}); the others after them, in
 * the order given. `pathOf` gives a file's path from the repository root, with forward slashes.
 */
export function longestFirst<T>(files: readonly T[], pathOf: (file: T) => string): T[] {
  const weight = (file: T): number => KNOWN_SECONDS[pathOf(file)] ?? 0;
  // Array.prototype.sort is stable: files of equal weight (the unknown ones) keep their order.
  return [...files].sort((a, b) => weight(b) - weight(a));
}

/** vitest's sequencer, with {@link longestFirst} applied to its order. */
export default class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    return longestFirst(await super.sort(files), (file) => relative(root, file.moduleId).split('\\').join('/'));
  }
}
