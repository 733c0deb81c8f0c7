import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import {
  encodeKeySegment,
  idSegment,
  KeySegmentError,
  normalizeVersion,
  versionSegment,
} from '../../lambda/contract/identity.js';
import { leafKey, manifestKey, quarantineKey } from '../../lambda/contract/keys.js';
import { CommitKeyError } from '../../lambda/contract/keys.js';

const COMMIT = '001e9fzMHc3F';

describe('normalizeVersion', () => {
  it.each([
    ['01.0', '1.0.0'],
    ['1.0.0.0', '1.0.0'],
    ['1.0.0.1', '1.0.0.1'],
    ['3.1.0-RC.1+sha.5', '3.1.0-rc.1'],
    ['1.0', '1.0.0'],
    ['1.0.0+sha.5', '1.0.0'],
    ['2.0.0-Beta.01', '2.0.0-beta.01'],
    ['1', '1.0.0'],
    ['1.2.3', '1.2.3'],
    ['001.002.003.000', '1.2.3'],
    ['1.0.0.00', '1.0.0'],
    ['1.0.0.0-beta', '1.0.0-beta'],
    ['0.0.4-preview', '0.0.4-preview'],
    ['1.0.0-preview1-00258', '1.0.0-preview1-00258'],
    ['9.0.2-beta1', '9.0.2-beta1'],
    ['10.20.30.40', '10.20.30.40'],
    ['99999999999999999999.0', '99999999999999999999.0.0'],
  ])('%s → %s', (input, expected) => {
    expect(normalizeVersion(input)).toBe(expected);
  });

  it('removes SemVer 2.0.0 build metadata, whatever it contains', () => {
    expect(normalizeVersion('1.0.0-alpha.1+build.2')).toBe('1.0.0-alpha.1');
    expect(normalizeVersion('1.0.0+Build.ABC+more')).toBe('1.0.0');
    expect(normalizeVersion('1.0.0-alpha+001')).toBe('1.0.0-alpha');
    expect(normalizeVersion('1.0.0+')).toBe('1.0.0');
    // Versions that differ only in build metadata are one NuGet identity, so one key.
    expect(versionSegment('1.0.0+a')).toBe(versionSegment('1.0.0+b'));
  });

  it('normalizes a delete’s non-normalized version to the same key as its details', () => {
    expect(normalizeVersion('1.0')).toBe('1.0.0');
    expect(leafKey('', COMMIT, 'Pkg', '1.0')).toBe(leafKey('', COMMIT, 'pkg', '1.0.0'));
  });

  it('falls back to lowercasing without build metadata for non-numeric release parts', () => {
    expect(normalizeVersion('1.0.0.0.0')).toBe('1.0.0.0.0');
    expect(normalizeVersion('V1.0+X')).toBe('v1.0');
    expect(normalizeVersion('1.A.0')).toBe('1.a.0');
    expect(normalizeVersion('-Beta')).toBe('-beta');
    expect(normalizeVersion('\ufeff1.0')).toBe('\ufeff1.0');
    expect(normalizeVersion('1..0')).toBe('1..0');
  });

  it('trims white space as NuGet does, around the version and its numbers', () => {
    expect(normalizeVersion(' 1.0')).toBe('1.0.0');
    expect(normalizeVersion('1 . 0\t')).toBe('1.0.0');
  });

  it('uses locale-independent lowercasing', () => {
    expect(normalizeVersion('1.0.0-TITLE')).toBe('1.0.0-title');
    expect(normalizeVersion('1.0.0-İ')).toBe('1.0.0-i\u0307');
  });

  it.each(['', '+build', '+'])('throws KeySegmentError for %j', (v) => {
    expect(() => normalizeVersion(v)).toThrow(KeySegmentError);
  });
});

describe('encodeKeySegment', () => {
  it.each([
    ['newtonsoft.json', 'newtonsoft.json'],
    ['a_b-c.d', 'a_b-c.d'],
    ['a/b', 'a%2Fb'],
    ['é', '%C3%A9'],
    [' ', '%20'],
    ['%', '%25'],
    ['\u0000', '%00'],
    ['\u001f', '%1F'],
    ['\\', '%5C'],
    ['A', '%41'],
    ['+', '%2B'],
    ['..', '%2E%2E'],
    ['.', '%2E'],
    ['...', '%2E%2E%2E'],
    ['a..b', 'a..b'],
    ['.a', '.a'],
    ['a.', 'a.'],
    ['€', '%E2%82%AC'],
    ['😀', '%F0%9F%98%80'],
    ['\ud800', '%ED%A0%80'],
    ['\ufffd', '%EF%BF%BD'],
  ])('%j → %s', (input, expected) => {
    expect(encodeKeySegment(input)).toBe(expected);
  });

  it('throws KeySegmentError for the empty string', () => {
    expect(() => encodeKeySegment('')).toThrow(KeySegmentError);
    expect(() => idSegment('')).toThrow(KeySegmentError);
  });
});

