/** The catalog page: shape and the protocol's guarantees within a page. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LeafType } from '../../lambda/catalog/index.js';
import { parseCatalogPage } from '../../lambda/catalog/parsers/index.js';
import { formatTimestamp, parseTimestamp } from '../../lambda/contract/time.js';
import {
  INDEX_URL,
  PAGE_URL,
  rejects,
  body,
  T0,
  T0_PLUS_100NS,
  T_EARLIER,
  pageItem,
  validPage,
  type Json,
} from './schema-kit.js';

describe('parseCatalogPage', () => {
  it('accepts a valid page', () => {
    const page = parseCatalogPage(body(validPage()), PAGE_URL);
    expect(page.parent).toBe(INDEX_URL);
    expect(page.items.map((item) => item.type)).toEqual([LeafType.details, LeafType.details, LeafType.details]);
  });

  it.each([
    ['nuget:PackageDelete', LeafType.delete],
    ['PackageDelete', LeafType.delete],
    ['PackageDetails', LeafType.details],
    [['nuget:PackageDetails'], LeafType.details],
    [['catalog:Permalink', 'nuget:PackageDelete'], LeafType.delete],
  ])('accepts the item @type %j', (type, expected) => {
    const page = validPage();
    (page['items'] as Json[])[0]!['@type'] = type;
    expect(parseCatalogPage(body(page), PAGE_URL).items[0]!.type).toBe(expected);
  });

  it.each([
    ['unknown', 'nuget:PackageEdit', 'expected PackageDetails or PackageDelete, got ["nuget:PackageEdit"]'],
    ['both', ['nuget:PackageDetails', 'nuget:PackageDelete'], 'has both PackageDetails and PackageDelete'],
    ['empty', [], 'expected PackageDetails or PackageDelete, got []'],
    ['a number', 3, 'expected a string or an array of strings'],
  ])('rejects an item @type that is %s', (_, type, message) => {
    const page = validPage();
    (page['items'] as Json[])[2]!['@type'] = type;
    rejects(() => parseCatalogPage(body(page), PAGE_URL), PAGE_URL, `items[2]["@type"]: ${message}`);
  });

  it.each([
    ['@type', 'items[1]["@type"]: missing'],
    ['nuget:id', 'items[1]["nuget:id"]: missing (expected string)'],
    ['nuget:version', 'items[1]["nuget:version"]: missing (expected string)'],
    ['commitId', 'items[1].commitId: missing (expected string)'],
    ['commitTimeStamp', 'items[1].commitTimeStamp: missing (expected string)'],
    ['@id', 'items[1]["@id"]: missing (expected string)'],
  ])('rejects an item without %s', (field, message) => {
    const page = validPage();
    delete (page['items'] as Json[])[1]![field];
    rejects(() => parseCatalogPage(body(page), PAGE_URL), PAGE_URL, message);
  });

  it('rejects an empty nuget:id', () => {
    const page = validPage();
    (page['items'] as Json[])[1]!['nuget:id'] = '';
    rejects(() => parseCatalogPage(body(page), PAGE_URL), PAGE_URL, 'items[1]["nuget:id"]: must not be empty');
  });

  it('rejects a parent that is not a URL', () => {
    const page = { ...validPage(), parent: 'index.json' };
    rejects(() => parseCatalogPage(body(page), PAGE_URL), PAGE_URL, 'parent: expected an absolute http(s) URL');
  });

  it('rejects a missing or non-array items', () => {
    const page = validPage();
    delete page['items'];
    rejects(() => parseCatalogPage(body(page), PAGE_URL), PAGE_URL, 'items: missing (expected array)');
    const notArray = { ...validPage(), items: 'none' };
    rejects(() => parseCatalogPage(body(notArray), PAGE_URL), PAGE_URL, 'items: expected array, got string');
  });

  it('rejects an item newer than its page, to the tick', () => {
    const page = validPage();
    for (const item of page['items'] as Json[]) if (item['commitId'] === 'c-2') item['commitTimeStamp'] = T0_PLUS_100NS;
    rejects(
      () => parseCatalogPage(body(page), PAGE_URL),
      PAGE_URL,
      `items[0].commitTimeStamp: "${T0_PLUS_100NS}" is after the page's commitTimeStamp "${T0}"`,
    );
  });

  it('rejects two commits at one timestamp', () => {
    const page = validPage();
    (page['items'] as Json[])[1]!['commitId'] = 'c-other';
    rejects(
      () => parseCatalogPage(body(page), PAGE_URL),
      PAGE_URL,
      'items[1].commitId: "c-other" differs from items[0].commitId "c-2"',
      'one commit per timestamp',
    );
  });

  it('tells commits 100 ns apart as different timestamps', () => {
    const page = validPage();
    (page['items'] as Json[])[2]!['commitTimeStamp'] = '2017-10-31T23:30:32.4197848Z';
    expect(parseCatalogPage(body(page), PAGE_URL).items[2]!.commitTicks).toBe(parseTimestamp(T0) - 1n);
  });

  it('rejects one commit at two timestamps', () => {
    const page = validPage();
    (page['items'] as Json[])[2]!['commitId'] = 'c-2';
    rejects(
      () => parseCatalogPage(body(page), PAGE_URL),
      PAGE_URL,
      `items[2].commitTimeStamp: "${T_EARLIER}" differs from items[0].commitTimeStamp "${T0}" in the same commit "c-2"`,
    );
  });

  it('accepts one commit written with two spellings of its timestamp', () => {
    const page = validPage();
    (page['items'] as Json[])[1]!['commitTimeStamp'] = '2017-11-01T00:30:32.4197849+01:00';
    expect(parseCatalogPage(body(page), PAGE_URL).items[1]!.commitTicks).toBe(parseTimestamp(T0));
  });

  it('rejects the same id and version twice in one commit, naming both URLs', () => {
    const page = validPage();
    const items = page['items'] as Json[];
    items.push(pageItem(9, { 'nuget:id': 'PKG0', 'nuget:version': '1.0.0+build.5' }));
    const error = rejects(
      () => parseCatalogPage(body(page), PAGE_URL),
      PAGE_URL,
      'items[3]: PKG0 1.0.0+build.5 appears twice in commit "c-2"',
      items[0]!['@id'] as string,
      items[3]!['@id'] as string,
    );
    expect(error.reason).not.toContain('; and');
  });

  it('accepts the same id and version in different commits', () => {
    const page = validPage();
    (page['items'] as Json[])[2]!['nuget:id'] = 'pkg0';
    expect(parseCatalogPage(body(page), PAGE_URL).items).toHaveLength(3);
  });

  it('rejects the same leaf URL twice', () => {
    const page = validPage();
    const items = page['items'] as Json[];
    items[1]!['@id'] = items[0]!['@id'];
    rejects(() => parseCatalogPage(body(page), PAGE_URL), PAGE_URL, 'items[1]["@id"]: duplicate of items[0]');
  });

  it('stays linear and keeps its message short on a hostile page', () => {
    const n = 20_000;
    const items = Array.from({ length: n }, (_, i) => pageItem(i, { commitId: `c-${i}` }));
    const error = rejects(() => parseCatalogPage(body({ ...validPage(), items }), PAGE_URL), PAGE_URL);
    expect(error.reason).toContain(`; and ${n - 1 - 3} more problems`);
    expect(error.message.length).toBeLessThan(1_500);
  });

  it('accepts random valid pages in any order, keeping count and ticks', () => {
    const MAX_TICKS = parseTimestamp('9999-12-31T23:59:59.9999999Z');
    const commits = fc.uniqueArray(fc.bigInt({ min: 0n, max: MAX_TICKS }), { minLength: 1, maxLength: 8 });
    const leaf = fc.record({
      id: fc.stringMatching(/^[A-Za-z][A-Za-z0-9._-]{0,20}$/),
      version: fc.tuple(fc.nat(20), fc.nat(20), fc.nat(20)).map((parts) => parts.join('.')),
      type: fc.constantFrom('nuget:PackageDetails', 'nuget:PackageDelete', 'PackageDetails', ['nuget:PackageDelete']),
      trim: fc.boolean(),
    });
    const arbitrary = fc
      .tuple(commits, fc.array(fc.tuple(fc.nat(), leaf), { minLength: 1, maxLength: 60 }), fc.nat(1_000))
      .chain(([ticksList, leaves, later]) => {
        const items: Json[] = [];
        const seen = new Set<string>();
        leaves.forEach(([pick, spec], n) => {
          const ticks = ticksList[pick % ticksList.length]!;
          const identity = `${ticks}/${spec.id.toLowerCase()}/${spec.version}`;
          if (seen.has(identity)) return;
          seen.add(identity);
          const text = formatTimestamp(ticks);
          items.push({
            '@id': `https://api.test/data/${n}/${spec.id.toLowerCase()}.${spec.version}.json`,
            '@type': spec.type,
            commitId: `commit-${ticks}`,
            // nuget.org drops trailing zeros of the fraction; both forms must give the same ticks.
            commitTimeStamp: spec.trim ? text.replace(/\.?0+Z$/, 'Z') : text,
            'nuget:id': spec.id,
            'nuget:version': spec.version,
          });
        });
        const newest = items.reduce((max, item) => {
          const ticks = parseTimestamp(item['commitTimeStamp'] as string);
          return ticks > max ? ticks : max;
        }, 0n);
        const pageTicks = newest + BigInt(later) <= MAX_TICKS ? newest + BigInt(later) : newest;
        return fc.shuffledSubarray(items, { minLength: items.length, maxLength: items.length }).map((shuffled) => ({
          commitId: 'page-commit',
          commitTimeStamp: formatTimestamp(pageTicks),
          count: shuffled.length,
          items: shuffled,
        }));
      });
    fc.assert(
      fc.property(arbitrary, (document) => {
        const page = parseCatalogPage(body(document), PAGE_URL);
        expect(page.items).toHaveLength(document.items.length);
        expect(page.count).toBe(document.items.length);
        page.items.forEach((item, n) => {
          const source = document.items[n]!;
          expect(item.url).toBe(source['@id']);
          expect(item.commitTicks).toBe(parseTimestamp(source['commitTimeStamp'] as string));
          expect(formatTimestamp(item.commitTicks)).toBe(
            formatTimestamp(parseTimestamp(source['commitTimeStamp'] as string)),
          );
        });
      }),
      { numRuns: 200 },
    );
  });
});
