/**
 * The NuGetGallery fixture leaves (`test/fixtures/NuGetGallery/*.json`: leaves as nuget.org's own catalog writer
 * produced them, some beginning with a UTF-8 byte-order mark) as a catalog the replica serves: they all belong to
 * one commit (one commit id and timestamp), so they are that commit's leaves, each served byte for byte as its file
 * holds it, the byte-order mark included. Their URLs inside the bodies stay `http://example/…`: the follower checks
 * a leaf's type, commit, id and version against its page item, never its `@id`.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { GeneratedCatalog } from './catalog-generator.js';
import type { GeneratedLeaf } from './generated-commit.js';
import { BOM } from './leaf-body.js';

/** One fixture leaf file: its name, its exact bytes, and the leaf it is in the catalog. */
export interface FixtureLeaf {
  readonly file: string;
  readonly bytes: Buffer;
  readonly bom: boolean;
  readonly leaf: GeneratedLeaf;
}

/** Every `*.json` leaf directly in `dir` (not its subfolders), with the one-commit catalog they make. */
export function fixtureLeafCatalog(dir: string): { catalog: GeneratedCatalog; leaves: FixtureLeaf[] } {
  const leaves: FixtureLeaf[] = [];
  let commit: { commitId: string; timestamp: string } | undefined;
  for (const file of readdirSync(dir)
    .filter((name) => name.endsWith('.json'))
    .sort()) {
    const bytes = readFileSync(join(dir, file));
    const text = bytes.toString('utf8');
    if (!Buffer.from(text, 'utf8').equals(bytes))
      throw new Error(`${file}: not valid UTF-8, cannot be served byte for byte from text`);
    const bom = text.startsWith(BOM);
    const json = bom ? text.slice(BOM.length) : text;
    const document = JSON.parse(json) as Record<string, unknown>;
    const types = [document['@type']].flat();
    const type = types.includes('PackageDelete') ? 'PackageDelete' : 'PackageDetails';
    const found = {
      commitId: String(document['catalog:commitId']),
      timestamp: String(document['catalog:commitTimeStamp']),
    };
    commit ??= found;
    if (found.commitId !== commit.commitId || found.timestamp !== commit.timestamp)
      throw new Error(
        `${file}: commit ${found.commitId} ${found.timestamp}, not ${commit.commitId} ${commit.timestamp} as the others`,
      );
    const leaf: GeneratedLeaf = {
      id: String(document['id']),
      version: String(document['version']),
      type,
      path: new URL(String(document['@id'])).pathname,
      body: json,
      ...(bom ? { bom } : {}),
    };
    leaves.push({ file, bytes, bom, leaf });
  }
  if (commit === undefined) throw new Error(`no fixture leaves in ${dir}`);
  return { catalog: { commits: [{ ...commit, leaves: leaves.map((fixture) => fixture.leaf) }] }, leaves };
}
