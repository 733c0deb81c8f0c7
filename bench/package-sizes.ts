/** The feed rows' package sizes (feed-row.ts): shaped like nuget.org's. */
import { mulberry32 } from '../testkit/index.js';

const MB = 1_000_000;

/**
 * nuget.org-like package sizes: log-normal (median 290 KB, σ 1.6: mean about 1 MB, about 1.5% above 10 MB), taken at
 * evenly spaced quantiles so that even 200 packages have the distribution's shape (a random draw of 200 swings the
 * mean by a third), in a seeded random order; then `large` of them (every 7th) made near 250 MB.
 */
export function packageSizes(count: number, large: number, seed: number): number[] {
  const random = mulberry32(seed);
  const sizes = Array.from({ length: count }, (_, i) =>
    Math.min(250 * MB, Math.max(2_000, Math.round(290_000 * Math.exp(1.6 * normalQuantile((i + 0.5) / count))))),
  );
  for (let i = sizes.length - 1; i > 0; i--) {
    const j = random.int(0, i);
    [sizes[i], sizes[j]] = [sizes[j]!, sizes[i]!];
  }
  for (let i = 0; i < large && i * 7 < count; i++) sizes[i * 7] = 240 * MB + random.int(0, 10 * MB);
  return sizes;
}

/** The standard normal distribution's quantile at `p` (Acklam's rational approximation, relative error < 1.2e-9). */
function normalQuantile(p: number): number {
  const a = [
    -39.69683028665376, 220.9460984245205, -275.9285104469687, 138.357751867269, -30.66479806614716, 2.506628277459239,
  ];
  const b = [-54.47609879822406, 161.5858368580409, -155.6989798598866, 66.80131188771972, -13.28068155288572];
  const c = [
    -0.007784894002430293, -0.3223964580411365, -2.400758277161838, -2.549732539343734, 4.374664141464968,
    2.938163982698783,
  ];
  const d = [0.007784695709041462, 0.3224671290700398, 2.445134137142996, 3.754408661907416];
  const tail = (q: number) =>
    (((((c[0]! * q + c[1]!) * q + c[2]!) * q + c[3]!) * q + c[4]!) * q + c[5]!) /
    ((((d[0]! * q + d[1]!) * q + d[2]!) * q + d[3]!) * q + 1);
  if (p < 0.02425) return tail(Math.sqrt(-2 * Math.log(p)));
  if (p > 1 - 0.02425) return -tail(Math.sqrt(-2 * Math.log(1 - p)));
  const q = p - 0.5;
  const r = q * q;
  return (
    ((((((a[0]! * r + a[1]!) * r + a[2]!) * r + a[3]!) * r + a[4]!) * r + a[5]!) * q) /
    (((((b[0]! * r + b[1]!) * r + b[2]!) * r + b[3]!) * r + b[4]!) * r + 1)
  );
}
