/**
 * The synchronous parsers of the catalog's documents, for a library or a test that has a body in hand: each takes the
 * raw body and the URL it came from and returns a typed, validated object, or throws `InvalidDocumentError`
 * naming the URL, the JSON path and the problem (see lambda/catalog/index.ts).
 *
 * Importing this loads zod. The catalog client does not: it reads with `readServiceIndex`, `readCatalogIndex`,
 * `readPage` and `readLeaf` (the catalog's face), which give the same results and errors and load zod only for a
 * document the fast paths are not sure of. That is why these are not on the catalog's face: a module imported from
 * there is loaded by every command, and zod is a fifth of a command's start-up.
 */
export { parseServiceIndex, parseSource } from '../service-index.js';
export { parseCatalogIndex } from '../index-schema.js';
export { parseCatalogPage } from '../page-schema.js';
export { parseLeaf } from '../leaf-schema.js';
