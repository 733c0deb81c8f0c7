/**
 * The rebuild's record line and shard hash (lambda/view/leaf-record.ts). The hash is written by hand: held to the
 * published FNV-1a 32-bit test vectors of the FNV reference (Fowler, Noll, Vo; the `test_fnv.c` vectors for FNV-1a
 * 32), which share nothing with our code, and to the spread a shard needs.
 */
import { describe, expect, it } from 'vitest';
import { commitKeyOf, leafKey } from '../../lambda/contract/keys.js';
import {
  decodeLeafRecord,
  encodeLeafRecord,
  fnv1a32,
  shardOf,
  type LeafRecord,
} from '../../lambda/view/leaf-record.js';

describe('fnv1a32', () => {
  it.each([
    ['', 0x811c9dc5],
    ['a', 0xe40c292c],
    ['b', 0xe70c2de5],
    ['c', 0xe60c2c52],
    ['foo', 0xa9f37ed7],
    ['foobar', 0xbf9cf968],
  ])('FNV-1a 32 of %j is the published value', (text, expected) => {
    expect(fnv1a32(text)).toBe(expected);
  });

  it('puts a package in one shard, the same every time, and spreads 10,000 ids over 64 shards', () => {
    const counts = new Array<number>(64).fill(0);
    for (let i = 0; i < 10_000; i++) {
      const id = `contoso.package${i}.extensions`;
      const shard = shardOf(id, 64);
      expect(shardOf(id, 64)).toBe(shard);
      counts[shard]! += 1;
    }
    // 156 a shard on average: none empty, none with twice its share.
    expect(Math.min(...counts)).toBeGreaterThan(0);
    expect(Math.max(...counts)).toBeLessThan(2 * (10_000 / 64));
  });
});

describe('leaf record lines', () => {
  const commitKey = commitKeyOf('2023-03-08T07:46:13.8311924Z');
  const usual: LeafRecord = {
    commitKey,
    commitTimeStamp: '2023-03-08T07:46:13.8311924Z',
    id: 'Newtonsoft.Json',
    version: '13.0.3',
    type: 'PackageDetails',
    quarantined: false,
    key: leafKey('m/', commitKey, 'Newtonsoft.Json', '13.0.3'),
  };

  it('writes the commit\'s timestamp and the follower\'s leaf key as "" and makes them again when read', () => {
    const unusual: LeafRecord = {
      ...usual,
      version: '13.0.4',
      commitTimeStamp: '2023-03-08T07:46:13.8311925Z',
      key: 'm/leaves/elsewhere.json',
    };
    expect(encodeLeafRecord(usual, 'm/')).toBe(`["${commitKey}","","Newtonsoft.Json","13.0.3",1,""]`);
    const line = encodeLeafRecord(unusual, 'm/');
    expect(line).toContain('"2023-03-08T07:46:13.8311925Z"');
    expect(line).toContain('"m/leaves/elsewhere.json"');
    expect(decodeLeafRecord(encodeLeafRecord(usual, 'm/'), 'm/')).toEqual(usual);
    expect(decodeLeafRecord(line, 'm/')).toEqual(unusual);
  });

  it('keeps deletes, set-aside leaves and ids no store can hold, multi-byte ids included', () => {
    const records: LeafRecord[] = [
      { ...usual, type: 'PackageDelete' },
      { ...usual, quarantined: true },
      { ...usual, id: 'Ünïcødé.日本', key: 'm/leaves/x/ü.json' },
      { ...usual, id: 'x'.repeat(300), key: 'm/leaves/~unstorable' },
    ];
    for (const record of records) expect(decodeLeafRecord(encodeLeafRecord(record, 'm/'), 'm/')).toEqual(record);
  });
});
