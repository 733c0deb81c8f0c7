/** Bodies and JSON, for every parser alike, and the error every parser throws. */
import { describe, expect, it } from 'vitest';
import { InvalidDocumentError, parseJson } from '../../lambda/catalog/index.js';
import {
  parseCatalogIndex,
  parseCatalogPage,
  parseLeaf,
  parseServiceIndex,
} from '../../lambda/catalog/parsers/index.js';
import { PAGE_URL, rejects, body, validPage, expectedItem } from './schema-kit.js';

describe('bodies that are not JSON objects', () => {
  const parsers = [
    ['parseCatalogIndex', (b: string | Uint8Array) => parseCatalogIndex(b, PAGE_URL), 'catalog index'],
    ['parseCatalogPage', (b: string | Uint8Array) => parseCatalogPage(b, PAGE_URL), 'catalog page'],
    ['parseLeaf', (b: string | Uint8Array) => parseLeaf(b, PAGE_URL, expectedItem()), 'catalog leaf'],
    ['parseServiceIndex', (b: string | Uint8Array) => parseServiceIndex(b, PAGE_URL), 'service index'],
  ] as const;

  it.each(parsers)('%s rejects text that is not JSON', (_, parse) => {
    rejects(() => parse('<html>503 Service Unavailable</html>'), PAGE_URL, 'not valid JSON');
  });

  it.each(parsers)('%s rejects truncated JSON', (_, parse) => {
    const error = rejects(() => parse(body(validPage()).slice(0, 100)), PAGE_URL, 'not valid JSON: ');
    expect(error.cause).toBeInstanceOf(SyntaxError);
  });

  it.each(parsers)('%s rejects an empty body', (_, parse) => {
    rejects(() => parse(''), PAGE_URL, 'not valid JSON: the body is empty');
    rejects(() => parse(new Uint8Array()), PAGE_URL, 'not valid JSON: the body is empty');
    rejects(() => parse(Buffer.from([0xef, 0xbb, 0xbf])), PAGE_URL, 'not valid JSON: the body is empty');
    rejects(() => parse(' \n'), PAGE_URL, 'not valid JSON: the body is empty');
  });

  it.each(parsers)('%s rejects null, an array, a number and a string at the top level', (_, parse, kind) => {
    rejects(() => parse('null'), PAGE_URL, `expected the ${kind} to be a JSON object, got null`);
    rejects(() => parse('[{"items": []}]'), PAGE_URL, `expected the ${kind} to be a JSON object, got array`);
    rejects(() => parse('42'), PAGE_URL, `expected the ${kind} to be a JSON object, got number`);
    rejects(() => parse('"items"'), PAGE_URL, `expected the ${kind} to be a JSON object, got string`);
  });

  it('rejects bytes that are not UTF-8', () => {
    rejects(() => parseCatalogPage(Buffer.from([0x7b, 0xff, 0x7d]), PAGE_URL), PAGE_URL, 'not valid UTF-8');
  });

  it('strips exactly one BOM, from bytes and from text', () => {
    const page = body(validPage());
    expect(
      parseCatalogPage(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(page)]), PAGE_URL).items,
    ).toHaveLength(3);
    expect(parseCatalogPage(`\uFEFF${page}`, PAGE_URL).items).toHaveLength(3);
    rejects(() => parseCatalogPage(`\uFEFF\uFEFF${page}`, PAGE_URL), PAGE_URL, 'not valid JSON');
  });

  it('parseJson returns the parsed value', () => {
    expect(parseJson('\uFEFF[1,2]', PAGE_URL)).toEqual([1, 2]);
  });
});

describe('InvalidDocumentError', () => {
  it('carries url, reason, name and cause', () => {
    const cause = new Error('inner');
    const error = new InvalidDocumentError('https://x/page3.json', 'items[4].count: bad', { cause });
    expect(error.name).toBe('InvalidDocumentError');
    expect(error.message).toBe('https://x/page3.json: items[4].count: bad');
    expect(error.url).toBe('https://x/page3.json');
    expect(error.reason).toBe('items[4].count: bad');
    expect(error.cause).toBe(cause);
    expect(error).toBeInstanceOf(Error);
  });
});
