/**
 * A leaf's fields against the page item that pointed at it, with no zod: the second half of `parseLeaf`, shared by
 * the synchronous parser (leaf-schema.ts) and the client's reader (read-documents.ts), which loads zod only for a
 * leaf the fast path is not sure of.
 */
import type { Leaf, PageItem } from './documents.js';
import type { LeafFields } from './fast-path.js';
import { Problems, quote } from './json.js';
import { comparableVersion } from '../contract/identity.js';

function differs(problems: Problems, field: string, leaf: string, item: string): void {
  problems.add([field], `the leaf has ${quote(leaf)} but the page item has ${quote(item)}`);
}

/**
 * The validated leaf, once it matches `expected`: same type, same commit (id, and timestamp to the tick), same
 * package id (ignoring case) and the same version once normalized (a delete may carry a non-normalized one such as
 * `1.0` for `1.0.0`).
 *
 * @throws {@link InvalidDocumentError} naming every field that differs.
 */
export function leafFrom(document: Record<string, unknown>, fields: LeafFields, url: string, expected: PageItem): Leaf {
  const problems = new Problems();
  const { type, commitId, id, version } = fields;
  if (type !== expected.type) differs(problems, '@type', type, expected.type);
  if (commitId !== expected.commitId) differs(problems, 'catalog:commitId', commitId, expected.commitId);
  if (fields.commitTicks !== expected.commitTicks) {
    differs(problems, 'catalog:commitTimeStamp', fields.commitTimeStamp, expected.commitTimeStamp);
  }
  // Equal strings first: the usual case costs no lowercasing or version normalizing.
  if (id !== expected.id && id.toLowerCase() !== expected.id.toLowerCase()) differs(problems, 'id', id, expected.id);
  if (version !== expected.version && comparableVersion(version) !== comparableVersion(expected.version)) {
    differs(problems, 'version', version, expected.version);
  }
  problems.throwIfAny(url);

  return {
    types: fields.types,
    type,
    id,
    version,
    commitId,
    commitTimeStamp: fields.commitTimeStamp,
    commitTicks: fields.commitTicks,
    document,
  };
}
