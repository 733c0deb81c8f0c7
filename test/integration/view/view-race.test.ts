/**
 * The stale-writer race of the latest view (issue 23), on S3 (s3rver honouring `If-Match`/`If-None-Match`, as S3
 * does) and on the folder: writer A reads a package's index at commit 1 and stalls before its write of commit 2;
 * writer B meanwhile applies commits 2 and 3; then A's write goes out. With the guard A's write is refused and the
 * index stays at commit 3. The control runs the same interleaving with a write that ignores the tag it read (what a
 * plain PUT does): the older state comes back, so the test does reproduce the race.
 */
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, describe, expect, it } from 'vitest';
import { readCommits, type MirrorCommit } from '../../../lambda/consumer/index.js';
import { commitKeyOf } from '../../../lambda/contract/keys.js';
import {
  applyBatchToView,
  applyToView,
  keepView,
  packageIndexKey,
  type ViewDocuments,
} from '../../../lambda/view/index.js';
import { generateCatalog } from '../../../testkit/catalog-generator.js';
import { mulberry32 } from '../../../testkit/prng.js';
import type { GeneratedCommit } from '../../../testkit/generated-commit.js';
import { openViewTarget, VIEW_KINDS, type ViewTestTarget } from '../../../testkit/view-harness.js';
import { decorate, expectedView, writeMirror } from '../../../testkit/view-mirror.js';

const commits: GeneratedCommit[] = [
  {
    commitId: '00000000-0000-0000-0000-000000000001',
    timestamp: '2024-01-01T00:00:01.0000000Z',
    leaves: [{ id: 'Race.Pkg', version: '1.0.0', type: 'PackageDetails', path: '/1.json', listed: true }],
  },
  {
    commitId: '00000000-0000-0000-0000-000000000002',
    timestamp: '2024-01-01T00:00:02.0000000Z',
    leaves: [{ id: 'Race.Pkg', version: '2.0.0', type: 'PackageDetails', path: '/2.json', listed: true }],
  },
  {
    commitId: '00000000-0000-0000-0000-000000000003',
    timestamp: '2024-01-01T00:00:03.0000000Z',
    leaves: [{ id: 'race.pkg', version: '1.0.0', type: 'PackageDelete', path: '/3.json' }],
  },
];

/** A write that checks nothing: it reads the tag stored now and writes against that, as an unconditional PUT would. */
function unguarded(documents: ViewDocuments): ViewDocuments {
  return {
    where: documents.where,
    read: (key) => documents.read(key),
    writeIf: async (key, bytes) => documents.writeIf(key, bytes, (await documents.read(key))?.tag),
  };
}

