/**
 * How the upkeep spends its round trips (issue 32): batches as deep as the stream, the next batch's leaf bodies read
 * while one is applied, a batch's index reads and body reads in flight together under one budget (more than 32 at
 * once), only the latest body of an identity read, and a write whose answer was lost counted as written. An
 * in-memory mirror and view whose every request answers a few turns of the event loop later (no timers) and logs
 * when it starts and ends.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readCommits, type Mirror, type MirrorCommit } from '../../../lambda/consumer/index.js';
import { commitKeyOf } from '../../../lambda/contract/keys.js';
import { LocalStore } from '../../../lambda/stores/local-store.js';
import type { SnapshotReader, SnapshotStore } from '../../../lambda/stores/types.js';
import {
  applyBatchToView,
  keepView,
  packageIndexKey,
  type StoredDocument,
  type ViewDocuments,
} from '../../../lambda/view/index.js';
import type { GeneratedCommit } from '../../../testkit/generated-commit.js';
import { expectedView, writeMirror } from '../../../testkit/view-mirror.js';

type Kind = 'get' | 'read' | 'write';

/** A mirror and a view in memory; requests answer after a few event-loop turns, logged as they start and end. */
class RecordingBucket implements SnapshotReader, ViewDocuments {
  readonly where = 'memory://view';
  readonly location = 'memory://view';
  readonly objects = new Map<string, { bytes: Buffer; tag: string }>();
  readonly log: { at: 'start' | 'end'; kind: Kind; key: string }[] = [];
  /** Index reads in flight now, and at most. */
  readonly reads = { now: 0, max: 0 };
  /** Awaited before a request answers, when it returns a promise (a test holds a request there). */
  hold: (kind: Kind, key: string) => Promise<void> | undefined = () => undefined;
  /** The first `lostAnswers` writes are stored but answered as refused (a retried PUT refused by its own write). */
  lostAnswers = 0;
  private serial = 0;

  count(kind: Kind, at: 'start' | 'end', test: (key: string) => boolean = () => true): number {
    return this.log.filter((entry) => entry.kind === kind && entry.at === at && test(entry.key)).length;
  }
  private async answer<T>(kind: Kind, key: string, value: () => T): Promise<T> {
    this.log.push({ at: 'start', kind, key });
    for (let turn = 0; turn < 3; turn++) await new Promise((resolve) => setImmediate(resolve));
    await this.hold(kind, key);
    const result = value();
    this.log.push({ at: 'end', kind, key });
    return result;
  }
  // The mirror (filled by writeMirror).
  async putLeaf(key: string, body: Buffer): Promise<void> {
    this.objects.set(key, { bytes: body, tag: String(++this.serial) });
  }
  async putJson(key: string, value: unknown): Promise<void> {
    await this.putLeaf(key, Buffer.from(JSON.stringify(value)));
  }
  async *listKeys(prefix: string, startAfter = ''): AsyncIterable<string> {
    yield* [...this.objects.keys()].filter((key) => key.startsWith(prefix) && key > startAfter).sort();
  }
  getBytes(key: string): Promise<Buffer | undefined> {
    return this.answer('get', key, () => this.objects.get(key)?.bytes);
  }
  // The view.
  async read(key: string): Promise<StoredDocument | undefined> {
    this.reads.max = Math.max(this.reads.max, ++this.reads.now);
    try {
      return await this.answer('read', key, () => this.objects.get(key));
    } finally {
      this.reads.now--;
    }
  }
  writeIf(key: string, bytes: Buffer, expected: string | undefined): Promise<boolean> {
    return this.answer('write', key, () => {
      if (this.objects.get(key)?.tag !== expected) return false;
      this.objects.set(key, { bytes, tag: String(++this.serial) });
      return this.lostAnswers-- <= 0;
    });
  }
}

const at = (second: number): string =>
  new Date(Date.UTC(2024, 0, 1) + second * 1000).toISOString().replace('.000Z', '.0000000Z');

/** `count` commits of one leaf each: `leafOf(i)` gives its id and version. */
function commitsOf(count: number, leafOf: (i: number) => { id: string; version: string }): GeneratedCommit[] {
  return Array.from({ length: count }, (_, i) => ({
    commitId: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
    timestamp: at(i),
    leaves: [{ ...leafOf(i), type: 'PackageDetails' as const, path: `/${i}.json`, listed: i % 7 !== 0 }],
  }));
}

