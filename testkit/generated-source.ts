/**
 * Serves a generated catalog: service index, catalog index, pages and leaves, rendered on demand
 * and cached until the catalog grows.
 */
import {
  CATALOG_INDEX_PATH,
  pagePath,
  renderCatalogIndex,
  renderPage,
  renderServiceIndex,
  SERVICE_INDEX_PATH,
} from './catalog-documents.js';
import type { GeneratedCatalog } from './catalog-generator.js';
import { layoutPages, type LaidOutLeaf, type LaidOutPage } from './catalog-layout.js';
import { parseTicks, ticksToDate } from './catalog-time.js';
import { FLAT_CONTAINER_PATH, type FlatContainer } from './flat-container.js';
import { renderLeafBody } from './leaf-body.js';
import type { ReplicaSource, ServedDocument } from './replica-source.js';

/** How a generated catalog is served. */
export interface GeneratedSourceOptions {
  /** Leaves per page; default 550, as nuget.org. */
  pageSize: number;
  /** Split commits across pages to fill them exactly; default false (never split). */
  splitCommits: boolean;
  /** Origin of the server, e.g. `http://127.0.0.1:1234`. */
  origin: string;
  /** Origin written into the leaf URLs of pages; default `origin`. */
  leafOrigin: string;
  /** The flat container that answers under `/v3-flatcontainer/` (its state changes between requests: not cached). */
  packages?: FlatContainer;
}

interface Rendered {
  commitCount: number;
  pages: LaidOutPage[];
  leaves: Map<string, LaidOutLeaf>;
  documents: Map<string, ServedDocument>;
}

const JSON_TYPE = 'application/json';

/** A {@link ReplicaSource} for a {@link GeneratedCatalog}. */
export class GeneratedSource implements ReplicaSource {
  readonly catalogIndexPath = CATALOG_INDEX_PATH;
  private rendered: Rendered | undefined;

  constructor(
    readonly catalog: GeneratedCatalog,
    private readonly options: GeneratedSourceOptions,
  ) {}

  /** The pages as laid out now, in time order. */
  pages(): readonly LaidOutPage[] {
    return this.current().pages;
  }

  resolve(path: string): ServedDocument | undefined {
    if (path.startsWith(FLAT_CONTAINER_PATH)) return this.options.packages?.resolve(path);
    const rendered = this.current();
    const cached = rendered.documents.get(path);
    if (cached) return cached;
    const document = this.render(rendered, path);
    if (document) rendered.documents.set(path, document);
    return document;
  }

  stalePage(path: string, commitsBack: number): ServedDocument {
    const { pages } = this.current();
    const page = pages.find((p) => pagePath(p.number) === path);
    if (!page) throw new Error(`no page at ${path}`);
    if (!(Number.isInteger(commitsBack) && commitsBack >= 1))
      throw new Error(`commitsBack must be a positive integer, got ${commitsBack}`);
    // The distinct commits on the page, oldest first; the older copy ends `commitsBack` before the newest.
    const commitIndexes = [...new Set(page.entries.map((e) => this.catalog.commits.indexOf(e.commit)))];
    const end = commitIndexes[commitIndexes.length - 1 - commitsBack];
    if (end === undefined)
      throw new Error(
        `page ${path} has only ${commitIndexes.length} commit(s): no copy ${commitsBack} commit(s) older`,
      );
    const older = layoutPages(this.catalog.commits.slice(0, end + 1), this.options.pageSize, this.options.splitCommits)[
      page.number
    ];
    if (!older) throw new Error(`page ${path} did not exist ${commitsBack} commit(s) ago`);
    return this.pageDocument(older);
  }

  private current(): Rendered {
    const commitCount = this.catalog.commits.length;
    if (this.rendered?.commitCount !== commitCount) {
      const pages = layoutPages(this.catalog.commits, this.options.pageSize, this.options.splitCommits);
      const leaves = new Map<string, LaidOutLeaf>();
      for (const page of pages) for (const entry of page.entries) leaves.set(entry.leaf.path, entry);
      this.rendered = { commitCount, pages, leaves, documents: new Map() };
    }
    return this.rendered;
  }

  private render(rendered: Rendered, path: string): ServedDocument | undefined {
    const { origin, leafOrigin } = this.options;
    if (path === SERVICE_INDEX_PATH) {
      return {
        body: Buffer.from(renderServiceIndex(origin, `${origin}${CATALOG_INDEX_PATH}`)),
        contentType: JSON_TYPE,
      };
    }
    if (path === CATALOG_INDEX_PATH) {
      const newest = this.catalog.commits.at(-1);
      return {
        body: Buffer.from(renderCatalogIndex(rendered.pages, this.catalog.commits, origin)),
        contentType: JSON_TYPE,
        ...(newest ? { lastModified: ticksToDate(parseTicks(newest.timestamp)) } : {}),
      };
    }
    const page = rendered.pages.find((p) => pagePath(p.number) === path);
    if (page) return this.pageDocument(page);
    const entry = rendered.leaves.get(path);
    if (entry) {
      return {
        body: Buffer.from(renderLeafBody(entry.commit, entry.leaf, leafOrigin)),
        contentType: JSON_TYPE,
        lastModified: ticksToDate(parseTicks(entry.commit.timestamp)),
      };
    }
    return undefined;
  }

  private pageDocument(page: LaidOutPage): ServedDocument {
    return {
      body: Buffer.from(renderPage(page, this.options.origin, this.options.leafOrigin)),
      contentType: JSON_TYPE,
      lastModified: ticksToDate(parseTicks(page.newest.timestamp)),
    };
  }
}