describe.each(VIEW_KINDS)('latest view, the stale writer: %s', (kind) => {
  const targets: ViewTestTarget[] = [];
  afterAll(() => targets.forEach((target) => target.close()));

  async function race(guarded: boolean): Promise<{
    index: { commitKey: string; versions: { version: string; type: string }[] };
    outcome: { written: number; current: number };
  }> {
    const target = await openViewTarget(kind);
    targets.push(target);
    await writeMirror(target.store, '', commits);
    const delivered: MirrorCommit[] = [];
    for await (const commit of readCommits(target.mirror)) delivered.push(commit);
    const [c1, c2, c3] = delivered as [MirrorCommit, MirrorCommit, MirrorCommit];
    const documents = guarded ? target.documents : unguarded(target.documents);
    await applyToView({ documents, prefix: '' }, c1);
    let stalled!: () => void;
    const readDone = new Promise<void>((resolve) => (stalled = resolve));
    let resume!: () => void;
    const gate = new Promise<void>((resolve) => (resume = resolve));
    let held = false;
    const slow = applyToView(
      {
        documents,
        prefix: '',
        beforeWrite: async () => {
          if (held) return;
          held = true;
          stalled();
          await gate;
        },
      },
      c2,
    );
    await readDone;
    await applyToView({ documents, prefix: '' }, c2);
    await applyToView({ documents, prefix: '' }, c3);
    resume();
    const outcome = await slow;
    const stored = await target.documents.read(packageIndexKey('', 'Race.Pkg'));
    return { index: JSON.parse(stored!.bytes.toString('utf8')), outcome };
  }

  it('with the guard, the stale write is refused and the newest state stays', async () => {
    const { index, outcome } = await race(true);
    expect(outcome).toEqual({ written: 0, current: 1 });
    expect(index.versions.map((v) => [v.version, v.type])).toEqual([
      ['1.0.0', 'delete'],
      ['2.0.0', 'details'],
    ]);
    expect(index.commitKey).toBe(commitKeyOf(commits[2]!.timestamp));
  });

  it('a batch over an index another writer moved into its middle applies only the commits after it', async () => {
    const target = await openViewTarget(kind);
    targets.push(target);
    await writeMirror(target.store, '', commits);
    const delivered: MirrorCommit[] = [];
    for await (const commit of readCommits(target.mirror)) delivered.push(commit);
    const view = { documents: target.documents, prefix: '' };
    await applyToView(view, delivered[0]!);
    await applyToView(view, delivered[1]!);
    expect(await applyBatchToView(view, delivered)).toEqual({ written: 1, current: 0 });
    const key = packageIndexKey('', 'Race.Pkg');
    const once = (await target.documents.read(key))!.bytes;
    const index = JSON.parse(once.toString('utf8')) as {
      commitKey: string;
      versions: { version: string; type: string; commitKey: string }[];
    };
    expect(index.commitKey).toBe(commitKeyOf(commits[2]!.timestamp));
    expect(index.versions.map((v) => [v.version, v.type, v.commitKey])).toEqual([
      ['1.0.0', 'delete', commitKeyOf(commits[2]!.timestamp)],
      ['2.0.0', 'details', commitKeyOf(commits[1]!.timestamp)],
    ]);
    // The whole batch again (a crash before its checkpoint): no write, the same bytes.
    expect(await applyBatchToView(view, delivered)).toEqual({ written: 0, current: 1 });
    expect((await target.documents.read(key))!.bytes.equals(once)).toBe(true);
  });

  it("two view consumers of one name at once, in batches of different sizes: the catalog's view", async () => {
    const target = await openViewTarget(kind);
    targets.push(target);
    const catalog = generateCatalog({ commits: 40, seed: 4040, leavesPerCommit: [1, 4], deleteRatio: 0.25 });
    const decorations = decorate(catalog.commits, mulberry32(40), 0.3);
    await writeMirror(target.store, '', catalog.commits);
    const view = { documents: target.documents, prefix: '' };
    const options = { mirror: target.mirror, cursors: target.cursors };
    const results = await Promise.all([
      keepView(view, { ...options, batchSize: 3 }),
      keepView(view, { ...options, batchSize: 5 }),
    ]);
    expect(results.some((result) => result.stoppedBy === 'caught-up')).toBe(true);
    const expected = expectedView('', catalog.commits, decorations);
    for (const index of expected.values()) {
      const key = packageIndexKey('', (index as { id: string }).id);
      expect(JSON.parse((await target.documents.read(key))!.bytes.toString('utf8')), key).toEqual(index);
    }
  });

  it('control: without the guard the same interleaving puts the older state back', async () => {
    const { index, outcome } = await race(false);
    expect(outcome).toEqual({ written: 1, current: 0 });
    expect(index.versions.map((v) => [v.version, v.type])).toEqual([
      ['1.0.0', 'details'],
      ['2.0.0', 'details'],
    ]);
  });
});

describe('the test S3 (s3rver)', () => {
  it('s3rver refuses conditional PUTs as S3 does: If-None-Match: * on an existing key, If-Match with another ETag', async () => {
    const target = await openViewTarget('S3 + DynamoDB');
    try {
      const { harness } = target;
      const put = (extra: object): Promise<unknown> =>
        harness!.clients.s3.send(
          new PutObjectCommand({ Bucket: harness!.bucket, Key: 'k/index.json', Body: 'x', ...extra }),
        );
      const status = (error: unknown): number | undefined =>
        (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
      await put({ IfNoneMatch: '*' });
      expect(status(await put({ IfNoneMatch: '*' }).catch((error: unknown) => error))).toBe(412);
      expect(
        status(await put({ IfMatch: '"0123456789abcdef0123456789abcdef"' }).catch((error: unknown) => error)),
      ).toBe(412);
      const stored = await target.documents.read('k/index.json');
      expect(await target.documents.writeIf('k/index.json', Buffer.from('y'), stored!.tag)).toBe(true);
      expect(await target.documents.writeIf('k/index.json', Buffer.from('z'), stored!.tag)).toBe(false);
      expect(await target.documents.writeIf('missing/index.json', Buffer.from('z'), stored!.tag)).toBe(false);
      expect((await target.documents.read('k/index.json'))!.bytes.toString()).toBe('y');
    } finally {
      target.close();
    }
  });
});
