/**
 * The latest view's staleness after a widening `--refilter` (issue 32), as pure steps: the filter history read from
 * `filter.json` (its widening changes and the ids each added), what `view.json` records when the view looks at it,
 * the line every face prints, and the merge a rebuild makes over an index upkeep moved past the commits it read.
 */
import { describe, expect, it } from 'vitest';
import { addedByChange, parseIdFilterRecord, wideningsOf } from '../../lambda/contract/filter-history.js';
import { formatTimestamp, parseTimestamp } from '../../lambda/contract/time.js';
import { parseViewState, staleLine, withRefills, type ViewState } from '../../lambda/contract/view.js';
import type { PackageIndex, VersionEntry } from '../../lambda/view/package-index.js';
import { mergeNewer, writeOverNewer } from '../../lambda/view/stale-rebuild.js';
import { addedBy, lookAtFilterHistory } from '../../lambda/view/staleness.js';
import type { ViewDocuments } from '../../lambda/view/view-documents.js';

const T1 = '2024-01-01T00:00:00.0000000Z';
const T2 = '2024-02-01T00:00:00.0000000Z';
const NOW = '2026-01-01T00:00:00.000Z';

/** `filter.json` after `a*` → `a*, c*` (widening, refilled or not) → `c*` (narrowing). */
function record(refilled: boolean) {
  return parseIdFilterRecord({
    include: ['c*'],
    exclude: [],
    history: [
      { include: ['a*'], exclude: [], until: T1, ...(refilled ? { refilledAt: NOW, refilledBy: 'B1' } : {}) },
      { include: ['a*', 'c*'], exclude: [], until: T2 },
    ],
  });
}

describe('the filter history', () => {
  it('finds the widening changes, not the narrowing ones, each with the filter after it and its refill', () => {
    expect(wideningsOf(record(false))).toEqual([
      {
        change: 0,
        until: parseTimestamp(T1),
        previous: { include: ['a*'], exclude: [] },
        next: { include: ['a*', 'c*'], exclude: [] },
      },
    ]);
    expect(wideningsOf(record(true))[0]).toMatchObject({ change: 0, refilledAt: NOW });
    // From no filter nothing widens; to no filter from one everything may.
    expect(wideningsOf(parseIdFilterRecord({ include: ['a*'], exclude: [], history: [{ until: T1 }] }))).toEqual([]);
    expect(wideningsOf(parseIdFilterRecord({ history: [{ include: ['a*'], exclude: [], until: T1 }] }))).toHaveLength(
      1,
    );
  });

  it('says which ids a change added: kept by the filter after it, not by the one before', () => {
    const [change] = wideningsOf(record(false));
    expect(addedByChange(change!, 'contoso.lib')).toBe(true);
    expect(addedByChange(change!, 'adventureworks.data')).toBe(false);
    expect(addedByChange(change!, 'fabrikam.http')).toBe(false);
  });
});

