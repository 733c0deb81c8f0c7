/**
 * The hand-written fast path of leaf, page, catalog index and service index validation (lambda/catalog/fast-path.ts)
 * against the zod schemas it stands in for: on generated and real documents, and on those documents mutated field by field, whatever
 * the fast path accepts zod accepts too, with the same fields. (What it is not sure of goes to zod, so the
 * errors are zod's by construction.) And it does take the ordinary documents, or it would save nothing. How the
 * documents are broken: fast-path-kit.ts.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fastIndexFields, fastLeafFields, fastPageFields, fastServiceIndex } from '../../lambda/catalog/fast-path.js';
import { zodIndexFields } from '../../lambda/catalog/index-schema.js';
import { zodServiceIndex } from '../../lambda/catalog/service-index.js';
import { readCatalogIndex, readLeaf, readPage, readServiceIndex } from '../../lambda/catalog/index.js';
import {
  parseCatalogIndex,
  parseCatalogPage,
  parseLeaf,
  parseServiceIndex,
} from '../../lambda/catalog/parsers/index.js';
import { zodLeafFields } from '../../lambda/catalog/leaf-schema.js';
import { zodPageFields } from '../../lambda/catalog/page-schema.js';
import { generateCatalog, layoutPages, renderLeafBody } from '../../testkit/index.js';
import { renderCatalogIndex, renderPage, renderServiceIndex } from '../../testkit/catalog-documents.js';
import { itemFromLeaf, ofKind, serviceIndex, validIndex, type Json } from './schema-kit.js';
import {
  agreement,
  everySingleChange,
  INDEX_KEYS,
  indexPath,
  ITEM_KEYS,
  LEAF_PATHS,
  leafPath,
  mutate,
  pagePath,
  serviceIndexPath,
  value,
  type Path,
} from './fast-path-kit.js';

const ORIGIN = 'https://api.nuget.org';
const catalog = generateCatalog({
  commits: 60,
  seed: 7,
  leavesPerCommit: [1, 6],
  trimTrailingZeros: true,
  semver2Ratio: 0.3,
});
const generatedLeaves: Json[] = catalog.commits.flatMap((commit) =>
  commit.leaves.map((leaf) => JSON.parse(renderLeafBody(commit, leaf, ORIGIN)) as Json),
);
const leaves: Json[] = [...generatedLeaves, ...ofKind('leaf').map((fixture) => fixture.json)];
const indexes: Json[] = [
  JSON.parse(renderCatalogIndex(layoutPages(catalog.commits, 40, false), catalog.commits, ORIGIN)) as Json,
  validIndex(),
  ...ofKind('index').map((fixture) => fixture.json),
];
const serviceIndexes: Json[] = [
  JSON.parse(renderServiceIndex(ORIGIN, `${ORIGIN}/v3/catalog0/index.json`)) as Json,
  serviceIndex(['Catalog/3.0.0', ['PackageBaseAddress/3.0.0', 'Other'], 'SearchQueryService']),
];
const pages: Json[] = [
  ...layoutPages(catalog.commits, 40, false).map((page) => JSON.parse(renderPage(page, ORIGIN, ORIGIN)) as Json),
  ...ofKind('page').map((fixture) => fixture.json),
];

const agreeOnLeaf = agreement(fastLeafFields, zodLeafFields, 'https://x.test/leaf.json');
const agreeOnPage = agreement(fastPageFields, zodPageFields, 'https://x.test/page.json');

describe('leaf fast path', () => {
  it('takes every generated and real leaf, with the fields zod gives', () => {
    for (const leaf of leaves) expect(agreeOnLeaf(leaf)).toBe(true);
  });

  it('takes nothing zod refuses, on every leaf changed at any one place to any edge value', () => {
    // The leaves with the most optional parts: deprecation, vulnerabilities, package types, dependencies.
    const rich = leaves.filter((leaf) =>
      ['deprecation', 'vulnerabilities', 'packageTypes', 'dependencyGroups'].some((key) => leaf[key] != null),
    );
    const chosen = [
      generatedLeaves[0]!,
      generatedLeaves.find((l) => JSON.stringify(l['@type']).includes('PackageDelete'))!,
      ...rich.slice(0, 6),
    ];
    const taken = everySingleChange(chosen, LEAF_PATHS, agreeOnLeaf);
    // Harmless changes (an unknown property, a null optional) stay on the fast path.
    expect(taken).toBeGreaterThan(chosen.length * 100);
  });

  it('takes nothing zod refuses, on leaves mutated at one to three places', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...leaves),
        fc.array(fc.tuple(leafPath, value), { minLength: 1, maxLength: 3 }),
        (leaf, changes) => {
          agreeOnLeaf(changes.reduce((doc, [path, v]) => mutate(doc, path, v), leaf));
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('leaves parseLeaf as it was: the same leaf from either path, the same error for a bad one', () => {
    const leaf = generatedLeaves.find((l) => (l['dependencyGroups'] as unknown[] | undefined)?.length)!;
    const url = 'https://x.test/leaf.json';
    const item = itemFromLeaf(leaf, url);
    const parsed = parseLeaf(Buffer.from(JSON.stringify(leaf)), url, item);
    expect(parsed.types).toStrictEqual(zodLeafFields(leaf, url).types);
    expect(parsed.types).not.toBe(leaf['@type']);
    const bad = mutate(mutate(leaf, ['packageSize'], -1), ['listed'], 'yes');
    expect(() => parseLeaf(Buffer.from(JSON.stringify(bad)), url, item)).toThrow(
      `${url}: packageSize: must not be negative, got -1; listed: expected boolean, got string`,
    );
  });
});

describe('page fast path', () => {
  it('takes every generated and real page, with the fields zod gives', () => {
    for (const page of pages) expect(agreeOnPage(page)).toBe(true);
  });

  it('takes nothing zod refuses, on a page changed at any one place to any edge value', () => {
    const paths: Path[] = [
      ...['commitId', 'commitTimeStamp', 'count', 'parent', 'items', 'other'].map((key) => [key]),
      ['items', 0],
      ...ITEM_KEYS.map((key) => ['items', 1, key]),
      ['items', 2, '@type', 0],
      ['items', 2, '@type', 1],
    ];
    expect(everySingleChange(pages.slice(0, 3), paths, agreeOnPage)).toBeGreaterThan(20);
  });

  it('takes nothing zod refuses, on pages mutated at one to three places', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...pages),
        fc.array(fc.tuple(pagePath, value), { minLength: 1, maxLength: 3 }),
        (page, changes) => {
          agreeOnPage(changes.reduce((doc, [path, v]) => mutate(doc, path, v), page));
        },
      ),
      { numRuns: 1500 },
    );
  });
});

const agreeOnIndex = agreement(fastIndexFields, zodIndexFields, 'https://x.test/index.json');
const agreeOnServiceIndex = agreement(fastServiceIndex, zodServiceIndex, 'https://x.test/v3/index.json');

describe('catalog index fast path', () => {
  it('takes every generated and real index, with the fields zod gives', () => {
    for (const index of indexes) expect(agreeOnIndex(index)).toBe(true);
  });

  it('takes nothing zod refuses, on an index changed at any one place to any edge value', () => {
    const paths: Path[] = [
      ...['commitId', 'commitTimeStamp', 'count', 'items', 'other'].map((key) => [key]),
      ['items', 0],
      ...INDEX_KEYS.map((key) => ['items', 1, key]),
    ];
    expect(everySingleChange(indexes.slice(0, 2), paths, agreeOnIndex)).toBeGreaterThan(10);
  });

  it('takes nothing zod refuses, on indexes mutated at one to three places', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...indexes),
        fc.array(fc.tuple(indexPath, value), { minLength: 1, maxLength: 3 }),
        (index, changes) => {
          agreeOnIndex(changes.reduce((doc, [path, v]) => mutate(doc, path, v), index));
        },
      ),
      { numRuns: 1500 },
    );
  });
});

describe('service index fast path', () => {
  it('takes every generated service index, as zod gives it: only the named properties, copies of @type lists', () => {
    for (const document of serviceIndexes) expect(agreeOnServiceIndex(document)).toBe(true);
    const document = serviceIndexes[1]!;
    const fast = fastServiceIndex(document)!;
    expect(fast.resources[1]!['@type']).not.toBe((document['resources'] as Json[])[1]!['@type']);
    expect(fast.resources[0]).not.toHaveProperty('comment');
  });

  it('takes nothing zod refuses, on service indexes mutated at one to three places', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...serviceIndexes),
        fc.array(fc.tuple(serviceIndexPath, value), { minLength: 1, maxLength: 3 }),
        (document, changes) => {
          agreeOnServiceIndex(changes.reduce((doc, [path, v]) => mutate(doc, path, v), document));
        },
      ),
      { numRuns: 1500 },
    );
  });
});

describe("the client's readers (zod loaded only when a fast path is not sure)", () => {
  const url = 'https://x.test/doc.json';
  /** The reader's answer and the synchronous parser's: the same value, or the same error message. */
  async function same<T>(read: () => Promise<T>, parse: () => T): Promise<void> {
    let expected: { value?: T; message?: string };
    try {
      expected = { value: parse() };
    } catch (error) {
      expected = { message: (error as Error).message };
    }
    await (expected.message === undefined
      ? expect(read()).resolves.toStrictEqual(expected.value)
      : expect(read()).rejects.toThrow(expected.message));
  }

  it('give what the parsers give, for good documents and for bad ones the fast path sends to zod', async () => {
    const badIndex = mutate(mutate(indexes[1]!, ['items', 0, 'count'], -1), ['items', 1, '@id'], 'ftp://x');
    const duplicateIndex = mutate(indexes[1]!, ['items', 1, '@id'], (indexes[1]!['items'] as Json[])[0]!['@id']);
    for (const document of [...indexes, badIndex, duplicateIndex, { items: 'x' }]) {
      const text = JSON.stringify(document);
      await same(
        () => readCatalogIndex(text, url),
        () => parseCatalogIndex(text, url),
      );
    }
    for (const document of [...serviceIndexes, mutate(serviceIndexes[0]!, ['resources', 0, '@type'], 1)]) {
      const text = JSON.stringify(document);
      await same(
        () => readServiceIndex(text, url),
        () => parseServiceIndex(text, url),
      );
    }
    for (const document of [...pages.slice(0, 3), mutate(pages[0]!, ['items', 0, 'commitTimeStamp'], 'later')]) {
      const text = JSON.stringify(document);
      await same(
        () => readPage(text, url),
        () => parseCatalogPage(text, url),
      );
    }
    const leaf = generatedLeaves[0]!;
    const item = itemFromLeaf(leaf, url);
    for (const document of [leaf, mutate(leaf, ['packageSize'], -1), mutate(leaf, ['version'], '9.9.9')]) {
      const text = JSON.stringify(document);
      await same(
        () => readLeaf(text, url, item),
        () => parseLeaf(text, url, item),
      );
    }
    await same(
      () => readLeaf('not json', url, item),
      () => parseLeaf('not json', url, item),
    );
  });
});
