/**
 * The key ↔ file-name mapping of the local folder: on a case-insensitive file system upper-case letters are
 * escaped, reversibly, so keys differing only in case (commit keys) stay distinct files.
 */
import sanitize from 'sanitize-filename';
import { describe, expect, it } from 'vitest';
import { leafKey, manifestKey, quarantineKey } from '../../lambda/contract/keys.js';
import { commitKey } from '../../lambda/contract/keys.js';
import {
  escapeName,
  FileNameError,
  fileNamesOf,
  keyOfFileNames,
  MAX_NAME_BYTES,
  portableName,
  unescapeName,
  unportableName,
} from '../../lambda/stores/local-paths.js';
import { mulberry32 } from '../../testkit/prng.js';

const byBytes = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

describe('escapeName / unescapeName', () => {
  it('escapes upper-case letters, lowers the hex of %XX, doubles ^ and marks any other %', () => {
    const cases: [string, string][] = [
      ['001e9fzMHc3F', '001e9fz^m^hc3^f'],
      ['001e9fzmHc3F', '001e9fzm^hc3^f'],
      ['caf%C3%A9', 'caf%c3%a9'],
      ['%2E%2E', '%2e%2e'],
      ['a^b', 'a^^b'],
      ['%2e', '^%2e'],
      ['100%', '100^%'],
      ['%4G', '^%4^g'],
      ['x.tmp-y.json', 'x.tmp-y.json'],
      ['commits', 'commits'],
    ];
    for (const [segment, name] of cases) {
      expect(escapeName(segment), segment).toBe(name);
      expect(unescapeName(name), name).toBe(segment);
    }
  });

  it('reads back only names it writes: others are not keys', () => {
    for (const name of ['.DS_Store', 'Thumbs.db', '^', 'a^', '^1', '^A', '%4', '%4g', '%2E', '^%41', '^%2^e']) {
      expect(unescapeName(name), name).toBeUndefined();
    }
  });

  it('is reversible and keeps 2,000 random segments distinct under case folding', () => {
    const prng = mulberry32(10);
    const alphabet = 'aAbBzZ09%^._-EF';
    const segments = new Set<string>();
    while (segments.size < 2_000) {
      segments.add(Array.from({ length: prng.int(1, 8) }, () => prng.pick([...alphabet])).join(''));
    }
    const folded = new Set<string>();
    for (const segment of segments) {
      const name = escapeName(segment);
      expect(name, segment).not.toMatch(/[A-Z]/);
      expect(unescapeName(name), segment).toBe(segment);
      folded.add(name.toLowerCase());
    }
    expect(folded.size).toBe(segments.size);
  });
});

describe('portableName / unportableName: names Windows can hold', () => {
  /** A second implementation of Windows' rules, sharing none of ours: sanitize-filename leaves a valid name as it is. */
  const windowsTakes = (name: string): boolean => sanitize(name) === name && name !== '';

  it('marks device names (alone or with an extension, in any case of the key) and a trailing dot or space', () => {
    const cases: [string, string][] = [
      ['con', 'con^_'],
      ['con.json', 'con^_.json'],
      ['nul.txt', 'nul^_.txt'],
      ['aux', 'aux^_'],
      ['prn.x.y', 'prn^_.x.y'],
      ['com1', 'com1^_'],
      ['com9.core.json', 'com9^_.core.json'],
      ['lpt1', 'lpt1^_'],
      ['lpt9.json', 'lpt9^_.json'],
      ['CON', '^c^o^n'],
      ['Nul.Txt', '^nul.^txt'],
      ['foo.', 'foo.^_'],
      ['foo ', 'foo ^_'],
      ['con.', 'con^_.^_'],
      ['com10', 'com10'],
      ['console', 'console'],
      ['con-x', 'con-x'],
      ['1.0.0.json', '1.0.0.json'],
      ['001e9fzMHc3F', '001e9fz^m^hc3^f'],
    ];
    for (const [segment, name] of cases) {
      expect(portableName(segment), segment).toBe(name);
      expect(unportableName(name), name).toBe(segment);
      expect(windowsTakes(name), name).toBe(true);
    }
    // What an escaped folder of an earlier version named them, Windows refuses (the second implementation agrees).
    for (const segment of ['con', 'con.json', 'nul.txt', 'com1', 'lpt9.json', 'foo.'])
      expect(windowsTakes(escapeName(segment)), segment).toBe(false);
  });

  it('reads back only names it writes: an unmarked device name, a mark out of place', () => {
    for (const name of ['con', 'con.json', 'ab^_', '^_con', 'foo.', 'con^_^_', 'x^_.json', '^'])
      expect(unportableName(name), name).toBeUndefined();
  });

  it('2,000 random segments of device words, dots and spaces: every name one Windows takes, reversible, distinct under case folding', () => {
    const prng = mulberry32(12);
    const parts = [
      'con',
      'CON',
      'nul',
      'Aux',
      'prn',
      'com1',
      'COM9',
      'lpt3',
      'com',
      'x',
      '.',
      ' ',
      'json',
      '^',
      '%2E',
      '%',
      '_',
      '-',
      '0',
    ];
    const segments = new Set<string>();
    while (segments.size < 2_000) segments.add(Array.from({ length: prng.int(1, 4) }, () => prng.pick(parts)).join(''));
    const folded = new Set<string>();
    for (const segment of segments) {
      const name = portableName(segment);
      expect(windowsTakes(name), `${JSON.stringify(segment)} → ${JSON.stringify(name)}`).toBe(true);
      expect(name).not.toMatch(/[A-Z]/);
      expect(unportableName(name), segment).toBe(segment);
      folded.add(name.toLowerCase());
    }
    expect(folded.size).toBe(segments.size);
  });
});

