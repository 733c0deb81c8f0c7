/**
 * The feed's drift report and its repair (`verify --feed`, issue 33 part 2) on S3 + DynamoDB Local and on a folder,
 * in process: a feed kept over a mirror of real packages is damaged the ways a bucket or a folder drifts (a removed
 * `.nupkg`, a corrupted one, a flat index missing a version, a registration whose `listed`, deprecation or
 * vulnerabilities differ from the leaf, a vulnerability page that lost its entry); each drift is reported naming the
 * package and version and what differs, then repaired by the feed engine from the source, then the report is
 * clean and the bytes are the leaves' again. The CLI's face (lines, `--json`, exit codes) runs in process on a folder.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { main } from '../../../lambda/cli.js';
import type { FeedStorage } from '../../../lambda/feed/index.js';
import { auditFeed, repairFeed, type FeedFinding } from '../../../lambda/verify/index.js';
import { HttpClient } from '../../../lambda/catalog/http-client.js';
import { CatalogReplica } from '../../../testkit/catalog-replica.js';
import {
  FEED_TEST_RETRY,
  FeedCatalog,
  feedStorageOf,
  mirrorCommits,
  runFeed,
  type FeedPlace,
} from '../../../testkit/feed-kit.js';
import { openViewTarget, VIEW_KINDS, type ViewTestTarget } from '../../../testkit/view-harness.js';

const BASE = 'https://feed.example.test/nuget/';
const ADVISORY = { advisoryUrl: 'https://example.com/advisories/GHSA-v-1', severity: '2' } as const;
const DEPRECATED = { reasons: ['Legacy'], message: 'Use 2.x' } as const;

/** A catalog of three packages: two versions each of A and B (B 1.0.0 deprecated), C 1.0.0 vulnerable. */
function driftCatalog(): FeedCatalog {
  const built = new FeedCatalog();
  built.commit([
    { id: 'Drift.A', version: '1.0.0' },
    { id: 'Drift.A', version: '2.0.0', fillerBytes: 2_000 },
    { id: 'Drift.B', version: '1.0.0', deprecation: DEPRECATED },
    { id: 'Drift.B', version: '2.0.0' },
    { id: 'Drift.C', version: '1.0.0', vulnerabilities: [ADVISORY] },
  ]);
  return built;
}

/** Damages the feed of {@link driftCatalog} in six ways, through the storage as a stray writer would. */
async function damage(storage: FeedStorage, prefix: string): Promise<void> {
  const feed = `${prefix}feed/`;
  const json = async (key: string): Promise<any> => JSON.parse((await storage.read(key))!.bytes.toString('utf8'));
  const put = (key: string, value: unknown) => storage.put(key, Buffer.from(JSON.stringify(value)), 'json');
  await storage.delete(`${feed}flat/drift.a/1.0.0/drift.a.1.0.0.nupkg`);
  const corrupt = (await storage.read(`${feed}flat/drift.a/2.0.0/drift.a.2.0.0.nupkg`))!.bytes;
  corrupt[100] = (corrupt[100]! + 1) % 256;
  await storage.put(`${feed}flat/drift.a/2.0.0/drift.a.2.0.0.nupkg`, corrupt, 'nupkg');
  await put(`${feed}flat/drift.b/index.json`, { versions: ['1.0.0'] });
  const b = await json(`${feed}registration/drift.b/index.json`);
  for (const item of b.items[0].items) {
    if (item.catalogEntry.version === '2.0.0') item.catalogEntry.listed = false;
    if (item.catalogEntry.version === '1.0.0') delete item.catalogEntry.deprecation;
  }
  await put(`${feed}registration/drift.b/index.json`, b);
  const c = await json(`${feed}registration/drift.c/index.json`);
  delete c.items[0].items[0].catalogEntry.vulnerabilities;
  await put(`${feed}registration/drift.c/index.json`, c);
  for (let page = 0; page < 16; page++) {
    const key = `${feed}vulnerabilities/page-${page}.json`;
    const entries = await json(key);
    if (entries['drift.c'] === undefined) continue;
    delete entries['drift.c'];
    await put(key, entries);
  }
}

