/**
 * The engine against a catalog that misbehaves, over real HTTP (a catalog replica on 127.0.0.1, DynamoDB Local or
 * dynalite, s3rver): stale copies of pages and of the index are never trusted, and faults (5xx, 429 with
 * Retry-After, resets, truncated bodies, a leaf that keeps failing, a foreign origin) are survived or stop the run at
 * the last complete commit. Every test checks the bucket byte for byte against the generated catalog.
 */
import { describe, expect, it } from 'vitest';
import { formatTimestamp } from '../../lambda/contract/time.js';
import { commitKey, manifestKey } from '../../lambda/contract/keys.js';
import { SyncError } from '../../lambda/sync/engine.js';
import { generateCatalog } from '../../testkit/catalog-generator.js';
import { commitTicks, SyncHarness } from '../../testkit/sync-harness.js';
import { useReplicas } from './sync-kit.js';

const replicaOf = useReplicas();

describe('stale copies', () => {
  it('fetches a page older than its index entry again, and never trusts it', async () => {
    const catalog = generateCatalog({ commits: 40, seed: 41 });
    const replica = await replicaOf(catalog, { pageSize: 10 });
    const harness = await SyncHarness.create();
    const lastPage = replica.pagePaths().at(-1)!;
    replica.serveStalePage(lastPage, 1);
    const summary = await harness.run(replica.serviceIndexUrl);
    expect(summary.stoppedBy).toBe('caught-up');
    expect(replica.countRequests(lastPage)).toBe(2);
    expect(replica.requests.filter((r) => r.path === lastPage).at(-1)!.headers['cache-control']).toBe('no-cache');
    expect(await harness.verify(catalog, replica.origin, commitTicks(catalog, -1))).toEqual([]);
  });

  it('stops with a clear error when the page stays stale', async () => {
    const catalog = generateCatalog({ commits: 40, seed: 42 });
    const replica = await replicaOf(catalog, { pageSize: 10 });
    const harness = await SyncHarness.create();
    // A page with older copies: one holding several commits.
    const pages = replica.pagePaths();
    const stale = pages.findIndex((_, i) => replica.commitsOnPage(i) >= 2);
    replica.serveStalePage(pages[stale]!, 100);
    const error = await harness.run(replica.serviceIndexUrl).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SyncError);
    expect((error as Error).message).toContain(`${replica.origin}${pages[stale]}`);
    expect((error as Error).message).toContain('stale');
    // Every commit before the stale page is done; none on it.
    let before = 0;
    for (let i = 0; i < stale; i++) before += replica.commitsOnPage(i);
    expect((error as SyncError).summary.commits).toBe(before);
    expect(await harness.manifestsAfter(catalog, before === 0 ? 0n : commitTicks(catalog, before - 1))).toEqual([]);
  });

  it('does nothing when the index is older than the stored cursor', async () => {
    const catalog = generateCatalog({ commits: 10, seed: 43 });
    const replica = await replicaOf(catalog);
    const harness = await SyncHarness.create();
    await harness.run(replica.serviceIndexUrl);
    replica.setCatalog({ commits: catalog.commits.slice(0, 5) });
    const summary = await harness.run(replica.serviceIndexUrl);
    expect(summary).toMatchObject({ commits: 0, cursorAfter: formatTimestamp(commitTicks(catalog, -1)) });
    expect(await harness.cursor()).toBe(formatTimestamp(commitTicks(catalog, -1)));
  });
});

describe('faults survived', () => {
  it('5xx, 429 with Retry-After, connection resets and truncated bodies', async () => {
    const catalog = generateCatalog({ commits: 60, seed: 51 });
    const replica = await replicaOf(catalog, { pageSize: 12 });
    const harness = await SyncHarness.create();
    replica.failWith('/v3/index.json', 503, 1);
    replica.failWith('/v3/catalog0/index.json', 500, 2);
    replica.failWith('/page', 429, 2, { 'retry-after': '0' });
    replica.resetConnection('/page', 1);
    replica.failWith('/data/', 502, 4);
    replica.failWith('/data/', 429, 3, { 'retry-after': '0' });
    replica.resetConnection('/data/', 4);
    replica.truncateBody('/data/', 4);
    replica.truncateBody('/page', 1);
    const summary = await harness.run(replica.serviceIndexUrl);
    expect(summary.stoppedBy).toBe('caught-up');
    expect(await harness.verify(catalog, replica.origin, commitTicks(catalog, -1))).toEqual([]);
  });

  it('a leaf that fails past its retries stops the run at the last complete commit before it', async () => {
    const catalog = generateCatalog({ commits: 30, seed: 52 });
    const replica = await replicaOf(catalog);
    const harness = await SyncHarness.create();
    const bad = catalog.commits[17]!.leaves[0]!;
    replica.failWith(bad.path, 503, 1_000);
    const error = await harness.run(replica.serviceIndexUrl, { CONCURRENCY: '8' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SyncError);
    expect((error as Error).message).toContain(`${replica.origin}${bad.path}`);
    expect((error as Error).message).toContain('HTTP 503');
    expect((error as SyncError).summary).toMatchObject({
      stoppedBy: 'error',
      commits: 17,
      cursorAfter: formatTimestamp(commitTicks(catalog, 16)),
    });
    expect(await harness.cursor()).toBe(formatTimestamp(commitTicks(catalog, 16)));
    expect(await harness.manifestsAfter(catalog, commitTicks(catalog, 16))).not.toContain(
      manifestKey('', commitKey(commitTicks(catalog, 17))),
    );
    expect(await harness.strayManifests(catalog, replica.origin, commitTicks(catalog, 16))).toEqual([]);
    expect(await harness.verify(catalog, replica.origin, commitTicks(catalog, 16))).toEqual([]);
  });

  it('a leaf URL on a foreign origin is never requested', async () => {
    const foreign = await replicaOf(generateCatalog({ commits: 1, seed: 53 }));
    const catalog = generateCatalog({ commits: 5, seed: 54 });
    const replica = await replicaOf(catalog, { leafOrigin: foreign.origin });
    const harness = await SyncHarness.create();
    const error = await harness.run(replica.serviceIndexUrl).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SyncError);
    expect((error as Error).message).toContain(foreign.origin);
    expect((error as Error).message).toContain('origin not allowed');
    expect(foreign.requests).toHaveLength(0);
    expect(await harness.cursor()).toBeUndefined();
  });
});
