/**
 * The one decoding of a stored leaf (`parseStoredLeaf`) accepts exactly what the follower's reader accepted before
 * storing it, checked against a reference written here from the rules alone (no project code): drop one leading
 * EF BB BF, decode strict UTF-8, parse JSON, require an object. Refusals name the mirror, the key and the commit.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseStoredLeaf, StoredLeafError } from '../../lambda/consumer/index.js';

const BOM = [0xef, 0xbb, 0xbf];
const place = { where: 's3://mirror/nuget/', key: 'nuget/leaves/001e9fzMHc3F/a/1.0.0.json', commitKey: '001e9fzMHc3F' };

/** The reference: what the follower's rules say of `bytes`, an object or `undefined` for a refusal. */
function reference(bytes: Uint8Array): unknown {
  const body =
    bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? bytes.subarray(3) : bytes;
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(body);
  } catch {
    return undefined;
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? value : undefined;
}

function attempt(bytes: Uint8Array): { value?: unknown; error?: unknown } {
  try {
    return { value: parseStoredLeaf(bytes, place) };
  } catch (error) {
    return { error };
  }
}

describe('parseStoredLeaf', () => {
  it('reads a leaf with and without one byte-order mark; refuses two, invalid UTF-8, empty bodies and non-objects', () => {
    const leaf = Buffer.from('{"@id":"x","id":"Jörg"}');
    expect(parseStoredLeaf(leaf, place)).toEqual({ '@id': 'x', id: 'Jörg' });
    expect(parseStoredLeaf(Buffer.concat([Buffer.from(BOM), leaf]), place)).toEqual({ '@id': 'x', id: 'Jörg' });
    const cases: [Buffer, RegExp][] = [
      [Buffer.concat([Buffer.from([...BOM, ...BOM]), leaf]), /the stored leaf is not valid JSON: /],
      [Buffer.from([0x7b, 0xff, 0x7d]), /the stored leaf is not valid UTF-8$/],
      [Buffer.from(BOM), /the stored leaf is not valid JSON: the body is empty$/],
      [Buffer.from('[{}]'), /the stored leaf is not a JSON object \(an array\)$/],
      [Buffer.from('null'), /the stored leaf is not a JSON object \(null\)$/],
    ];
    for (const [bytes, reason] of cases) {
      const { error } = attempt(bytes);
      expect(error).toBeInstanceOf(StoredLeafError);
      expect(error).toMatchObject({
        code: 'CS_ERR_STORED_LEAF',
        where: place.where,
        key: place.key,
        commitKey: place.commitKey,
      });
      expect((error as Error).message.startsWith(`${place.where} ${place.key} (commit ${place.commitKey}): `)).toBe(
        true,
      );
      expect((error as Error).message).toMatch(reason);
    }
  });

  it("accepts exactly what the follower's rules accept, and gives the same JSON", () => {
    const json = fc.oneof(
      fc.object().map((value) => JSON.stringify(value)),
      fc.json(),
      fc.string(),
    );
    const bytes = fc
      .tuple(fc.nat({ max: 2 }), json, fc.uint8Array({ maxLength: 3 }), fc.boolean())
      .map(([marks, text, noise, withNoise]) =>
        Buffer.concat([
          Buffer.from(Array.from({ length: marks }, () => BOM).flat()),
          Buffer.from(text),
          withNoise ? Buffer.from(noise) : Buffer.alloc(0),
        ]),
      );
    fc.assert(
      fc.property(bytes, (body) => {
        const expected = reference(body);
        const { value, error } = attempt(body);
        if (expected === undefined) expect(error).toBeInstanceOf(StoredLeafError);
        else expect(value).toEqual(expected);
      }),
      { numRuns: 500 },
    );
  });
});
