/**
 * Plan ids that sort after the plan before them. Plans are found by their id's order ("the newest plan" is the
 * greatest id of a name), but kuuid ids made in the same second share their prefix and are otherwise random: a plan
 * made in the same second as the one before it would sort before it half the time, and be passed over as "newest".
 */
import { decodeBase62, encodeBase62 } from '../contract/base62.js';
import { isId, PREFIX_LENGTH } from './kuuid.js';

const GROUP_LENGTH = 6;
const GROUPS = 4;
const GROUP_BITS = 32n;
const GROUP_MASK = (1n << GROUP_BITS) - 1n;

/**
 * `fresh` when it sorts after `previous` (or either is not a kuuid id: nothing is known of its order); otherwise
 * the id right after `previous`: its prefix, and its 128 random bits plus one. Unique as long as `previous` is the
 * greatest id of its kind (the next one is taken by a conditional write, so of two planners only one gets it).
 */
export function idAfter(previous: string | undefined, fresh: string): string {
  if (previous === undefined || fresh > previous || !isId(previous) || !isId(fresh)) return fresh;
  let random = 0n;
  for (let group = 0; group < GROUPS; group++) {
    const start = PREFIX_LENGTH + group * GROUP_LENGTH;
    random = (random << GROUP_BITS) | decodeBase62(previous.slice(start, start + GROUP_LENGTH));
  }
  random += 1n;
  // Only the greatest 128 random bits have no successor within their second: a chance of 2^-128, left to `fresh`.
  if (random >> (GROUP_BITS * BigInt(GROUPS)) !== 0n) return fresh;
  let out = previous.slice(0, PREFIX_LENGTH);
  for (let group = GROUPS - 1; group >= 0; group--)
    out += encodeBase62((random >> (GROUP_BITS * BigInt(group))) & GROUP_MASK).padStart(GROUP_LENGTH, '0');
  return out;
}
