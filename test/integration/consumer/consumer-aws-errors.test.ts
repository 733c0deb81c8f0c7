/**
 * A consumer's errors on AWS that say what to do (issue 29, part 5): a listing S3 refuses names the bucket, the prefix
 * and where it started (before: S3's bare "internal error"), and a missing region is a settings error, exit 2.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readCommits } from '../../../lambda/consumer/index.js';
import { S3SnapshotStore } from '../../../lambda/stores/s3-store.js';
import { runCli } from '../../../testkit/cli-process.js';
import { clientsFor } from '../../../testkit/emulator-clients.js';
import { generateCatalog } from '../../../testkit/catalog-generator.js';
import { S3FaultFront } from '../../../testkit/s3-fault-front.js';
import { SyncHarness } from '../../../testkit/sync-harness.js';
import { writeManifests } from './consumer-kit.js';

let harness: SyncHarness;
let front: S3FaultFront;

beforeAll(async () => {
  harness = await SyncHarness.create();
  front = await S3FaultFront.start(harness.services.s3Endpoint);
  await writeManifests(harness.snapshots, 'nuget/', generateCatalog({ commits: 3, seed: 77 }).commits);
});
afterAll(async () => {
  await front.stop();
  harness.clients.dynamo.destroy();
  harness.clients.s3.destroy();
});

describe('consumer errors on AWS', () => {
  it("a listing S3 refuses names the bucket, the prefix listed and S3's answer", async () => {
    front.fault({
      match: (seen) => seen.method === 'GET' && seen.url.includes('list-type=2'),
      fault: {
        kind: 'answer',
        status: 500,
        code: 'InternalError',
        message: 'We encountered an internal error. Please try again.',
      },
    });
    const client = clientsFor({ dynamoEndpoint: harness.services.dynamoEndpoint, s3Endpoint: front.url }).s3;
    try {
      const mirror = {
        store: new S3SnapshotStore(harness.bucket, client),
        prefix: 'nuget/',
        where: `s3://${harness.bucket}/nuget/`,
      };
      const read = async (): Promise<void> => {
        for await (const _commit of readCommits(mirror));
      };
      await expect(read()).rejects.toMatchObject({
        code: 'CS_ERR_S3_LIST',
        message: expect.stringMatching(
          new RegExp(
            `^S3 listing of s3://${harness.bucket}/nuget/commits/ failed: InternalError \\(HTTP 500\\): We encountered an internal error`,
          ),
        ),
      });
    } finally {
      client.destroy();
    }
  });

  it('a missing region (unset, or set empty) is a settings error naming AWS_REGION: exit 2, as the README says', async () => {
    const { AWS_REGION: _region, ...rest } = harness.env();
    const unset = { ...rest, AWS_CONFIG_FILE: '/nonexistent', AWS_SHARED_CREDENTIALS_FILE: '/nonexistent' };
    expect(process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION).toBeUndefined();
    for (const env of [unset, { ...unset, AWS_REGION: '' }]) {
      const result = await runCli(
        ['changes', '--bucket', harness.bucket, '--cursor-table', harness.table, '--prefix', 'nuget/'],
        env,
      );
      expect(result.code).toBe(2);
      expect(result.stderr).toContain('AWS_REGION: is not set');
    }
  });
});
