/** The catalog index: shape, duplicates, and nothing newer than the index. */
import { describe, expect, it } from 'vitest';
import { parseCatalogIndex, parseCatalogPage } from '../../lambda/catalog/parsers/index.js';
import { formatTimestamp, parseTimestamp } from '../../lambda/contract/time.js';
import {
  INDEX_URL,
  PAGE_URL,
  rejects,
  body,
  T0,
  T0_PLUS_100NS,
  validIndex,
  pageItem,
  validPage,
  type Json,
} from './schema-kit.js';

describe('parseCatalogIndex', () => {
  it('accepts a valid index in any order, and an index without count', () => {
    const index = validIndex();
    (index['items'] as Json[]).reverse();
    delete index['count'];
    const parsed = parseCatalogIndex(body(index), INDEX_URL);
    expect(parsed.count).toBeUndefined();
    expect(parsed.items.map((entry) => entry.url)).toEqual([
      'https://api.test/v3/catalog0/page1.json',
      'https://api.test/v3/catalog0/page0.json',
    ]);
  });

  it('rejects a missing items array', () => {
    const index = validIndex();
    delete index['items'];
    rejects(() => parseCatalogIndex(body(index), INDEX_URL), INDEX_URL, 'items: missing (expected array)');
  });

  it('rejects items that are not an array', () => {
    const index = { ...validIndex(), items: { '@id': 'https://api.test/page0.json' } };
    rejects(() => parseCatalogIndex(body(index), INDEX_URL), INDEX_URL, 'items: expected array, got object');
  });

  it('rejects an entry that is not an object', () => {
    const index = validIndex();
    (index['items'] as unknown[])[1] = 'https://api.test/page1.json';
    rejects(() => parseCatalogIndex(body(index), INDEX_URL), INDEX_URL, 'items[1]: expected object, got string');
  });

  it('rejects a page entry without @id', () => {
    const index = validIndex();
    delete (index['items'] as Json[])[1]!['@id'];
    rejects(() => parseCatalogIndex(body(index), INDEX_URL), INDEX_URL, 'items[1]["@id"]: missing (expected string)');
  });

  it.each([
    ['not a URL', 'not a url', 'expected an absolute http(s) URL, got the relative reference "not a url"'],
    ['relative', 'page0.json', 'expected an absolute http(s) URL, got the relative reference "page0.json"'],
    ['root-relative', '/v3/catalog0/page0.json', 'expected an absolute http(s) URL, got the relative reference'],
    ['protocol-relative', '//api.test/page0.json', 'expected an absolute http(s) URL, got the relative reference'],
    ['ftp', 'ftp://api.test/page0.json', 'expected an http or https URL, got the ftp: URL "ftp://api.test/page0.json"'],
    ['javascript', 'javascript:alert(1)', 'expected an http or https URL, got the javascript: URL'],
    ['hostless', 'http://', 'not a valid URL: "http://"'],
    ['with a space', 'https://api.test/page 0.json', 'URL contains whitespace or control characters'],
    ['a number', 7, 'expected string, got number'],
  ])('rejects an @id that is %s', (_, id, message) => {
    const index = validIndex();
    (index['items'] as Json[])[0]!['@id'] = id;
    rejects(() => parseCatalogIndex(body(index), INDEX_URL), INDEX_URL, `items[0]["@id"]: ${message}`);
  });

  it('accepts http and https @ids in any letter case', () => {
    const index = validIndex();
    (index['items'] as Json[])[0]!['@id'] = 'HTTP://api.test/v3/catalog0/page0.json';
    expect(parseCatalogIndex(body(index), INDEX_URL).items[0]!.url).toBe('HTTP://api.test/v3/catalog0/page0.json');
  });

  it('rejects a missing commitTimeStamp, on the index and on an entry', () => {
    const index = validIndex();
    delete index['commitTimeStamp'];
    rejects(() => parseCatalogIndex(body(index), INDEX_URL), INDEX_URL, 'commitTimeStamp: missing (expected string)');
    const entry = validIndex();
    delete (entry['items'] as Json[])[0]!['commitTimeStamp'];
    rejects(
      () => parseCatalogIndex(body(entry), INDEX_URL),
      INDEX_URL,
      'items[0].commitTimeStamp: missing (expected string)',
    );
  });

  it.each([
    ['month 13', '2017-13-01T00:00:00Z', 'invalid timestamp "2017-13-01T00:00:00Z": month 13 is out of range'],
    ['no zone', '2017-10-31T23:30:32.4197849', 'invalid timestamp "2017-10-31T23:30:32.4197849": expected'],
    ['8 fractional digits', '2017-10-31T23:30:32.41978491Z', 'invalid timestamp "2017-10-31T23:30:32.41978491Z"'],
    ['a date only', '2017-10-31', 'invalid timestamp "2017-10-31"'],
  ])('rejects an entry commitTimeStamp with %s', (_, text, message) => {
    const index = validIndex();
    (index['items'] as Json[])[0]!['commitTimeStamp'] = text;
    rejects(() => parseCatalogIndex(body(index), INDEX_URL), INDEX_URL, `items[0].commitTimeStamp: ${message}`);
  });

  it('rejects a commitTimeStamp that is a number', () => {
    const index = { ...validIndex(), commitTimeStamp: 1509492632419 };
    rejects(() => parseCatalogIndex(body(index), INDEX_URL), INDEX_URL, 'commitTimeStamp: expected string, got number');
  });

  it('gives the message of the brief for month 13 on a page', () => {
    const page = validPage();
    (page['items'] as Json[])[1]!['commitTimeStamp'] = '2017-13-01T00:00:00Z';
    const error = rejects(() => parseCatalogPage(body(page), PAGE_URL), PAGE_URL);
    expect(error.message).toBe(
      `${PAGE_URL}: items[1].commitTimeStamp: invalid timestamp "2017-13-01T00:00:00Z": month 13 is out of range`,
    );
  });

  it.each([
    ['negative', -1, 'must not be negative, got -1'],
    ['not an integer', 2.5, 'expected an integer, got 2.5'],
    ['a string', '540', 'expected number, got string'],
  ])('rejects a count that is %s', (_, count, message) => {
    const entry = validIndex();
    (entry['items'] as Json[])[0]!['count'] = count;
    rejects(() => parseCatalogIndex(body(entry), INDEX_URL), INDEX_URL, `items[0].count: ${message}`);
    const index = { ...validIndex(), count };
    rejects(() => parseCatalogIndex(body(index), INDEX_URL), INDEX_URL, `count: ${message}`);
  });

  it('rejects an entry without count', () => {
    const index = validIndex();
    delete (index['items'] as Json[])[0]!['count'];
    rejects(() => parseCatalogIndex(body(index), INDEX_URL), INDEX_URL, 'items[0].count: missing (expected number)');
  });

  it('rejects an entry with embedded items', () => {
    const index = validIndex();
    (index['items'] as Json[])[1]!['items'] = [pageItem(0)];
    rejects(() => parseCatalogIndex(body(index), INDEX_URL), INDEX_URL, 'items[1].items: ', 'must not embed items');
  });

  it('rejects the same page listed twice', () => {
    const index = validIndex();
    (index['items'] as Json[]).push({ ...(index['items'] as Json[])[0]! });
    rejects(
      () => parseCatalogIndex(body(index), INDEX_URL),
      INDEX_URL,
      'items[2]["@id"]: duplicate of items[0]: "https://api.test/v3/catalog0/page0.json"',
    );
  });

  it('rejects an entry newer than the index, to the tick', () => {
    const index = validIndex();
    (index['items'] as Json[])[1]!['commitTimeStamp'] = T0_PLUS_100NS;
    rejects(
      () => parseCatalogIndex(body(index), INDEX_URL),
      INDEX_URL,
      `items[1].commitTimeStamp: "${T0_PLUS_100NS}" is after the index's commitTimeStamp "${T0}"`,
      'inconsistent',
    );
  });

  it('compares commit times as ticks, not as text', () => {
    // The same instant written with an offset and with dropped zeros is not newer.
    const index = validIndex();
    index['commitTimeStamp'] = '2017-11-01T01:30:32.4197849+02:00';
    (index['items'] as Json[])[1]!['commitTimeStamp'] = '2017-10-31T23:30:32.4197849Z';
    expect(parseCatalogIndex(body(index), INDEX_URL).commitTicks).toBe(parseTimestamp(T0));
  });

  it('lists at most three problems and counts the rest', () => {
    const index = validIndex();
    const items = index['items'] as Json[];
    for (let n = 0; n < 10; n++) items.push({ '@id': `page${n}.json`, commitId: 'c', commitTimeStamp: T0, count: 1 });
    const error = rejects(() => parseCatalogIndex(body(index), INDEX_URL), INDEX_URL, '; and 7 more problems');
    expect(error.reason.split('; ')).toHaveLength(4);
    expect(error.cause).toBeDefined();
  });

  it('keeps messages short when the input is huge', () => {
    const index = validIndex();
    (index['items'] as Json[])[0]!['commitTimeStamp'] = 'x'.repeat(1_000_000);
    const error = rejects(() => parseCatalogIndex(body(index), INDEX_URL), INDEX_URL, 'characters)');
    expect(error.message.length).toBeLessThan(500);
  });

  it('parses a 25,000-entry index (its speed is measured in bench/, not here)', () => {
    const base = parseTimestamp('2015-02-01T06:30:11.7477681Z');
    const items = Array.from({ length: 25_000 }, (_, n) => ({
      '@id': `https://api.nuget.org/v3/catalog0/page${n}.json`,
      commitId: `00000000-0000-0000-0000-${String(n).padStart(12, '0')}`,
      commitTimeStamp: formatTimestamp(base + BigInt(n) * 12_345_678_901n),
      count: 550,
    }));
    const last = items[items.length - 1]!;
    const document = { commitId: last.commitId, commitTimeStamp: last.commitTimeStamp, count: 25_000, items };
    const bytes = Buffer.from(body(document));
    const index = parseCatalogIndex(bytes, INDEX_URL);
    expect(index.items).toHaveLength(25_000);
    expect(index.items[24_999]!.commitTicks).toBe(base + 24_999n * 12_345_678_901n);
  });
});
