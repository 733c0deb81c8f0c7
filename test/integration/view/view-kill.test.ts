/**
 * `catalog-sync view --follow` killed with SIGKILL (issue 23), on S3 + DynamoDB Local and on the folder: the mirror
 * grows chunk by chunk; each time the view process is killed at a random point (as soon as one index of the chunk
 * changed, or once its cursor reached the chunk's end) and started again. After every kill each stored index is a
 * whole document no newer than the watermark; at the end the view is exactly the catalog's.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { consumerKey, readWatermark } from '../../../lambda/consumer/index.js';
import { commitKeyOf } from '../../../lambda/contract/keys.js';
import { formatTimestamp, parseTimestamp } from '../../../lambda/contract/time.js';
import { packageIndexKey, parseIndex } from '../../../lambda/view/index.js';
import { generateCatalog } from '../../../testkit/catalog-generator.js';
import { runCli, startCli, waitFor } from '../../../testkit/cli-process.js';
import { mulberry32 } from '../../../testkit/prng.js';
import { openViewTarget, VIEW_KINDS, type ViewTestTarget } from '../../../testkit/view-harness.js';
import { decorate, expectedView, writeMirror } from '../../../testkit/view-mirror.js';

describe.each(VIEW_KINDS)('view --follow under SIGKILL: %s', (kind) => {
  const targets: ViewTestTarget[] = [];
  afterAll(() => targets.forEach((target) => target.close()));

  it("every index whole and never past the watermark after each kill; the catalog's view at the end", async () => {
    const target = await openViewTarget(kind);
    targets.push(target);
    const catalog = generateCatalog({
      commits: 48,
      seed: 4848,
      leavesPerCommit: [1, 4],
      deleteRatio: 0.25,
      semver2Ratio: 0.3,
    });
    const decorations = decorate(catalog.commits, mulberry32(48), 0.3);
    const random = mulberry32(kind.length);
    const cursor = async (): Promise<string | undefined> =>
      (await target.cursors.read(consumerKey(target.mirror, 'view-latest')))?.stored;
    for (let from = 0; from < catalog.commits.length; from += 8) {
      const chunk = catalog.commits.slice(from, from + 8);
      await writeMirror(target.store, '', chunk);
      const watched = packageIndexKey('', chunk[0]!.leaves[0]!.id);
      const before = (await target.documents.read(watched))?.tag;
      const end = formatTimestamp(parseTimestamp(chunk[chunk.length - 1]!.timestamp));
      const { child, done } = startCli(
        ['view', '--follow', '--poll-interval', '0.2', ...target.cli.args],
        target.cli.env,
      );
      // s3rver replaces an object's file and then its metadata: a GET between the two, while the view rewrites that
      // index, ends short ("aborted"). That can only happen while the index is being changed, which is what we wait for.
      const tagNow = (): Promise<string | undefined> =>
        target.documents.read(watched).then(
          (stored) => stored?.tag,
          (error: Error) => (error.message === 'aborted' ? 'being rewritten' : Promise.reject(error)),
        );
      if (random.chance(0.5))
        await waitFor(async () => (await tagNow()) !== before, 'an index of the chunk to change', 2_000, 5);
      else await waitFor(async () => (await cursor()) === end, 'the cursor to reach the chunk', 2_000, 20);
      child.kill('SIGKILL');
      expect((await done).signal).toBe('SIGKILL');
      const watermark = (await readWatermark(target.mirror))!;
      for await (const key of target.store.listKeys('packages/')) {
        const index = parseIndex((await target.store.getBytes(key))!, key);
        expect(index.commitKey <= watermark.commitKey, key).toBe(true);
      }
    }
    const last = await runCli(['view', '--json', ...target.cli.args], target.cli.env);
    expect(last.code, last.stderr).toBe(0);
    expect(await cursor()).toBe(formatTimestamp(parseTimestamp(catalog.commits.at(-1)!.timestamp)));
    const expected = expectedView('', catalog.commits, decorations);
    let stored = 0;
    for await (const key of target.store.listKeys('packages/')) {
      stored++;
      const id = [...expected.values()].find((index) => packageIndexKey('', (index as { id: string }).id) === key);
      expect(JSON.parse((await target.store.getBytes(key))!.toString('utf8')), key).toEqual(id);
    }
    expect(stored).toBe(expected.size);
    expect(commitKeyOf(catalog.commits.at(-1)!.timestamp)).toBe((await readWatermark(target.mirror))!.commitKey);
  }, 120_000);
});
