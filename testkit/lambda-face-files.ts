/** Which integration test files load a Lambda face, and so need a module graph of their own. */

/**
 * The integration files that load a Lambda face (a wing's lambda.ts or lambda/: the follower's, a consumer's, the
 * view's, the backfill's handlers; and runtime/source-secret.ts, the container's secret cache): a face reads its environment once, when loaded (Powertools' service name and namespace,
 * the container's warm clients), as Lambda loads it once per container. Each of these files loads our modules
 * afresh, as a fresh container would (vitest.config.ts: project `integration-lambda`, whose files share their worker
 * processes but empty vitest's module registry before each file: testkit/fresh-modules.ts); the others share their
 * workers' modules. test/unit/lambda-face-files.test.ts checks that the list is whole.
 */
export const LAMBDA_FACE_FILES = [
  'test/integration/backfill/backfill-definition-run.test.ts',
  'test/integration/backfill/backfill-handlers.test.ts',
  'test/integration/backfill/backfill-metrics.test.ts',
  'test/integration/backfill/backfill-slowdown.test.ts',
  'test/integration/backfill/backfill-start-execution.test.ts',
  'test/integration/cli/cli-aws.test.ts',
  'test/integration/cli/cli-id-filter.test.ts',
  'test/integration/consumer/consumer-lambda.test.ts',
  'test/integration/credentials.test.ts',
  'test/integration/feed/feed-lambda.test.ts',
  'test/integration/iam-grants.test.ts',
  'test/integration/proxy-aws.test.ts',
  'test/integration/s3-put/s3-put-retries.test.ts',
  'test/integration/source-secret.test.ts',
  'test/integration/sync.test.ts',
  'test/integration/view/view-lambda.test.ts',
  'test/integration/view/view-rebuild-engine.test.ts',
  'test/integration/view/view-rebuild-definition-run.test.ts',
] as const;

/**
 * True when a test file's source imports a Lambda face module (statically or with `await import`), directly: the
 * files that must be listed in {@link LAMBDA_FACE_FILES}.
 */
export function importsLambdaFace(source: string): boolean {
  return /['"](?:\.\.\/)+lambda\/(?:(?:sync|consumer|view|feed)\/lambda|(?:backfill|view)\/lambda\/[\w-]+|runtime\/source-secret)\.js['"]/.test(
    source,
  );
}
