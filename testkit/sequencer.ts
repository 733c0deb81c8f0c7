/**
 * The order vitest starts test files in: the long files first, so that with several workers no long file
 * starts last and runs alone at the end (the run lasts as long as its longest tail); and the files of one project
 * together. vitest 4 keeps a worker process for another file only when the next file in its queue is of the same
 * project (and the project shares its workers, `isolate: false`); any other file ends the worker, and the next one
 * loads vitest, the engine, the AWS SDK or aws-cdk-lib again (2 to 7 CPU-s). Longest first across the projects, the
 * infra files came between integration files and nearly each one started a worker of its own.
 *
 * vitest's own order is longest first too, but only from the durations it cached on this machine
 * (node_modules/.vite): a fresh clone, as CI runs, has none and gets largest file first, which is not the
 * same (package.test.ts is short text and a long install). So the known slow files carry a weight here, from
 * measured durations; the others follow in vitest's order. A stale weight only costs a worse order.
 */
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Measured seconds per file on the 2-core machine (three workers; 2026-11-27, a whole `npm test` after the test budget
 * round: the CLI tests' smaller catalog, the run's temporary files in memory, the Lambda-face files sharing their
 * workers; load average about 7 from other work: the duration vitest prints for each file), for every file that takes a
 * second or more (a shorter one weighs 0, as an unknown one). Update when a file becomes much slower or faster, or is added.
 */
