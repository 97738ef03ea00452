// Ranking metrics of the retrieval evaluation: hit@k and MRR@10 over the rank of the first
// gold commit in each answer, and latency percentiles.

export interface RankMetrics {
  n: number;
  hit_at_1: number;
  hit_at_5: number;
  hit_at_10: number;
  mrr_at_10: number;
}

export interface LatencyMetrics {
  p50_ms: number;
  p95_ms: number;
  mean_ms: number;
}

/**
 * 1-based rank of the first answer that matches a gold commit, or null when none does.
 * A gold sha may be abbreviated; answers are full shas.
 */
export function firstGoldRank(answers: string[], gold: string[]): number | null {
  const golds = gold.map((g) => g.toLowerCase());
  for (let i = 0; i < answers.length; i++) {
    const a = answers[i].toLowerCase();
    if (golds.some((g) => a.startsWith(g) || g.startsWith(a))) return i + 1;
  }
  return null;
}

export function rankMetrics(ranks: Array<number | null>): RankMetrics {
  const n = ranks.length;
  const hit = (k: number): number => (n === 0 ? 0 : ranks.filter((r) => r !== null && r <= k).length / n);
  const mrr = n === 0 ? 0 : ranks.reduce<number>((s, r) => s + (r !== null && r <= 10 ? 1 / r : 0), 0) / n;
  return { n, hit_at_1: hit(1), hit_at_5: hit(5), hit_at_10: hit(10), mrr_at_10: mrr };
}

/** Nearest-rank percentile of a sample. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const idx = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[idx];
}

export function latencyMetrics(ms: number[]): LatencyMetrics {
  const mean = ms.length ? ms.reduce((a, b) => a + b, 0) / ms.length : 0;
  return { p50_ms: percentile(ms, 50), p95_ms: percentile(ms, 95), mean_ms: mean };
}

/** Unique values in first-seen order: several cells can point at one commit. */
export function uniqueInOrder(values: Array<string | null | undefined>): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const v of values) {
    if (!v || seen.has(v)) continue;
    seen.add(v);
    out.push(v);
  }
  return out;
}