describe('segments', () => {
  it('lowercases ids', () => {
    expect(idSegment('Newtonsoft.Json')).toBe('newtonsoft.json');
    expect(idSegment('Util.Biz.Payments')).toBe('util.biz.payments');
  });

  it('normalizes and encodes versions', () => {
    expect(versionSegment('3.1.0-RC.1+sha.5')).toBe('3.1.0-rc.1');
    expect(versionSegment('01.0')).toBe('1.0.0');
    expect(versionSegment('1.0.0-a/b')).toBe('1.0.0-a%2Fb');
  });
});

describe('keys', () => {
  it('builds leaf, manifest and quarantine keys', () => {
    expect(leafKey('', COMMIT, 'Newtonsoft.Json', '9.0.2-Beta1')).toBe(
      'leaves/001e9fzMHc3F/newtonsoft.json/9.0.2-beta1.json',
    );
    expect(manifestKey('', COMMIT)).toBe('commits/001e9fzMHc3F.json');
    expect(quarantineKey('', COMMIT, 'Newtonsoft.Json', '9.0.2-Beta1')).toBe(
      'quarantine/001e9fzMHc3F/newtonsoft.json/9.0.2-beta1.json',
    );
  });

  it('puts the key prefix first', () => {
    expect(leafKey('mirror/', COMMIT, 'Util.Biz.Payments', '0.0.4-preview')).toBe(
      'mirror/leaves/001e9fzMHc3F/util.biz.payments/0.0.4-preview.json',
    );
    expect(manifestKey('mirror/', COMMIT)).toBe('mirror/commits/001e9fzMHc3F.json');
    expect(quarantineKey('mirror/', COMMIT, 'A/B', '1.0.0.0+x')).toBe(
      'mirror/quarantine/001e9fzMHc3F/a%2Fb/1.0.0.json',
    );
  });

  it('keeps a hostile id inside its folder', () => {
    expect(leafKey('', COMMIT, '..', '1.0')).toBe('leaves/001e9fzMHc3F/%2E%2E/1.0.0.json');
    expect(leafKey('', COMMIT, '../../etc', '1.0')).toBe('leaves/001e9fzMHc3F/..%2F..%2Fetc/1.0.0.json');
  });

  it('rejects a malformed commit key', () => {
    for (const bad of ['', '001e9fzM', '001e9fzM/c3F', '001e9fzMfxSK']) {
      expect(() => leafKey('', bad, 'a', '1.0')).toThrow(CommitKeyError);
      expect(() => manifestKey('', bad)).toThrow(CommitKeyError);
      expect(() => quarantineKey('', bad, 'a', '1.0')).toThrow(CommitKeyError);
    }
  });

  it('rejects an empty id or version', () => {
    expect(() => leafKey('', COMMIT, '', '1.0')).toThrow(KeySegmentError);
    expect(() => leafKey('', COMMIT, 'a', '')).toThrow(KeySegmentError);
    expect(() => quarantineKey('', COMMIT, 'a', '+x')).toThrow(KeySegmentError);
  });
});

describe('properties', () => {
  // 'binary' strings cover every UTF-16 code unit, lone surrogates included.
  const anyString = fc.string({ unit: 'binary', minLength: 1, maxLength: 12 });
  const mixed = fc.oneof(
    anyString,
    fc.string({ unit: fc.constantFrom('.', '%', '/', 'a', 'A', '2', 'E', 'é', ' '), minLength: 1, maxLength: 8 }),
  );

  it('encoded segments contain only a-z 0-9 . _ - % A-F, never a slash, never only dots', () => {
    fc.assert(
      fc.property(mixed, (s) => {
        const encoded = encodeKeySegment(s);
        expect(encoded).toMatch(/^[a-z0-9._%A-F-]+$/);
        expect(encoded).not.toContain('/');
        expect(encoded).not.toMatch(/^\.+$/);
      }),
      { numRuns: 1000 },
    );
  });

  it('is injective', () => {
    fc.assert(
      fc.property(mixed, mixed, (a, b) => {
        fc.pre(a !== b);
        expect(encodeKeySegment(a)).not.toBe(encodeKeySegment(b));
      }),
      { numRuns: 2000 },
    );
  });

  it('percent-decoding gives well-formed input back', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', minLength: 1, maxLength: 12 }), (s) => {
        expect(decodeURIComponent(encodeKeySegment(s))).toBe(s);
      }),
      { numRuns: 1000 },
    );
  });

  it('id and version segments are stable under case and build metadata', () => {
    fc.assert(
      fc.property(
        fc.array(fc.nat({ max: 1000 }), { minLength: 1, maxLength: 4 }),
        fc.option(fc.stringMatching(/^[A-Za-z0-9]{1,6}(\.[A-Za-z0-9]{1,6}){0,2}$/), { nil: undefined }),
        fc.stringMatching(/^[A-Za-z0-9.]{0,8}$/),
        (parts, label, build) => {
          const version = parts.join('.') + (label === undefined ? '' : `-${label}`);
          const upper = `${version.toUpperCase()}+${build}`;
          expect(versionSegment(upper)).toBe(versionSegment(version));
          expect(normalizeVersion(normalizeVersion(version))).toBe(normalizeVersion(version));
        },
      ),
    );
  });
});
