/**
 * A tiny hand-written static feed (a service index, a flat container holding the test kit's generated `.nupkg` files,
 * and vulnerability data) that the interop suite restores from a server on loopback: the test kit's static server
 * (harness-smoke.test.ts) or `catalog-sync serve` (serve-smoke.test.ts).
 */
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { NupkgSpec } from '../../testkit/nupkg.js';

/** The feed's packages: an app depending on a library, and a SemVer 2.0.0 version of the library. */
export const PACKAGES: readonly NupkgSpec[] = [
  { id: 'Smoke.App', version: '1.0.0', dependencies: [{ id: 'Smoke.Lib', range: '[1.0.0, )' }] },
  { id: 'Smoke.Lib', version: '1.0.0' },
  // SemVer 2.0.0: the flat container names it without its build metadata.
  { id: 'Smoke.Lib', version: '2.0.0-Beta.1+sha.abc123' },
];

/** A package's SHA512 as NuGet records it (base64). */
export const sha512 = (bytes: Buffer): string => createHash('sha512').update(bytes).digest('base64');
/** The flat container's spelling of a version of these packages: no build metadata, lowercased. */
export const flatVersion = (version: string): string => version.split('+')[0]!.toLowerCase();

/** The one advisory of the feed: Smoke.Lib 1.0.0, high severity (2). */
export const ADVISORY = { url: 'https://example.com/advisories/SMOKE-0001', severity: 2, versions: '[1.0.0, 1.0.0]' };

/** Writes the feed for `baseUrl` into `dir` (again, over an older one): absolute URLs only, as NuGet requires. */
export function writeFeed(dir: string, baseUrl: string, packages: ReadonlyMap<NupkgSpec, Buffer>): void {
  writeFileSync(
    join(dir, 'index.json'),
    JSON.stringify({
      version: '3.0.0',
      resources: [
        { '@id': `${baseUrl}flat/`, '@type': 'PackageBaseAddress/3.0.0' },
        { '@id': `${baseUrl}vulnerabilities/index.json`, '@type': 'VulnerabilityInfo/6.7.0' },
      ],
    }),
  );
  mkdirSync(join(dir, 'vulnerabilities'), { recursive: true });
  writeFileSync(
    join(dir, 'vulnerabilities/index.json'),
    JSON.stringify([
      { '@name': 'base', '@id': `${baseUrl}vulnerabilities/base.json`, '@updated': '2026-01-01T00:00:00Z' },
    ]),
  );
  writeFileSync(join(dir, 'vulnerabilities/base.json'), JSON.stringify({ 'smoke.lib': [ADVISORY] }));
  const versions = new Map<string, string[]>();
  for (const [spec, bytes] of packages) {
    const id = spec.id.toLowerCase();
    const version = flatVersion(spec.version);
    mkdirSync(join(dir, 'flat', id, version), { recursive: true });
    writeFileSync(join(dir, 'flat', id, version, `${id}.${version}.nupkg`), bytes);
    versions.set(id, [...(versions.get(id) ?? []), version]);
  }
  for (const [id, list] of versions)
    writeFileSync(join(dir, 'flat', id, 'index.json'), JSON.stringify({ versions: list }));
}
