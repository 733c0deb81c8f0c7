/**
 * `catalog-sync changes --follow --consumer NAME --json --checkpoint-every 1`, killed with SIGKILL at random points
 * while the follower runs (each run within a few lines: at the defaults a run killed before its first checkpoint
 * would move nothing, and the test would never end), then started again, on S3 + DynamoDB and on the local folder: every run delivers a contiguous, in-order
 * run of commits starting right after the cursor it found (so redelivery is only of commits after the last
 * checkpoint), the cursor never covers a commit whose line was not written, and together the runs deliver every
 * commit to the head.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consumerKey } from '../../../lambda/consumer/consumer-cursors.js';
import { readWatermark } from '../../../lambda/consumer/mirror.js';
import { commitKeyOf } from '../../../lambda/contract/keys.js';
import { openLocalStores } from '../../../lambda/stores/local-store.js';
import type { CursorStore } from '../../../lambda/stores/types.js';
import { runSlice } from '../../../lambda/sync/index.js';
import { openTarget, settingsOf, withDeps, type BackfillTarget } from '../../../testkit/backfill-harness.js';
import { generateCatalog, type GeneratedCatalog } from '../../../testkit/catalog-generator.js';
import { CatalogReplica } from '../../../testkit/catalog-replica.js';
import { startCli, waitFor } from '../../../testkit/cli-process.js';
import { mulberry32 } from '../../../testkit/prng.js';
import { testServices } from '../../../testkit/env.js';

let catalog: GeneratedCatalog;
let replica: CatalogReplica;
let all: string[];
let root: string;

beforeAll(async () => {
  catalog = generateCatalog({ commits: 80, seed: 909, leavesPerCommit: [1, 4], sameMillisecondPairs: 3 });
  replica = await CatalogReplica.start({ catalog, pageSize: 10, latencyMs: 5 });
  all = catalog.commits.map((commit) => commitKeyOf(commit.timestamp));
  root = await mkdtemp(join(tmpdir(), 'catalog-sync-consumer-kill-'));
});
afterAll(async () => {
  await replica.stop();
  await rm(root, { recursive: true, force: true });
});

/** Where the follower writes and how the CLI reaches it. */
interface Setup {
  readonly target: BackfillTarget;
  readonly flags: string[];
  readonly env: Record<string, string>;
  readonly cursors: CursorStore;
}

const SETUPS: Record<string, () => Promise<Setup>> = {
  'S3 + DynamoDB': async () => {
    const target = await openTarget('S3 + DynamoDB');
    const table = (target.stores.cursors as unknown as { table: string }).table;
    const bucket = (target.stores.snapshots as unknown as { bucket: string }).bucket;
    const { dynamoEndpoint, s3Endpoint } = testServices();
    const env = {
      AWS_ENDPOINT_URL_DYNAMODB: dynamoEndpoint,
      AWS_ENDPOINT_URL_S3: s3Endpoint,
      S3_FORCE_PATH_STYLE: 'true',
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'S3RVER',
      AWS_SECRET_ACCESS_KEY: 'S3RVER',
    };
    return { target, flags: ['--cursor-table', table, '--bucket', bucket], env, cursors: target.stores.cursors };
  },
  'local folder': async () => {
    const target = await openTarget('local folder');
    const dir = (target.stores.cursors as unknown as { root: string }).root;
    return { target, flags: ['--data-dir', dir], env: {}, cursors: openLocalStores(dir).cursors };
  },
};

describe.each(Object.keys(SETUPS))('changes --consumer killed with SIGKILL: %s', (kind) => {
  it('redelivers only after the last checkpoint, in order, and delivers everything', async () => {
    const { target, flags, env, cursors } = await SETUPS[kind]!();
    const settings = settingsOf(replica.serviceIndexUrl, { MAX_COMMITS: '3' });
    let followerDone = false;
    const follower = (async () => {
      while (!(await withDeps(target, settings, (deps) => runSlice(settings, deps))).caughtUp);
      followerDone = true;
    })();
    const random = mulberry32(4242);
    const runs: { before: string | undefined; lines: string[]; after: string | undefined }[] = [];
    const mirror = { store: target.stores.snapshots, prefix: '', where: kind };
    const keyOf = async (): Promise<string | undefined> => {
      const state = await cursors.read(consumerKey(mirror, 'killed'));
      return state === undefined ? undefined : commitKeyOf(state.stored);
    };
    // The consumer starts once there is a mirror: on a bucket or folder with nothing in it yet, `changes` exits 2
    // ("no mirror here", as it must), which the first run under load could meet before the follower's first PUT.
    await waitFor(async () => (await readWatermark(mirror)) !== undefined, 'the first watermark');
    for (;;) {
      const before = await keyOf();
      if (followerDone && before === all.at(-1)) break;
      const killAfter = random.int(1, 12);
      const { child, done } = startCli(
        [
          'changes',
          ...flags,
          '--follow',
          '--poll-interval',
          '0.05',
          '--consumer',
          'killed',
          '--json',
          '--checkpoint-on-write',
          '--checkpoint-every',
          '1',
        ],
        env,
      );
      let seen = '';
      let sawHead = false;
      child.stdout!.on('data', (chunk: Buffer) => {
        seen += chunk.toString();
        if (seen.split('\n').length - 1 >= killAfter) child.kill('SIGKILL');
        else if (!sawHead && seen.includes(all.at(-1)!)) {
          // Caught up with the head: killed once it checkpointed it (a following consumer never exits by itself).
          sawHead = true;
          void waitFor(async () => (await keyOf()) === all.at(-1), 'the head checkpointed').finally(() =>
            child.kill('SIGKILL'),
          );
        }
      });
      const result = await done;
      // A following consumer never exits by itself: if it did, its stderr says why.
      expect(result.signal, `exit ${result.code}: ${result.stderr}`).toBe('SIGKILL');
      const complete = result.stdout.slice(0, result.stdout.lastIndexOf('\n') + 1);
      const lines = complete
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => (JSON.parse(line) as { commitKey: string }).commitKey);
      const after = await keyOf();
      const watermark = await readWatermark(mirror);
      // Progress never past the watermark.
      if (after !== undefined) expect(after <= watermark!.commitKey).toBe(true);
      runs.push({ before, lines, after });
    }
    await follower;
    expect(runs.length).toBeGreaterThan(4);
    let delivered = new Set<string>();
    for (const { before, lines, after } of runs) {
      const from = before === undefined ? 0 : all.indexOf(before) + 1;
      // Contiguous and in order, from right after the cursor it found.
      expect(lines).toEqual(all.slice(from, from + lines.length));
      // The cursor after the kill covers only commits whose lines were written, and never moved back.
      const moved = after === undefined ? -1 : all.indexOf(after);
      expect(moved).toBeGreaterThanOrEqual(from - 1);
      expect(moved).toBeLessThanOrEqual(from + lines.length - 1);
      delivered = new Set([...delivered, ...lines]);
    }
    expect([...delivered]).toEqual(all);
    target.close();
  });
});
