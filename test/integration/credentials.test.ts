/**
 * A source given with credentials (`http://user:password@host/…`): they go, as HTTP Basic
 * authentication, to the source's origin only, never to another origin a document names, and never
 * into what catalog-sync prints or stores, whether the run succeeds or fails.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { generateCatalog, type GeneratedCatalog } from '../../testkit/catalog-generator.js';
import { CatalogReplica } from '../../testkit/catalog-replica.js';
import { runCli } from '../../testkit/cli-process.js';
import { listFiles, verifyLocal } from '../../testkit/local-verify.js';
import { commitTicks, SyncHarness } from '../../testkit/sync-harness.js';

const SECRET = 'hunter2-Zx9';
const AUTHORIZATION = `Basic ${Buffer.from(`feed-user:${SECRET}`).toString('base64')}`;

let catalog: GeneratedCatalog;
/** Serves the leaves, on an origin of its own. */
let leaves: CatalogReplica;
/** Serves the service index, the catalog index and the pages, whose leaf URLs name `leaves`. */
let feed: CatalogReplica;
let dir: string;

beforeAll(async () => {
  catalog = generateCatalog({ commits: 12, seed: 401, leavesPerCommit: [1, 3] });
  leaves = await CatalogReplica.start({ catalog, pageSize: 8 });
  feed = await CatalogReplica.start({ catalog, pageSize: 8, leafOrigin: leaves.origin });
  dir = await mkdtemp(join(tmpdir(), 'catalog-sync-credentials-'));
});
afterAll(async () => {
  await Promise.all([leaves.stop(), feed.stop(), rm(dir, { recursive: true, force: true })]);
});

/** The source URL with credentials in it. */
function sourceWith(password: string): string {
  const url = new URL(feed.serviceIndexUrl);
  url.username = 'feed-user';
  url.password = password;
  return url.href;
}

/** Everything under the data folder, as one string. */
async function everythingStored(): Promise<string> {
  const files = await listFiles(dir);
  return (await Promise.all(files.map((file) => readFile(join(dir, file), 'utf8')))).join('\n');
}

describe('a source URL with credentials', () => {
  it('sends them to the source’s origin only, and prints and stores them nowhere', async () => {
    const run = await runCli([
      'run',
      '--source',
      sourceWith(SECRET),
      '--allow-origin',
      leaves.origin,
      '--data-dir',
      dir,
      '--json',
    ]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ commits: 12, stoppedBy: 'caught-up' });
    expect(await verifyLocal(dir, catalog, leaves.origin, commitTicks(catalog, -1))).toEqual([]);

    expect(feed.requests.length).toBeGreaterThan(2); // service index, catalog index, pages
    for (const request of feed.requests) expect(request.headers.authorization, request.path).toBe(AUTHORIZATION);
    expect(leaves.requests.length).toBe(catalog.commits.reduce((n, commit) => n + commit.leaves.length, 0));
    for (const request of leaves.requests) expect(request.headers.authorization, request.path).toBeUndefined();

    const status = await runCli(['status', '--source', sourceWith(SECRET), '--data-dir', dir]);
    expect(status.code).toBe(0);
    expect(status.stdout).toContain(`catalog head: `);
    expect(status.stdout).toContain('REDACTED@127.0.0.1');
    for (const output of [run.stdout, status.stdout, status.stderr, await everythingStored()])
      expect(output).not.toContain(SECRET);
  });

  it('a run refused by the source fails naming the URL without its credentials', async () => {
    feed.overrideBody('/v3/index.json', '{"error":"unauthorized"}', { status: 401, times: 1 });
    const refused = await runCli(['run', '--source', sourceWith(`${SECRET}-wrong`), '--data-dir', dir]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('http://REDACTED@127.0.0.1');
    expect(refused.stderr).toContain('HTTP 401');
    expect(refused.stdout + refused.stderr).not.toContain(SECRET);
  });

  it('the Lambda, failing on a page: neither its error nor its logs hold them', async () => {
    const harness = await SyncHarness.create();
    const saved = { ...process.env };
    Object.assign(
      process.env,
      harness.env({ CATALOG_SOURCE: sourceWith(SECRET), ALLOWED_ORIGINS: leaves.origin, CURSOR_NAME: 'private' }),
    );
    const failing = feed.pagePaths()[1]!;
    feed.failWith(failing, 503, Number.POSITIVE_INFINITY);
    const lines: string[] = [];
    // Powertools writes INFO to stdout and ERROR to stderr.
    const capture = (chunk: string | Uint8Array): boolean => {
      lines.push(String(chunk));
      return true;
    };
    const spies = [
      vi.spyOn(process.stdout, 'write').mockImplementation(capture),
      vi.spyOn(process.stderr, 'write').mockImplementation(capture),
    ];
    let error: unknown;
    try {
      const { handler } = await import('../../lambda/sync/lambda.js');
      error = await handler({}, { getRemainingTimeInMillis: () => 120_000 }).catch((e: unknown) => e);
    } finally {
      for (const spy of spies) spy.mockRestore();
      feed.clearFaults();
      process.env = saved;
    }
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toContain(`http://127.0.0.1:${new URL(feed.origin).port}${failing}: HTTP 503`);
    const logs = lines.join('');
    expect(logs).toContain('run stopped on an error');
    expect(logs).toContain(failing);
    expect(`${(error as Error).message}\n${(error as Error).stack}\n${JSON.stringify(error)}\n${logs}`).not.toContain(
      SECRET,
    );
    expect(await harness.cursor('private')).toBeDefined(); // the first page's commits were stored and checkpointed
  });

  it('over plain HTTP to another machine they are refused before anything is sent', async () => {
    const refused = await runCli([
      'run',
      '--source',
      `http://feed-user:${SECRET}@feed.example/v3/index.json`,
      '--data-dir',
      dir,
    ]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(
      /--source: .*REDACTED@feed\.example.* has credentials: they are sent over https only/,
    );
    expect(refused.stdout + refused.stderr).not.toContain(SECRET);
  });
});