/** The findings a damaged feed of {@link driftCatalog} must give, as the report names them. */
function expectDamageFound(findings: readonly FeedFinding[], prefix: string): void {
  const vulnerable = [{ url: ADVISORY.advisoryUrl, severity: 2, versions: '[1.0.0, 1.0.0]' }];
  expect(findings).toEqual(
    expect.arrayContaining([
      {
        kind: 'package-missing',
        id: 'Drift.A',
        version: '1.0.0',
        key: `${prefix}feed/flat/drift.a/1.0.0/drift.a.1.0.0.nupkg`,
      },
      expect.objectContaining({ kind: 'package-differs', id: 'Drift.A', version: '2.0.0' }),
      { kind: 'version-missing', id: 'Drift.B', version: '2.0.0', where: `${prefix}feed/flat/drift.b/index.json` },
      { kind: 'version-differs', id: 'Drift.B', version: '2.0.0', field: 'listed', feed: false, source: true },
      {
        kind: 'version-differs',
        id: 'Drift.B',
        version: '1.0.0',
        field: 'deprecation',
        feed: undefined,
        source: DEPRECATED,
      },
      {
        kind: 'version-differs',
        id: 'Drift.C',
        version: '1.0.0',
        field: 'vulnerabilities',
        feed: undefined,
        source: [ADVISORY],
      },
      expect.objectContaining({ kind: 'vulnerabilities-differ', id: 'Drift.C', feed: undefined, source: vulnerable }),
    ]),
  );
  expect(findings).toHaveLength(7);
  const differs = findings.find((finding) => finding.kind === 'package-differs');
  expect(differs).toMatchObject({ actual: { size: (differs as any).expected.size } });
  expect((differs as any).actual.hash).not.toBe((differs as any).expected.hash);
}

/** The mirror of {@link driftCatalog}, its view and its feed kept from a replica of the catalog. */
async function openDriftFeed(kind: (typeof VIEW_KINDS)[number], built: FeedCatalog, prefix: string) {
  const replica = await CatalogReplica.start({ catalog: built.catalog });
  const target = await openViewTarget(kind, prefix);
  const place: FeedPlace = { ...target, storage: feedStorageOf(target) };
  await mirrorCommits(place, built.catalog.commits);
  expect(await runFeed(place, replica.serviceIndexUrl, BASE)).toMatchObject({ stored: 5, quarantined: 0 });
  return { replica, target, place };
}

describe.each(VIEW_KINDS)('verify --feed: %s', (kind) => {
  const prefix = 'm/';
  const built = driftCatalog();
  let replica: CatalogReplica;
  let target: ViewTestTarget;
  let place: FeedPlace;

  beforeAll(async () => {
    ({ replica, target, place } = await openDriftFeed(kind, built, prefix));
  });
  afterAll(async () => {
    await replica?.stop();
    target?.close();
  });

  const audit = async () => {
    const findings: FeedFinding[] = [];
    const result = await auditFeed(
      { storage: place.storage, mirror: place.mirror, cursors: place.cursors },
      { onFinding: (finding) => findings.push(finding) },
    );
    return { ...result, findings };
  };

  it('reports each drift by package and version, repairs it from the source, then reports none', async () => {
    const clean = await audit();
    expect(clean.findings).toEqual([]);
    expect(clean.summary).toMatchObject({ baseUrl: BASE, packages: 3, versions: 5, hashed: 5, drifted: 0, pending: 0 });

    await damage(place.storage, prefix);
    const damaged = await audit();
    expectDamageFound(damaged.findings, prefix);
    expect(damaged.summary).toMatchObject({ drifted: 7, driftedPackages: 3, hashed: 4 });
    expect(damaged.drift).toEqual(
      new Map([
        ['drift.a', new Set(['1.0.0', '2.0.0'])],
        ['drift.b', new Set()],
        ['drift.c', new Set()],
      ]),
    );

    const http = new HttpClient({ retry: FEED_TEST_RETRY });
    try {
      const counts = await repairFeed(
        { storage: place.storage, mirror: place.mirror, baseUrl: BASE, http, source: replica.serviceIndexUrl },
        damaged.drift,
      );
      expect(counts).toMatchObject({ packages: 3, stored: 2, quarantined: 0, removed: 0 });
    } finally {
      await http.close();
    }
    const repaired = await audit();
    expect(repaired.findings).toEqual([]);
    expect(repaired.summary).toMatchObject({ drifted: 0, hashed: 5 });
    for (const version of ['1.0.0', '2.0.0']) {
      const stored = await place.storage.read(`${prefix}feed/flat/drift.a/${version}/drift.a.${version}.nupkg`);
      expect(stored?.bytes.equals(built.latest('Drift.A', version).package!.bytes)).toBe(true);
    }
  });

  it('a version the source deleted that the feed still offers is extra; the view moved past the feed is pending', async () => {
    const flat = `${prefix}feed/flat/drift.c/index.json`;
    await place.storage.put(flat, Buffer.from(JSON.stringify({ versions: ['1.0.0', '9.0.0'] })), 'json');
    const extra = await audit();
    expect(extra.findings).toEqual([
      { kind: 'version-extra', id: 'Drift.C', version: '9.0.0', where: flat, reason: 'the source does not list it' },
    ]);
    await place.storage.put(flat, Buffer.from(JSON.stringify({ versions: ['1.0.0'] })), 'json');

    // A commit the view has and the feed consumer has not reached: not drift yet.
    await mirrorCommits(place, [built.commit([{ id: 'Drift.A', version: '3.0.0' }])]);
    const pending = await audit();
    expect(pending.findings).toEqual([]);
    expect(pending.summary).toMatchObject({ pending: 1, packages: 2, drifted: 0 });
  });
});

