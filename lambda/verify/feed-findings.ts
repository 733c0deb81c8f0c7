/**
 * What `verify --feed` reports: one finding per drifted package version (or feed document), named by id and
 * version, with what the feed holds and what the source (the mirror's latest view and stored leaves) says.
 */

/** The leaf fields a registration's `catalogEntry` shows, compared with the source's. */
export type FeedEntryField = 'listed' | 'deprecation' | 'vulnerabilities' | 'packageContent';

/** One thing the feed shows otherwise than the source, or (waiting, quarantined) a version the feed knows it lacks. */
export type FeedFinding =
  /** The source lists the version; the feed's flat container index or its registration does not. */
  | { readonly kind: 'version-missing'; readonly id: string; readonly version: string; readonly where: string }
  /** The feed offers a version the source does not list (deleted, never there, or left out by the id filter). */
  | {
      readonly kind: 'version-extra';
      readonly id: string;
      readonly version: string;
      readonly where: string;
      readonly reason: string;
    }
  /** The registration's `catalogEntry` shows a field otherwise than the version's latest leaf. */
  | {
      readonly kind: 'version-differs';
      readonly id: string;
      readonly version: string;
      readonly field: FeedEntryField;
      readonly feed: unknown;
      readonly source: unknown;
    }
  /** An index names the version, but its `.nupkg` is not stored. */
  | { readonly kind: 'package-missing'; readonly id: string; readonly version: string; readonly key: string }
  /** The stored `.nupkg` is not the bytes the leaf's `packageHash` (SHA-512) and `packageSize` describe. */
  | {
      readonly kind: 'package-differs';
      readonly id: string;
      readonly version: string;
      readonly key: string;
      readonly expected: { readonly hash: string; readonly size: number };
      readonly actual: { readonly hash: string; readonly size: number };
    }
  /** The package's entry on its vulnerability page is not the one its versions' leaves give. */
  | {
      readonly kind: 'vulnerabilities-differ';
      readonly id: string;
      readonly key: string;
      readonly feed: unknown;
      readonly source: unknown;
    }
  /** A feed-wide document (the service index) is not the one the feed's base URL gives. */
  | { readonly kind: 'document-differs'; readonly key: string; readonly reason: string }
  /** Not drift: the source did not serve the package yet; the feed tries again (feed-state/waiting/). */
  | { readonly kind: 'waiting'; readonly id: string; readonly version: string; readonly reason: string }
  /** Not drift: the feed set the version aside (feed-state/quarantine/), or the mirror set its leaf aside. */
  | { readonly kind: 'quarantined'; readonly id: string; readonly version: string; readonly reason: string };

/** Findings that are not drift: what the feed knows it lacks, and why. */
export function isDrift(finding: FeedFinding): boolean {
  return finding.kind !== 'waiting' && finding.kind !== 'quarantined';
}

/** One line per finding, for a person. */
export function describeFeedFinding(finding: FeedFinding): string {
  switch (finding.kind) {
    case 'version-missing':
      return `version missing  ${finding.id} ${finding.version}: the source lists it, ${finding.where} does not`;
    case 'version-extra':
      return `version extra    ${finding.id} ${finding.version}: ${finding.where} lists it, but ${finding.reason}`;
    case 'version-differs':
      return `version differs  ${finding.id} ${finding.version}: ${finding.field} is ${show(finding.feed)} in the feed, ${show(finding.source)} in the source`;
    case 'package-missing':
      return `package missing  ${finding.id} ${finding.version}: ${finding.key} is not stored`;
    case 'package-differs':
      return `package differs  ${finding.id} ${finding.version}: ${finding.key} has ${finding.actual.size} bytes, SHA-512 ${finding.actual.hash}; the leaf says ${finding.expected.size} bytes, ${finding.expected.hash}`;
    case 'vulnerabilities-differ':
      return `vulnerabilities  ${finding.id}: ${finding.key} gives ${show(finding.feed)}, the source ${show(finding.source)}`;
    case 'document-differs':
      return `document differs ${finding.key}: ${finding.reason}`;
    case 'waiting':
      return `waiting          ${finding.id} ${finding.version}: not served by the source yet (${finding.reason}); tried again by the feed`;
    case 'quarantined':
      return `quarantined      ${finding.id} ${finding.version}: ${finding.reason}`;
  }
}

function show(value: unknown): string {
  return value === undefined ? 'absent' : JSON.stringify(value);
}
