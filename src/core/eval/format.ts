// Plain-text rendering of an evaluation report: one table of metrics per tool, then each
// question's rank per tool.

import { largest } from '../lists';
import type { EvalTool } from './evalTools';
import type { EvalReport } from './runEval';

function f3(x: number): string {
  return x.toFixed(3);
}

function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, largest(rows.map((r) => (r[i] ?? '').length))));
  const line = (cells: string[]): string => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`;
  return [line(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map(line)].join('\n');
}

export function formatReport(report: EvalReport, options: { perQuestion?: boolean } = {}): string {
  const tools = Object.keys(report.tools) as EvalTool[];
  const out: string[] = [];
  out.push(
    `Repository ${report.repository} at ${report.rev}: ${report.import.imported} commits imported in ${report.import.seconds} s ` +
      `(${report.import.sessions} sessions), embedder ${report.embedder} (${report.import.cells_with_vectors}/${report.import.cells} cells embedded in ${report.import.embed_seconds} s)` +
      `${report.reranker ? `, reranker ${report.reranker}` : ''}, ${report.questions} questions.`,
    '',
  );
  const rows: string[][] = [];
  for (const tool of tools) {
    const t = report.tools[tool]!;
    rows.push([tool, 'all', String(t.metrics.n), f3(t.metrics.hit_at_1), f3(t.metrics.hit_at_5), f3(t.metrics.hit_at_10), f3(t.metrics.mrr_at_10), t.latency.p50_ms.toFixed(1), t.latency.p95_ms.toFixed(1)]);
    for (const [kind, m] of Object.entries(t.by_kind)) {
      rows.push(['', kind, String(m.n), f3(m.hit_at_1), f3(m.hit_at_5), f3(m.hit_at_10), f3(m.mrr_at_10), '', '']);
    }
  }
  out.push(table(['tool', 'questions', 'n', 'hit@1', 'hit@5', 'hit@10', 'MRR@10', 'p50 ms', 'p95 ms'], rows));
  if (options.perQuestion !== false) {
    out.push('');
    out.push(
      table(
        ['id', 'kind', ...tools],
        report.per_question.map((q) => [q.id, q.kind ?? '', ...tools.map((t) => (q.ranks[t] === null || q.ranks[t] === undefined ? '-' : String(q.ranks[t])))]),
      ),
    );
  }
  return out.join('\n');
}
