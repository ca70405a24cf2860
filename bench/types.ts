/**
 * Benchmark contract. Each bench/<name>.ts exports `bench: Benchmark`; bench/run.ts runs them in
 * sequence, prints a table and writes bench/results.json. Benchmarks report RATIOS against a
 * baseline run side by side in the same process/run, never absolute pass/fail timings in tests.
 */
export interface BenchContext {
  /** Short version for CI (fewer runs / smaller scale); the full run is `npm run bench`. */
  smoke: boolean;
  log: (line: string) => void;
}

export interface Target {
  /** e.g. "cold start ratio (a)/(b)" */
  name: string;
  /** The measured figure (a number, or a phrase where one number cannot say it, e.g. "12s vs > 300s"). */
  value: number | string;
  /** Human form of the target, e.g. "<= 1.0". */
  target: string;
  pass: boolean;
}

export interface BenchResult {
  name: string;
  /** Measured figures, units in the key (e.g. coldStartMedianMs). */
  metrics: Record<string, number | string>;
  targets: Target[];
  notes: string[];
}

export interface Benchmark {
  name: string;
  /** One line: what is measured against what. */
  description: string;
  run(ctx: BenchContext): Promise<BenchResult>;
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

export function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
}