describe('fileNamesOf / keyOfFileNames', () => {
  it('leaves keys as they are in exact mode', () => {
    const key = 'Mirror/leaves/001e9fzMHc3F/x.tmp-y/1.0.0.json';
    expect(fileNamesOf(key, 'exact')).toEqual(key.split('/'));
    expect(keyOfFileNames(key.split('/'), 'exact')).toBe(key);
  });

  it('keeps the byte order of the keys catalog-sync writes', () => {
    const prng = mulberry32(11);
    const keys: string[] = [];
    for (let i = 0; i < 500; i++) {
      const ticks = 636_450_000_000_000_000n + BigInt(prng.int(0, 2 ** 31)) * 10_000n + BigInt(prng.int(0, 9_999));
      const commit = commitKey(ticks);
      const id = prng.pick(['Newtonsoft.Json', 'café', 'a%b', '..', 'x.tmp-y', 'Zz_9', '中文']);
      const version = prng.pick(['1.0.0', '2.0.0-RC.1+sha', '1.0.0-ä']);
      const prefix = prng.pick(['', 'Mirror/', 'mirror/', 'a-b_C.d/']);
      keys.push(prng.pick([leafKey, quarantineKey])(prefix, commit, id, version), manifestKey(prefix, commit));
    }
    for (const mode of ['escaped', 'portable'] as const) {
      const paths = new Map(keys.map((key) => [fileNamesOf(key, mode).join('/'), key]));
      const pathOrder = [...paths.keys()].sort(byBytes).map((path) => paths.get(path));
      expect(pathOrder).toEqual([...new Set(keys)].sort(byBytes));
      for (const [path, key] of paths) expect(keyOfFileNames(path.split('/'), mode)).toBe(key);
    }
  });

  it('never lengthens an id or version segment; a prefix segment that would pass 255 bytes is an error naming the key', () => {
    const id = '中'.repeat(28); // 28 × %E4%B8%AD = 252 bytes, all of it upper-case hex
    const key = leafKey('', '001e9fzMHc3F', id, '1.0.0');
    expect(Buffer.byteLength(fileNamesOf(key, 'escaped')[2]!)).toBe(Buffer.byteLength(key.split('/')[2]!));

    const prefixKey = `${'M'.repeat(200)}/commits/001e9fzMHc3F.json`;
    expect(() => fileNamesOf(prefixKey, 'escaped')).toThrow(FileNameError);
    expect(() => fileNamesOf(prefixKey, 'escaped')).toThrow(
      `key ${JSON.stringify(prefixKey)}: its segment "${'M'.repeat(200)}" becomes a 400-byte file name`,
    );
    // A segment too long even as it is fails as it would in exact mode, on the file system.
    expect(fileNamesOf(`${'M'.repeat(MAX_NAME_BYTES + 1)}/x`, 'escaped')[0]).toHaveLength(2 * (MAX_NAME_BYTES + 1));
  });
});