export const KNOWN_SECONDS: Readonly<Record<string, number>> = {
  'test/integration/cli/cli-new-user.test.ts': 25,
  // Its npm pack + install (beforeAll) waits on npm and the registry more than it computes: started early.
  'test/integration/package.test.ts': 23,
  'test/integration/cli/cli-id-filter.test.ts': 18,
  'test/integration/sync.test.ts': 17,
  'test/infra/synth.test.ts': 16,
  'test/integration/view/view.test.ts': 16,
  'test/integration/cli/cli-backfill.test.ts': 15,
  'test/integration/cli/cli-verify.test.ts': 15,
  'test/integration/quarantine.test.ts': 15,
  'test/integration/cli/cli-local-run.test.ts': 15,
  'test/integration/consumer/consumer-kill.test.ts': 13,
  'test/integration/cli/cli-aws.test.ts': 13,
  'test/integration/view/view-quarantine.test.ts': 12,
  'test/integration/s3-put/s3-put-aborts.test.ts': 11,
  'test/integration/cli/cli-backfill-stops.test.ts': 11,
  'test/integration/backfill/backfill-handlers.test.ts': 11,
  'test/integration/cli/cli-local-status.test.ts': 10,
  'test/integration/backfill/backfill-definition-run.test.ts': 10,
  'test/integration/view/view-rebuild-definition-run.test.ts': 9,
  'test/integration/cli/cli-network.test.ts': 9,
  'test/integration/demo.test.ts': 9,
  'test/integration/view/view-kill.test.ts': 9,
  'test/integration/consumer/consumer.test.ts': 9,
  'test/integration/cli/cli-backfill-one-plan.test.ts': 9,
  'test/integration/cli/cli-consumers.test.ts': 9,
  'test/integration/local-file-names.test.ts': 8,
  'test/integration/backfill/backfill-rules.test.ts': 8,
  'test/integration/consumer/consumer-named.test.ts': 8,
  'test/infra/view-rebuild.test.ts': 7,
  'test/infra/view.test.ts': 7,
  'test/integration/view/view-fixtures.test.ts': 7,
  'test/integration/cli/cli-backfill-aws.test.ts': 7,
  'test/integration/cli/cli-changes.test.ts': 7,
  'test/integration/cli/cli-local-follow.test.ts': 7,
  'test/integration/watermark-catch-up.test.ts': 7,
  'test/unit/house.test.ts': 6,
  'test/integration/backfill/backfill.test.ts': 6,
  'test/unit/http-decode.test.ts': 6,
  'test/integration/bad-documents.test.ts': 6,
  'test/infra/backfill.test.ts': 6,
  'test/integration/cli/cli-local-dates.test.ts': 6,
  'test/integration/cli/cli-local-usage.test.ts': 6,
  'test/integration/leaf-memory.test.ts': 5,
  'test/integration/s3-put/s3-put-faults.test.ts': 5,
  'test/integration/consumer/consumer-handover.test.ts': 5,
  'test/integration/view/view-property.test.ts': 5,
  'test/integration/iam-grants.test.ts': 5,
  'test/integration/cli/cli-backfill-kill.test.ts': 5,
  'test/integration/s3-put/s3-put-retries.test.ts': 4,
  'test/integration/cli/cli-first-hour.test.ts': 4,
  'test/integration/emulators.test.ts': 4,
  'test/integration/backfill/backfill-lease.test.ts': 4,
  'test/integration/manifests-as-completed.test.ts': 4,
  'test/unit/fast-path.test.ts': 4,
  'test/integration/credentials.test.ts': 4,
  'test/integration/s3-put/s3-put-vs-sdk.test.ts': 4,
  'test/infra/dashboard.test.ts': 4,
  'test/integration/own-write-retry.test.ts': 3,
  'test/integration/feed/feed.test.ts': 3,
  'test/infra/apps.test.ts': 3,
  'test/integration/http-client.test.ts': 3,
  'test/integration/view/view-backfill.test.ts': 3,
  'test/infra/alarm-routing.test.ts': 3,
  'test/integration/sync-stale-and-faults.test.ts': 2,
  'test/integration/acknowledged-before-cursor.test.ts': 2,
  'test/integration/stored-leaves-property.test.ts': 2,
  'test/integration/hostile-source.test.ts': 2,
  'test/integration/cli/cli-code-cache.test.ts': 2,
  'test/integration/cli/cli-no-sdk.test.ts': 2,
  'test/integration/feed/feed-cli.test.ts': 2,
  'test/integration/replica-serving.test.ts': 2,
  'test/integration/stored-leaves.test.ts': 2,
  'test/infra/stack.test.ts': 2,
  'test/integration/backfill/backfill-slowdown.test.ts': 2,
  'test/integration/view/view-rebuild-cli.test.ts': 2,
  'test/integration/cli/cli-long-ids.test.ts': 2,
  'test/integration/view/view-race.test.ts': 2,
  'test/integration/proxy-tls.test.ts': 2,
  'test/integration/view/view-rebuild-engine.test.ts': 2,
  'test/integration/feed/feed-packages.test.ts': 2,
  'test/integration/view/view-refilter.test.ts': 1,
  'test/integration/proxy-aws.test.ts': 1,
  'test/infra/source-secret.test.ts': 1,
  'test/integration/cli/cli-mirror-place.test.ts': 1,
  'test/integration/stores.test.ts': 1,
  'test/integration/feed/feed-verify.test.ts': 1,
  'test/integration/s3-put/s3-put.test.ts': 1,
  'test/infra/backfill-construct.test.ts': 1,
};

/**
 * `files` grouped by project (`projectOf`; without it, one group), the group holding the longest known file first;
 * in each group the known long files first, longest first (by {@link KNOWN_SECONDS}), then the others in the order
 * given. `pathOf` gives a file's path from the repository root, with forward slashes.
 */
export function longestFirst<T>(
  files: readonly T[],
  pathOf: (file: T) => string,
  projectOf: (file: T) => string = () => '',
): T[] {
  const weight = (file: T): number => KNOWN_SECONDS[pathOf(file)] ?? 0;
  const groups = new Map<string, T[]>();
  for (const file of files) {
    const project = projectOf(file);
    const group = groups.get(project);
    if (group === undefined) groups.set(project, [file]);
    else group.push(file);
  }
  const heaviest = (group: readonly T[]): number => Math.max(...group.map(weight));
  // Array.prototype.sort is stable: files of equal weight (the unknown ones) keep their order, and groups too.
  return [...groups.values()]
    .sort((a, b) => heaviest(b) - heaviest(a))
    .flatMap((group) => group.sort((a, b) => weight(b) - weight(a)));
}

/** vitest's sequencer, with {@link longestFirst} applied to its order: one project after another. */
export default class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    return longestFirst(
      await super.sort(files),
      (file) => relative(root, file.moduleId).split('\\').join('/'),
      (file) => file.project.name,
    );
  }
}
