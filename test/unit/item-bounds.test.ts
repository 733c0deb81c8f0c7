/** Page items past the bounds no store can hold: an item error, not a page error. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidDocumentError } from '../../lambda/catalog/index.js';
import { parseCatalogPage } from '../../lambda/catalog/parsers/index.js';
import { identityKeyProblem, MAX_PREFIX_BYTES } from '../../lambda/contract/identity.js';
import { leafKey, quarantineKey } from '../../lambda/contract/keys.js';
import { type Json, PAGE_URL, body, pageItem, validPage } from './schema-kit.js';

describe('bounds on ids and versions (issue 10, item 4; issue 19: only what a key cannot hold)', () => {
  const pageWith = (overrides: Json): string => {
    const page = validPage();
    (page['items'] as Json[])[1] = pageItem(1, overrides);
    return body(page);
  };
  const problemOf = (overrides: Json) => parseCatalogPage(pageWith(overrides), PAGE_URL).items[1]!.problem;

  it('a 1,000-character id leaves the page valid; the item carries an error naming the page, the item and the bound', () => {
    const id = `Big${'x'.repeat(997)}`;
    const page = parseCatalogPage(pageWith({ 'nuget:id': id }), PAGE_URL);
    expect(page.items).toHaveLength(3);
    expect(page.items[0]!.problem).toBeUndefined();
    expect(page.items[2]!.problem).toBeUndefined();
    const problem = page.items[1]!.problem!;
    expect(problem).toBeInstanceOf(InvalidDocumentError);
    expect(problem.url).toBe(PAGE_URL);
    expect(problem.message).toContain(`${PAGE_URL}: items[1]: package "Big${'x'.repeat(196)}`);
    expect(problem.message).toContain(
      '(1002 characters) "1.0.0" (leaf "https://api.test/v3/catalog0/data/x/pkg1.1.0.0.json")',
    );
    expect(problem.message).toContain(
      "cannot be stored: its key segments {id} and {version} encode to 1000 + 5 bytes; at most 929 keep every key below 1024 bytes (S3's bound on a key, with a prefix of up to 64)",
    );
    expect(page.items[1]).toMatchObject({ id, version: '1.0.0' });
  });

  it.each([
    ['a 100-character id', { 'nuget:id': 'a'.repeat(100) }],
    // nuget.org's database holds ids of up to 128 characters; NuGet's client rule (100) is not a bound here.
    ['a 101-character id', { 'nuget:id': 'a'.repeat(101) }],
    ['a 128-character id', { 'nuget:id': 'a'.repeat(128) }],
    [
      'a 900-character id, the most S3 keys hold beside a 5-byte version under a 64-byte prefix',
      { 'nuget:id': 'a'.repeat(924) },
    ],
    ['a 65-character version', { 'nuget:version': `1.0.0-${'a'.repeat(59)}` }],
    ['a 100-character id of 3-byte characters (900 bytes encoded)', { 'nuget:id': '包'.repeat(100) }],
    ['a 100-code-unit id of astral characters', { 'nuget:id': '𝒳'.repeat(50) }],
    ['a 64-character version', { 'nuget:version': `1.0.0-${'a'.repeat(58)}` }],
  ])('accepts %s', (_, overrides) => {
    expect(problemOf(overrides)).toBeUndefined();
  });

  it.each([
    [
      'a 925-character id',
      { 'nuget:id': 'a'.repeat(925) },
      'its key segments {id} and {version} encode to 925 + 5 bytes; at most 929',
    ],
    [
      'a 930-character version',
      { 'nuget:version': `1.0.0-${'a'.repeat(924)}` },
      'encode to 4 + 930 bytes; at most 929',
    ],
    [
      'a 100-character id of 3-byte characters with a 36-character version',
      { 'nuget:id': '包'.repeat(100), 'nuget:version': `1.0.0-${'a'.repeat(30)}` },
      'its key segments {id} and {version} encode to 900 + 36 bytes',
    ],
    [
      'a version of exotic characters',
      { 'nuget:id': '包'.repeat(90), 'nuget:version': `1.0.0-${'包'.repeat(20)}` },
      'encode to 810 + 186 bytes; at most 929 keep every key below 1024 bytes',
    ],
    ['a version that is only build metadata', { 'nuget:version': '+build.5' }, 'empty version'],
  ])('sets aside %s', (_, overrides, reason) => {
    const problem = problemOf(overrides);
    expect(problem?.url).toBe(PAGE_URL);
    expect(problem?.message).toContain('items[1]: package ');
    expect(problem?.message).toContain(reason);
  });

  it('every item without a problem has keys below 1,024 bytes under the longest prefix', () => {
    const prefix = `${'p'.repeat(MAX_PREFIX_BYTES - 1)}/`;
    const unit = fc.constantFrom('a', 'Z', '.', '+', ' ', '0', 'é', 'İ', '包', '𝒳', '\ud800');
    // Ids of up to 105 three-byte characters (often 85 or more) and a tail, versions of a short core and a label:
    // many keys close to the bounds.
    const ids = fc
      .tuple(
        fc.oneof(fc.integer({ min: 0, max: 105 }), fc.integer({ min: 85, max: 101 })),
        fc.string({ unit, maxLength: 12 }),
      )
      .map(([wide, tail]) => '包'.repeat(wide) + tail)
      .filter((id) => id !== '');
    const versions = fc
      .tuple(
        fc.constantFrom('', '1', '1.0', '01.2.3.0', '+'),
        fc.oneof(fc.string({ unit, maxLength: 66 }), fc.string({ unit, minLength: 4, maxLength: 30 })),
      )
      .map(([core, label]) => (core === '' ? label : `${core}-${label}`))
      .filter((version) => version !== '');
    fc.assert(
      fc.property(ids, versions, (id, version) => {
        const item = parseCatalogPage(pageWith({ 'nuget:id': id, 'nuget:version': version }), PAGE_URL).items[1]!;
        if (item.problem !== undefined) return;
        for (const key of [
          leafKey(prefix, 'AAAAAAAAAAAA', id, version),
          quarantineKey(prefix, 'AAAAAAAAAAAA', id, version),
        ]) {
          expect(Buffer.byteLength(key)).toBeLessThan(1_024);
        }
        // And in a folder, whose file names hold 255 bytes: no segment of an accepted item is longer.
        if (identityKeyProblem(id, version, 255) === undefined) {
          const segments = leafKey('', 'AAAAAAAAAAAA', id, version).split('/');
          expect(Math.max(...segments.map((segment) => Buffer.byteLength(segment)))).toBeLessThanOrEqual(255);
        }
      }),
      { numRuns: 500 },
    );
  });
});
