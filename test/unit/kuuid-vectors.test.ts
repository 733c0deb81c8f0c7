/**
 * kuuid against its vectors file: prefixes, random groups, deterministic ids and the id pattern.
 */
import { describe, it, expect } from 'vitest';
import { decodeBase62 } from '../../lambda/contract/base62.js';
import {
  createKuuid,
  ID_PATTERN,
  isId,
  KuuidError,
  prefix,
  prefixms,
  prefixReverse,
  prefixReverseMs,
} from '../../lambda/ids/kuuid.js';
import { replay, vectors } from './kuuid-kit.js';

describe('prefix vectors', () => {
  it.each(vectors.prefix_vectors)('$input → prefix $prefix, prefixms $prefixms', (v) => {
    expect(prefix(v.input)).toBe(v.prefix);
    expect(prefixms(v.input)).toBe(v.prefixms);
    expect(prefixReverse(v.input)).toBe(v.prefixReverse);
  });

  it.each(vectors.prefix_vectors.filter((v) => v.epoch_ms <= 62 ** 8 - 1))(
    '$input → prefixReverseMs $prefixReverseMs',
    (v) => {
      expect(prefixReverseMs(v.input)).toBe(v.prefixReverseMs);
    },
  );

  it('throws where kuuid clamps a negative reverse to 00000000 (ms after 8888-12-02)', () => {
    const late = vectors.prefix_vectors.filter((v) => v.epoch_ms > 62 ** 8 - 1);
    expect(late.map((v) => v.prefixReverseMs)).toEqual(['00000000']);
    for (const v of late) expect(() => prefixReverseMs(v.input)).toThrow(KuuidError);
  });

  it.each(vectors.prefix_vectors)('$input as epoch ms and as a Date gives the same prefixes', (v) => {
    for (const t of [v.epoch_ms, new Date(v.epoch_ms)]) {
      expect(prefix(t)).toBe(v.prefix);
      expect(prefixms(t)).toBe(v.prefixms);
    }
  });

  it('reproduces kuuid’s 9-character prefixms after 62⁸ ms, for byte compatibility', () => {
    expect(prefixms('9999-12-31T23:59:59.999Z')).toBe('19xHxFvyx');
    expect(prefixms(62 ** 8 - 1)).toBe('zzzzzzzz');
    expect(prefixms(62 ** 8)).toBe('100000000');
  });
});

describe('random groups and deterministic ids', () => {
  it.each(vectors.random_group_vectors)('bytes $bytes_hex → group $group', (v) => {
    const source = replay([v.bytes_hex, v.bytes_hex, v.bytes_hex, v.bytes_hex]);
    const made = createKuuid(source).id('1970-01-01T00:00:00Z');
    expect(made).toBe(`00000000${v.group.repeat(4)}`);
    expect(decodeBase62(v.group)).toBe(BigInt(v.uint32));
  });

  const supported = vectors.deterministic_id_vectors.filter((v) => v.fn === 'id' || v.fn === 'idms');

  it('has id and idms vectors', () => {
    expect(supported.length).toBeGreaterThanOrEqual(12);
  });

  it.each(supported)('$fn($timestamp) with $randomBytes_calls_hex → $id', (v) => {
    const source = replay(v.randomBytes_calls_hex);
    const k = createKuuid(source);
    const made = v.fn === 'id' ? k.id(v.timestamp) : k.idms(v.timestamp);
    expect(made).toBe(v.id);
    expect(made).toHaveLength(v.length);
    // Four calls of randomBytes(4), in order, exactly as kuuid draws them.
    expect(source.sizes).toEqual([4, 4, 4, 4]);
    expect(isId(made)).toBe(true);
  });

  it('draws no random bytes when the time is invalid', () => {
    const source = replay([]);
    expect(() => createKuuid(source).id('')).toThrow(KuuidError);
    expect(source.sizes).toEqual([]);
  });

  it('rejects a random source that returns fewer than 4 bytes', () => {
    expect(() => createKuuid({ randomBytes: () => new Uint8Array(3) }).id(0)).toThrow(KuuidError);
  });

  it('uses the injected clock when the time is omitted', () => {
    const k = createKuuid({
      randomBytes: replay(['00000000', '00000000', '00000000', '00000000']).randomBytes,
      now: () => 1509492632419,
    });
    expect(k.id()).toBe(`001e9fzM${'0'.repeat(24)}`);
    const k2 = createKuuid({
      randomBytes: replay(['00000000', '00000000', '00000000', '00000000']).randomBytes,
      now: () => 1509492632419,
    });
    expect(k2.idms(null)).toBe(`0QZg5Fhb${'0'.repeat(24)}`);
  });
});

describe('ID_PATTERN and isId', () => {
  it('is the regex of the vectors file', () => {
    expect(ID_PATTERN.source).toBe(vectors.validation_regex.id.split(/\s+/)[0]);
  });

  it('accepts kuuid’s own random samples of id and idms', () => {
    const samples = [
      ...(vectors.random_samples['id()'] as string[]),
      ...(vectors.random_samples['id("2017-10-31T23:30:32.4197849Z")'] as string[]),
      ...(vectors.random_samples['idms("2017-10-31T23:30:32.4197849Z")'] as string[]),
    ];
    expect(samples.length).toBeGreaterThan(0);
    for (const s of samples) {
      expect(s).toMatch(ID_PATTERN);
      expect(isId(s)).toBe(true);
    }
  });

  it('rejects groups above 4gfFC3, wrong lengths and foreign characters', () => {
    expect(isId('001e9fzM4gfFC34gfFC34gfFC34gfFC3')).toBe(true);
    expect(isId('001e9fzM4gfFC44gfFC34gfFC34gfFC3')).toBe(false);
    expect(isId('001e9fzM4gfFC34gfFC34gfFC34gfFC4')).toBe(false);
    expect(isId('001e9fzM5000000000000000000000000'.slice(0, 32))).toBe(false);
    expect(isId('001e9fzM00000000000000000000000')).toBe(false);
    expect(isId('001e9fzM0000000000000000000000000')).toBe(false);
    expect(isId('001e9fzM-00000000000000000000000')).toBe(false);
    expect(isId('001e9fzM')).toBe(false);
  });
});
