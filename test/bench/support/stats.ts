/** Small statistics for bench samples. */

/** The `p`-th percentile (0–100) by linear interpolation between closest ranks; NaN when empty. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = (p / 100) * (sorted.length - 1);
  const low = Math.floor(rank);
  const high = Math.ceil(rank);
  const weight = rank - low;
  return sorted[low]! * (1 - weight) + sorted[high]! * weight;
}

/** The median; NaN when empty. */
export function median(values: readonly number[]): number {
  return percentile(values, 50);
}

/** The arithmetic mean; NaN when empty. */
export function mean(values: readonly number[]): number {
  return values.length === 0 ? Number.NaN : values.reduce((a, b) => a + b, 0) / values.length;
}

/** p50, p95, p99, min, max and mean of a sample, rounded to 0.01. */
export function summary(values: readonly number[]): {
  n: number;
  p50: number;
  p95: number;
  p99: number;
  min: number;
  max: number;
  mean: number;
} {
  const r = (v: number): number => Math.round(v * 100) / 100;
  return {
    n: values.length,
    p50: r(percentile(values, 50)),
    p95: r(percentile(values, 95)),
    p99: r(percentile(values, 99)),
    min: r(Math.min(...values)),
    max: r(Math.max(...values)),
    mean: r(mean(values)),
  };
}

/** Least-squares slope of y over x; NaN with fewer than two distinct x. */
export function slope(points: readonly { x: number; y: number }[]): number {
  if (points.length < 2) return Number.NaN;
  const mx = mean(points.map((p) => p.x));
  const my = mean(points.map((p) => p.y));
  let num = 0;
  let den = 0;
  for (const { x, y } of points) {
    num += (x - mx) * (y - my);
    den += (x - mx) ** 2;
  }
  return den === 0 ? Number.NaN : num / den;
}

/** Rounds to `digits` decimals. */
export function round(value: number, digits = 2): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}
