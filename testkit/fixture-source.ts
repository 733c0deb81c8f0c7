/**
 * Serves a small real catalog from fixture files (e.g. the NuGetGallery NgTests catalogs, whose
 * URLs use the base `http://tempuri.org/`).
 *
 * Each file is served at the path of its own `@id`, with the fixture's base URL rewritten to the
 * replica's origin everywhere in the text; every other byte (a UTF-8 byte-order mark included) is
 * served as it is in the file.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SERVICE_INDEX_PATH, renderServiceIndex } from './catalog-documents.js';
import { parseTicks, ticksToDate } from './catalog-time.js';
import type { ReplicaSource, ServedDocument } from './replica-source.js';

/** Which files of a fixture directory make up one catalog. */
export interface FixtureSelection {
  /** Only files whose name starts with this, e.g. `TestCatalogWithNonNormalizedDelete`. */
  prefix?: string;
  /** Only these file names. */
  files?: readonly string[];
}

/** A {@link ReplicaSource} over fixture files. */
export class FixtureSource implements ReplicaSource {
  readonly catalogIndexPath: string;
  private readonly documents = new Map<string, ServedDocument>();

  /**
   * @throws when a file is not JSON, has an `@id` outside `baseUrl`, or two files claim one path
   *   (the NgTests directory holds several catalogs: pick one with `selection`).
   */
  constructor(dir: string, baseUrl: string, origin: string, selection: FixtureSelection = {}) {
    const names = readdirSync(dir)
      .filter((name) => name.endsWith('.json'))
      .filter((name) => selection.prefix === undefined || name.startsWith(selection.prefix))
      .filter((name) => selection.files === undefined || selection.files.includes(name))
      .sort();
    if (names.length === 0) throw new Error(`no fixture files selected in ${dir}`);
    const claimed = new Map<string, string>();
    let indexPath: string | undefined;
    for (const name of names) {
      const text = readFileSync(join(dir, name), 'utf8');
      const parsed = JSON.parse(text.replace(/^\uFEFF/, '')) as Record<string, unknown>;
      const id = parsed['@id'];
      if (typeof id !== 'string' || !id.startsWith(baseUrl))
        throw new Error(`${name}: @id ${String(id)} is not under ${baseUrl}`);
      const path = `/${id.slice(baseUrl.length)}`;
      const other = claimed.get(path);
      if (other)
        throw new Error(`${name} and ${other} both claim ${path}: select one catalog with a prefix or a file list`);
      claimed.set(path, name);
      const types = [parsed['@type']].flat();
      if (types.includes('CatalogRoot')) indexPath = path;
      const timestamp = parsed.commitTimeStamp ?? parsed['catalog:commitTimeStamp'];
      this.documents.set(path, {
        body: Buffer.from(text.split(baseUrl).join(`${origin}/`), 'utf8'),
        contentType: 'application/json',
        ...(typeof timestamp === 'string' ? { lastModified: ticksToDate(parseTicks(timestamp)) } : {}),
      });
    }
    if (!indexPath) throw new Error(`no catalog index (@type CatalogRoot) among ${names.join(', ')}`);
    this.catalogIndexPath = indexPath;
    if (!this.documents.has(SERVICE_INDEX_PATH)) {
      this.documents.set(SERVICE_INDEX_PATH, {
        body: Buffer.from(renderServiceIndex(origin, `${origin}${indexPath}`)),
        contentType: 'application/json',
      });
    }
  }

  /** The fixture paths served (service index excluded), sorted. */
  paths(): string[] {
    return [...this.documents.keys()].filter((p) => p !== SERVICE_INDEX_PATH).sort();
  }

  resolve(path: string): ServedDocument | undefined {
    return this.documents.get(path);
  }

  stalePage(path: string): ServedDocument {
    throw new Error(`a fixture catalog has no older copies of ${path}`);
  }
}
