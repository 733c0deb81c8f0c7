/** The service index, the catalog URL it names, and telling a service index from a catalog index. */
import { describe, expect, it } from 'vitest';
import { detectSourceKind, findCatalogUrl, InvalidDocumentError, SourceKind } from '../../lambda/catalog/index.js';
import { parseServiceIndex, parseSource } from '../../lambda/catalog/parsers/index.js';
import { INDEX_URL, SERVICE_URL, rejects, body, validIndex, serviceIndex } from './schema-kit.js';

describe('service index', () => {
  it('finds the Catalog/3.0.0 resource', () => {
    const document = serviceIndex(['SearchQueryService/3.5.0', 'Catalog/3.0.0', 'RegistrationsBaseUrl']);
    const parsed = parseServiceIndex(body(document), SERVICE_URL);
    expect(parsed.version).toBe('3.0.0');
    expect(parsed.resources).toHaveLength(3);
    expect(findCatalogUrl(parsed, SERVICE_URL)).toBe('https://api.test/v3/resource1/');
  });

  it('finds it among several types of one resource', () => {
    const document = serviceIndex(['PackageBaseAddress/3.0.0', ['Catalog/3.0.0', 'Other']]);
    const parsed = parseServiceIndex(body(document), SERVICE_URL);
    expect(findCatalogUrl(parsed, SERVICE_URL)).toBe('https://api.test/v3/resource1/');
  });

  it('says so when the source has no catalog, listing the types it has', () => {
    const types = [
      'SearchQueryService',
      'SearchQueryService/3.5.0',
      'PackagePublish/2.0.0',
      'RegistrationsBaseUrl',
      'SearchAutocompleteService',
      'ReportAbuseUriTemplate/3.0.0',
      'Catalog/2.0.0',
    ];
    const parsed = parseServiceIndex(body(serviceIndex(types)), SERVICE_URL);
    rejects(
      () => findCatalogUrl(parsed, SERVICE_URL),
      SERVICE_URL,
      'the service index has no Catalog/3.0.0 resource (it has "SearchQueryService", "SearchQueryService/3.5.0"',
      'and 2 more)',
    );
    const empty = parseServiceIndex(body({ version: '3.0.0', resources: [] }), SERVICE_URL);
    rejects(() => findCatalogUrl(empty, SERVICE_URL), SERVICE_URL, 'no Catalog/3.0.0 resource (it has no resources)');
  });

  it('rejects a service index without resources, or with a bad resource', () => {
    const parse = (document: unknown) => (): unknown => parseServiceIndex(body(document), SERVICE_URL);
    rejects(parse({ version: '3.0.0' }), SERVICE_URL, 'resources: missing (expected array)');
    const relative = { resources: [{ '@id': 'catalog0/index.json', '@type': 'Catalog/3.0.0' }] };
    rejects(parse(relative), SERVICE_URL, 'resources[0]["@id"]: expected an absolute http(s) URL');
    const untyped = { resources: [{ '@id': 'https://api.test/catalog0/index.json' }] };
    rejects(parse(untyped), SERVICE_URL, 'resources[0]["@type"]: missing (expected a string or an array of strings)');
  });

  it('detects the source kind by content', () => {
    expect(detectSourceKind(serviceIndex(['Catalog/3.0.0']), SERVICE_URL)).toBe(SourceKind.serviceIndex);
    expect(detectSourceKind(validIndex(), INDEX_URL)).toBe(SourceKind.catalogIndex);
    rejects(() => detectSourceKind({ version: '3.0.0' }, SERVICE_URL), SERVICE_URL, 'neither a service index');
    rejects(() => detectSourceKind({ resources: [], items: [] }, SERVICE_URL), SERVICE_URL, 'has both');
    rejects(() => detectSourceKind({ items: {} }, SERVICE_URL), SERVICE_URL, 'neither');
    rejects(() => detectSourceKind(null, SERVICE_URL), SERVICE_URL, 'got null');
    expect(() => detectSourceKind([])).toThrow(InvalidDocumentError);
  });

  it('parses a source document as whichever kind it is', () => {
    const service = parseSource(body(serviceIndex(['Catalog/3.0.0'])), SERVICE_URL);
    expect(service.kind).toBe(SourceKind.serviceIndex);
    const catalog = parseSource(body(validIndex()), INDEX_URL);
    expect(catalog.kind === SourceKind.catalogIndex && catalog.catalogIndex.items).toHaveLength(2);
    rejects(() => parseSource('{}', SERVICE_URL), SERVICE_URL, 'neither');
  });
});
