/** The catalog leaf: shape, the PackageDetails properties, and the match with its page item. */
import { describe, expect, it } from 'vitest';
import { LeafType } from '../../lambda/catalog/index.js';
import { parseLeaf } from '../../lambda/catalog/parsers/index.js';
import { parseTimestamp } from '../../lambda/contract/time.js';
import { LEAF_URL, rejects, body, T0, T0_PLUS_100NS, detailsLeaf, deleteLeaf, expectedItem } from './schema-kit.js';

describe('parseLeaf', () => {
  it('accepts a details leaf and keeps undocumented properties', () => {
    const leaf = parseLeaf(body(detailsLeaf()), LEAF_URL, expectedItem());
    expect(leaf).toEqual({
      types: ['PackageDetails', 'catalog:Permalink'],
      type: LeafType.details,
      id: 'Foo',
      version: '1.0.0',
      commitId: 'c-2',
      commitTimeStamp: T0,
      commitTicks: parseTimestamp(T0),
      document: detailsLeaf(),
    });
  });

  it('accepts a delete leaf and a single-string @type', () => {
    const document = { ...deleteLeaf(), '@type': 'nuget:PackageDelete' };
    const leaf = parseLeaf(body(document), LEAF_URL, expectedItem({ type: LeafType.delete }));
    expect(leaf.types).toEqual(['nuget:PackageDelete']);
    expect(leaf.type).toBe(LeafType.delete);
  });

  const common = ['@type', 'catalog:commitId', 'catalog:commitTimeStamp', 'id', 'published', 'version'];
  const pathOf = (field: string): string => (/^[A-Za-z_$][\w$]*$/.test(field) ? field : `["${field}"]`);

  it.each([...common, 'packageHash', 'packageHashAlgorithm', 'packageSize'])(
    'rejects a details leaf without %s',
    (field) => {
      const document = detailsLeaf();
      delete document[field];
      rejects(() => parseLeaf(body(document), LEAF_URL, expectedItem()), LEAF_URL, `${pathOf(field)}: missing`);
    },
  );

  it.each(common)('rejects a delete leaf without %s', (field) => {
    const document = deleteLeaf();
    delete document[field];
    rejects(
      () => parseLeaf(body(document), LEAF_URL, expectedItem({ type: LeafType.delete })),
      LEAF_URL,
      `${pathOf(field)}: missing`,
    );
  });

  it('lists every missing property of an empty object, three at most', () => {
    const error = rejects(() => parseLeaf('{}', LEAF_URL, expectedItem()), LEAF_URL, '; and 3 more problems');
    expect(error.reason.startsWith('["@type"]: missing')).toBe(true);
  });

  it('rejects a leaf with a wrong @type', () => {
    const document = { ...detailsLeaf(), '@type': ['PackageEdit', 'catalog:Permalink'] };
    rejects(
      () => parseLeaf(body(document), LEAF_URL, expectedItem()),
      LEAF_URL,
      '["@type"]: expected PackageDetails or PackageDelete, got ["PackageEdit","catalog:Permalink"]',
    );
  });

  it('rejects a leaf whose @type has both types', () => {
    const document = { ...detailsLeaf(), '@type': ['PackageDetails', 'PackageDelete'] };
    rejects(() => parseLeaf(body(document), LEAF_URL, expectedItem()), LEAF_URL, '["@type"]: has both');
  });

  it('rejects a leaf whose type differs from the page item', () => {
    rejects(
      () => parseLeaf(body(deleteLeaf()), LEAF_URL, expectedItem()),
      LEAF_URL,
      '["@type"]: the leaf has "PackageDelete" but the page item has "PackageDetails"',
    );
  });

  it('rejects a commit timestamp 100 ns away from the page item', () => {
    const document = { ...detailsLeaf(), 'catalog:commitTimeStamp': T0_PLUS_100NS };
    rejects(
      () => parseLeaf(body(document), LEAF_URL, expectedItem()),
      LEAF_URL,
      `["catalog:commitTimeStamp"]: the leaf has "${T0_PLUS_100NS}" but the page item has "${T0}"`,
    );
  });

  it('accepts the same commit time written differently', () => {
    const document = { ...detailsLeaf(), 'catalog:commitTimeStamp': '2017-10-31T23:30:32.4197849+00:00' };
    expect(parseLeaf(body(document), LEAF_URL, expectedItem()).commitTicks).toBe(parseTimestamp(T0));
  });

  it('rejects a commit id different from the page item', () => {
    const document = { ...detailsLeaf(), 'catalog:commitId': 'c-9' };
    rejects(
      () => parseLeaf(body(document), LEAF_URL, expectedItem()),
      LEAF_URL,
      '["catalog:commitId"]: the leaf has "c-9" but the page item has "c-2"',
    );
  });

  it('rejects an id different from the page item, but not a difference of case', () => {
    rejects(
      () => parseLeaf(body({ ...detailsLeaf(), id: 'Bar' }), LEAF_URL, expectedItem()),
      LEAF_URL,
      'id: the leaf has "Bar" but the page item has "Foo"',
    );
    expect(parseLeaf(body({ ...detailsLeaf(), id: 'FOO' }), LEAF_URL, expectedItem()).id).toBe('FOO');
  });

  it.each([
    ['1.0', '1.0.0'],
    ['1.0.0', '1.0'],
    ['1.0.0.0', '1.0.0'],
    ['01.0', '1.0.0'],
    ['1.0.0+sha.5', '1.0.0'],
    ['1.0.0-Beta.1', '1.0.0-beta.1+build'],
    ['1.0-RC', '1.0.0-rc'],
  ])('accepts the leaf version %s for the item version %s', (leafVersion, itemVersion) => {
    const document = { ...deleteLeaf(), version: leafVersion };
    const leaf = parseLeaf(body(document), LEAF_URL, expectedItem({ type: LeafType.delete, version: itemVersion }));
    expect(leaf.version).toBe(leafVersion);
  });

  it.each([
    ['1.0.1', '1.0.0'],
    ['1.0.0.1', '1.0.0'],
    ['1.0.0-beta', '1.0.0'],
    ['1.0.0-beta.1', '1.0.0-beta.2'],
  ])('rejects the leaf version %s for the item version %s', (leafVersion, itemVersion) => {
    const document = { ...detailsLeaf(), version: leafVersion };
    rejects(
      () => parseLeaf(body(document), LEAF_URL, expectedItem({ version: itemVersion })),
      LEAF_URL,
      `version: the leaf has "${leafVersion}" but the page item has "${itemVersion}"`,
    );
  });

  it('lists every field that differs from the page item', () => {
    const document = { ...detailsLeaf(), id: 'Bar', version: '2.0.0' };
    rejects(() => parseLeaf(body(document), LEAF_URL, expectedItem()), LEAF_URL, 'id: the leaf', '; version: the leaf');
  });

  it.each([
    ['not base64', 'not base64!', 'packageHash: expected standard base64'],
    ['base64url', 'abc_-w==', 'packageHash: expected standard base64'],
    ['badly padded', 'abc', 'packageHash: expected standard base64'],
    ['empty', '', 'packageHash: must not be empty'],
  ])('rejects a packageHash that is %s', (_, hash, message) => {
    const document = { ...detailsLeaf(), packageHash: hash };
    rejects(() => parseLeaf(body(document), LEAF_URL, expectedItem()), LEAF_URL, message);
  });

  it.each([
    ['negative', -1, 'packageSize: must not be negative, got -1'],
    ['fractional', 1.5, 'packageSize: expected an integer, got 1.5'],
    ['a string', '118348', 'packageSize: expected number, got string'],
  ])('rejects a packageSize that is %s', (_, size, message) => {
    const document = { ...detailsLeaf(), packageSize: size };
    rejects(() => parseLeaf(body(document), LEAF_URL, expectedItem()), LEAF_URL, message);
  });

  it('accepts a packageSize of 0 and any published date', () => {
    const document = { ...detailsLeaf(), packageSize: 0, published: '0001-01-01T00:00:00Z' };
    expect(parseLeaf(body(document), LEAF_URL, expectedItem()).document['packageSize']).toBe(0);
  });

  it('rejects an invalid published date', () => {
    const document = { ...detailsLeaf(), published: '1900-02-29T00:00:00Z' };
    const parse = (): unknown => parseLeaf(body(document), LEAF_URL, expectedItem());
    rejects(parse, LEAF_URL, 'published: invalid timestamp "1900-02-29T00:00:00Z": day 29 is out of range');
  });

  it.each([
    ['listed', 'yes', 'listed: expected boolean, got string'],
    ['isPrerelease', 1, 'isPrerelease: expected boolean, got number'],
    ['requireLicenseAcceptance', 'false', 'requireLicenseAcceptance: expected boolean, got string'],
    ['tags', 7, 'tags: expected a string or an array of strings'],
    ['tags', ['a', 7], 'tags: expected a string or an array of strings'],
    ['vulnerabilities', { severity: '1' }, 'vulnerabilities: expected array, got object'],
    ['vulnerabilities', [{ severity: '1' }], 'vulnerabilities[0].advisoryUrl: missing'],
    ['deprecation', { message: 'old' }, 'deprecation.reasons: missing (expected array)'],
    ['packageTypes', [{ version: '1.0.0' }], 'packageTypes[0].name: missing (expected string)'],
    ['dependencyGroups', [{ dependencies: 'none' }], 'dependencyGroups[0].dependencies: expected array, got string'],
    ['title', ['x'], 'title: expected string, got array'],
  ])('rejects a details leaf whose %s is %j', (field, value, message) => {
    const document = { ...detailsLeaf(), [field]: value };
    rejects(() => parseLeaf(body(document), LEAF_URL, expectedItem()), LEAF_URL, message);
  });

  it('accepts optional properties in their lenient forms', () => {
    const document = {
      ...detailsLeaf(),
      tags: 'one two',
      listed: null,
      vulnerabilities: [{ advisoryUrl: 'https://github.com/advisories/X', severity: '7' }],
      deprecation: { reasons: [] },
      packageTypes: [{ name: ' ' }],
      dependencyGroups: [{}, { dependencies: [{}, { id: '', range: 'not a range' }, { id: ' ' }] }],
    };
    expect(parseLeaf(body(document), LEAF_URL, expectedItem()).document).toEqual(document);
  });

  it('does not check details properties on a delete leaf', () => {
    const document = { ...deleteLeaf(), listed: 'whatever', packageSize: -1 };
    expect(parseLeaf(body(document), LEAF_URL, expectedItem({ type: LeafType.delete })).type).toBe(LeafType.delete);
  });
});