describe('catalog-sync verify --feed (in process, a folder)', () => {
  const built = driftCatalog();
  let replica: CatalogReplica;
  let target: ViewTestTarget;
  let place: FeedPlace;

  beforeAll(async () => {
    ({ replica, target, place } = await openDriftFeed('local folder', built, ''));
  });
  afterAll(async () => {
    await replica?.stop();
    target?.close();
  });

  const run = async (args: readonly string[]) => {
    let stdout = '';
    let stderr = '';
    const out = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => ((stdout += String(chunk)), true));
    const err = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => ((stderr += String(chunk)), true));
    try {
      const code = await main(['node', 'catalog-sync', 'verify', ...target.cli.args, ...args]);
      return { code, stdout, stderr };
    } finally {
      out.mockRestore();
      err.mockRestore();
      process.exitCode = undefined;
    }
  };
  const cli = (...args: string[]) => run(['--feed', ...args]);

  it('prints a line per drifted version and exits 1; --repair mends them and exits 0; --json gives the same', async () => {
    expect(await cli()).toMatchObject({ code: 0, stdout: expect.stringMatching(/\nno drift, 0 waiting/) });

    await damage(place.storage, '');
    const report = await cli();
    expect(report.code, report.stderr).toBe(1);
    expect(report.stdout).toContain(
      'package missing  Drift.A 1.0.0: feed/flat/drift.a/1.0.0/drift.a.1.0.0.nupkg is not stored',
    );
    expect(report.stdout).toMatch(/package differs {2}Drift\.A 2\.0\.0: .* has \d+ bytes, SHA-512 .*; the leaf says/);
    expect(report.stdout).toContain(
      'version missing  Drift.B 2.0.0: the source lists it, feed/flat/drift.b/index.json does not',
    );
    expect(report.stdout).toContain('version differs  Drift.B 2.0.0: listed is false in the feed, true in the source');
    expect(report.stdout).toContain('version differs  Drift.B 1.0.0: deprecation is absent in the feed, {"reasons"');
    expect(report.stdout).toContain('7 findings of drift in 3 packages');

    const json = await cli('--json');
    expect(json.code).toBe(1);
    const lines = json.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(lines).toHaveLength(8);
    expect(lines.at(-1)).toMatchObject({ kind: 'summary', drifted: 7, driftedPackages: 3 });

    const repair = await cli('--repair', '--source', replica.serviceIndexUrl, '--json');
    expect(repair.code, repair.stderr).toBe(0);
    expect(
      repair.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line))
        .at(-1),
    ).toMatchObject({
      kind: 'summary',
      drifted: 7,
      repair: { stored: 2 },
      unrepaired: 0,
    });
    expect(await cli()).toMatchObject({ code: 0, stdout: expect.stringContaining('no drift') });
  });

  it('a wrong prefix or folder is "no mirror here" (exit 2), not "nothing to verify"', async () => {
    expect(await cli('--prefix', 'nope/')).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('no mirror here: no nope/watermark.json'),
    });
    const args = [...target.cli.args];
    args[args.indexOf('--data-dir') + 1] += '-typo';
    const typo = await run([...args, '--feed']);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toMatch(/-typo: no mirror here: .*\(the folder does not exist\)/);
    expect(typo.stdout).toBe('');
  });

  it('refuses flags of the mirror audit with --feed, and --include without --feed, naming the flag', async () => {
    expect(await cli('--deep')).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('--deep: audits the mirror'),
    });
    expect(await run(['--include', 'Drift.*'])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('--include: is a flag of verify --feed'),
    });
  });
});