describe('the upkeep on a store with latency', () => {
  const dirs: string[] = [];
  afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));
  const open = async (
    commits: GeneratedCommit[],
  ): Promise<{ bucket: RecordingBucket; mirror: Mirror; delivered: MirrorCommit[] }> => {
    const bucket = new RecordingBucket();
    await writeMirror(bucket as unknown as SnapshotStore, '', commits);
    const mirror = { store: bucket, prefix: '', where: bucket.where };
    const delivered: MirrorCommit[] = [];
    for await (const commit of readCommits(mirror)) delivered.push(commit);
    bucket.log.length = 0;
    return { bucket, mirror, delivered };
  };
  const expectView = async (bucket: RecordingBucket, commits: GeneratedCommit[]): Promise<void> => {
    for (const [id, index] of expectedView('', commits, new Map()))
      expect(JSON.parse((await bucket.read(packageIndexKey('', id)))!.bytes.toString('utf8'))).toEqual(index);
  };

  it("batches follow the stream, and the next batch's bodies are read while one is applied", async () => {
    // 600 commits of one package: every batch writes its index once.
    const commits = commitsOf(600, (i) => ({ id: 'Hot.Pkg', version: `1.0.${i % 50}` }));
    const { bucket, mirror } = await open(commits);
    // The first batch's index read is held until nothing more is read without it (no request started for 20 turns
    // of the event loop): by then the upkeep has read every manifest it reads ahead, and their bodies.
    const quiet = async (): Promise<void> => {
      for (let seen = -1; seen !== bucket.log.length; ) {
        seen = bucket.log.length;
        for (let turn = 0; turn < 20; turn++) await new Promise((resolve) => setImmediate(resolve));
      }
    };
    bucket.hold = (kind) => (kind === 'read' && bucket.count('read', 'start') === 1 ? quiet() : undefined);
    const dir = mkdtempSync(join(tmpdir(), 'catalog-sync-view-batches-'));
    dirs.push(dir);
    const result = await keepView({ documents: bucket, prefix: '' }, { mirror, cursors: new LocalStore(dir) });
    expect(result).toMatchObject({ commits: 600, batches: 2, stoppedBy: 'caught-up' });
    // One commit at once, then the other 599 together (before: 64 at a time, 10 batches).
    expect(result.written).toBe(2);
    expect(bucket.count('write', 'end')).toBe(2);
    // Bodies of commits past the first 64 were read before the first index write ended (before: none).
    const firstWriteEnd = bucket.log.findIndex((entry) => entry.kind === 'write' && entry.at === 'end');
    const later = new Set(commits.slice(64).map((commit) => commitKeyOf(commit.timestamp)));
    const early = bucket.log
      .slice(0, firstWriteEnd)
      .filter(
        (e) => e.kind === 'get' && e.at === 'start' && later.has(e.key.split('/')[1]!) && e.key.startsWith('leaves/'),
      );
    expect(early.length).toBeGreaterThan(0);
    await expectView(bucket, commits);
  });

  it("a batch's index reads and bodies are in flight together, more than 32 at once", async () => {
    const commits = commitsOf(300, (i) => ({ id: `Pkg.${i}`, version: '1.0.0' }));
    const { bucket, delivered } = await open(commits);
    expect(await applyBatchToView({ documents: bucket, prefix: '' }, delivered)).toEqual({ written: 300, current: 0 });
    // Before: 32 packages at once, each reading its index only after every body of the batch had come.
    expect(bucket.reads.max).toBeGreaterThan(32);
    const firstRead = bucket.log.findIndex((entry) => entry.kind === 'read' && entry.at === 'start');
    const lastBody = bucket.log.findLastIndex((entry) => entry.kind === 'get' && entry.at === 'end');
    expect(firstRead).toBeLessThan(lastBody);
    // And a package's write goes as soon as it is built, while other packages' index reads are still in flight.
    const firstWrite = bucket.log.findIndex((entry) => entry.kind === 'write' && entry.at === 'start');
    const lastRead = bucket.log.findLastIndex((entry) => entry.kind === 'read' && entry.at === 'end');
    expect(firstWrite).toBeLessThan(lastRead);
    await expectView(bucket, commits);
  });

  it('reads only the latest body of an identity in the batch', async () => {
    // One identity in 5 commits, another in 1.
    const commits = commitsOf(6, (i) => ({ id: 'Same.Pkg', version: i < 5 ? '1.0.0' : '2.0.0' }));
    const { bucket, delivered } = await open(commits);
    expect(await applyBatchToView({ documents: bucket, prefix: '' }, delivered)).toEqual({ written: 1, current: 0 });
    // Before: every leaf's body (6).
    expect(bucket.count('get', 'start', (key) => key.startsWith('leaves/'))).toBe(2);
    await expectView(bucket, commits);
  });

  it('a write stored but answered as refused (its retry refused by itself) is written, not current', async () => {
    const commits = commitsOf(2, (i) => ({ id: 'Lost.Answer', version: `1.0.${i}` }));
    const { bucket, delivered } = await open(commits);
    bucket.lostAnswers = 1;
    // Before: the re-read found the commit written and counted it current (so its quarantined entries were not looked at again).
    expect(await applyBatchToView({ documents: bucket, prefix: '' }, delivered)).toEqual({ written: 1, current: 0 });
    expect(bucket.count('write', 'end')).toBe(1);
    await expectView(bucket, commits);
  });
});
