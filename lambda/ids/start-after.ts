/** The listing bound of a time: where a consumer starts `ListObjectsV2` to read every leaf from that second on. */
import { prefix } from './kuuid.js';

/**
 * The `ListObjectsV2` `StartAfter` that lists every leaf committed in the second of `t` or later:
 * `${keyPrefix}leaves/${prefix(t)}`, which a consumer can equally build with the real kuuid package.
 *
 * `StartAfter` is exclusive, but no key equals this value: every leaf key continues it with the four
 * sub-second characters and `/…`, and a proper prefix sorts before its extensions, so the leaves of
 * that second (`…/XXXXXXXX0000/…` and up) are included. The previous second's leaves
 * (`…/XXXXXXXW…`) differ at the eighth character and sort before it, so they are excluded.
 *
 * @throws `KuuidError` (from `./kuuid.js`) for a time kuuid would mishandle: before 1970, no zone,
 * invalid.
 */
export function startAfterKey(t: Date | string, keyPrefix = ''): string {
  // Narrower than kuuid's input on purpose: a listing bound should name its time, not default to now.
  return `${keyPrefix}leaves/${prefix(t)}`;
}