describe('what view.json records when the view looks at the history', () => {
  it('a widening new to a view that has read commits is stale, whether refilled or not; a narrowing is not', () => {
    for (const refilled of [false, true]) {
      const state = lookAtFilterHistory(undefined, record(refilled), true, NOW);
      expect(state).toEqual({
        historySeen: 2,
        stale: [
          {
            change: 0,
            until: T1,
            previous: { include: ['a*'], exclude: [] },
            next: { include: ['a*', 'c*'], exclude: [] },
            since: NOW,
          },
        ],
      });
    }
  });

  it('a view that has read nothing yet is stale only for a change not refilled yet (it will read the rewritten manifests)', () => {
    expect(lookAtFilterHistory(undefined, record(true), false, NOW).stale).toEqual([]);
    expect(lookAtFilterHistory(undefined, record(false), false, NOW).stale).toHaveLength(1);
  });

  it('a change already looked at is not recorded again; a stale one stays until a rebuild clears it', () => {
    const once = lookAtFilterHistory(undefined, record(false), true, NOW);
    expect(lookAtFilterHistory(once, record(true), true, '2027-01-01T00:00:00.000Z')).toEqual(once);
    const cleared: ViewState = { historySeen: 2, stale: [] };
    expect(lookAtFilterHistory(cleared, record(true), true, NOW)).toEqual(cleared);
  });

  it('reads back what it wrote; anything else is no state (the view then looks at every change)', () => {
    const state = lookAtFilterHistory(undefined, record(false), true, NOW);
    expect(parseViewState(JSON.parse(JSON.stringify(state)))).toEqual(state);
    for (const bad of [undefined, null, 'x', { stale: [] }, { historySeen: 1 }])
      expect(parseViewState(bad)).toBe(undefined);
  });

  it('says what is stale and what to run, before and after the refill', () => {
    const state = lookAtFilterHistory(undefined, record(false), true, NOW);
    expect(staleLine('view-latest', withRefills(state, record(false))[0]!)).toBe(
      `view view-latest: STALE since ${NOW}: packages kept by include a*, c* but not by include a* lack their versions up to ${T1} (id filter change 0, --refilter); store them first with the refill backfill --refilter printed (catalog-sync backfill … --cursor-name <cursor>-refill --until ${T1} …), then run \`catalog-sync view --rebuild --added\``,
    );
    expect(staleLine('view-latest', withRefills(state, record(true))[0]!)).toMatch(
      new RegExp(`; their refill finished at ${NOW}: run \`catalog-sync view --rebuild --added\`$`),
    );
    expect(addedBy(state.stale)('contoso.lib')).toBe(true);
    expect(addedBy(state.stale)('adventureworks.data')).toBe(false);
  });
});

const entry = (version: string, commitKey: string, type: 'details' | 'delete' = 'details'): VersionEntry => ({
  version,
  type,
  leaf: `leaves/${commitKey}/contoso.lib/${version}.json`,
  commitKey,
  commitTimeStamp: formatTimestamp(BigInt(commitKey.length)),
  ...(type === 'details' ? { listed: true } : {}),
});
const index = (id: string, commitKey: string, versions: VersionEntry[]): PackageIndex => ({
  id,
  commitKey,
  commitTimeStamp: formatTimestamp(BigInt(commitKey.length)),
  versions,
});

describe("a rebuild's index over a newer one upkeep wrote on the incomplete index", () => {
  // Rebuilt up to commit "c5": 1.0.0 (c1) and 2.0.0 (c3), which the stale index lacked. Upkeep meanwhile wrote "c7",
  // on its stale index (2.0.0 only, from c3), deleting 2.0.0 and adding 3.0.0.
  const rebuilt = index('Contoso.Lib', 'c5', [entry('1.0.0', 'c1'), entry('2.0.0', 'c3')]);
  const newer = index('contoso.lib', 'c7', [entry('2.0.0', 'c7', 'delete'), entry('3.0.0', 'c6')]);
  const merged = index('contoso.lib', 'c7', [
    entry('1.0.0', 'c1'),
    entry('2.0.0', 'c7', 'delete'),
    entry('3.0.0', 'c6'),
  ]);

  it('keeps the later commits entries and the rebuilt ones before them, the id and commit of the newer one', () => {
    expect(mergeNewer(rebuilt, newer, 'c5')).toEqual(merged);
    // Over an index that was whole: the same index.
    expect(mergeNewer(rebuilt, merged, 'c5')).toEqual(merged);
  });

  it('writes the merge with a compare-and-swap, and nothing when there is nothing newer or nothing to change', async () => {
    const store = new Map<string, { bytes: Buffer; tag: string }>();
    let tags = 0;
    const documents: ViewDocuments = {
      where: 'memory',
      read: async (key) => store.get(key),
      writeIf: async (key, bytes, expected) => {
        if (store.get(key)?.tag !== expected) return false;
        store.set(key, { bytes, tag: String(++tags) });
        return true;
      },
    };
    const key = 'packages/contoso.lib/index.json';
    store.set(key, { bytes: Buffer.from(JSON.stringify(newer)), tag: '0' });
    expect(await writeOverNewer(documents, key, rebuilt, 'c5')).toBe('written');
    expect(JSON.parse(store.get(key)!.bytes.toString('utf8'))).toEqual(merged);
    expect(await writeOverNewer(documents, key, rebuilt, 'c5')).toBe('current');
    expect(await writeOverNewer(documents, key, rebuilt, 'c7')).toBe('current');
    expect(tags).toBe(1);
  });
});
