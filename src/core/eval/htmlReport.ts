// The evaluation report as a page to look at: each tool's hit@1/5/10 and MRR@10 as bars, the
// same by question kind, and every question with where each tool ranked its commit, the gold
// commits' subjects and, for a miss, what each tool answered first. One self-contained file:
// no script, nothing fetched, every text from the question file or the history escaped.

import * as path from 'node:path';
import { escapeHtml } from '../model/html';
import { printable } from '../model/printable';
import type { EvalTool } from './evalTools';
import type { RankMetrics } from './metrics';
import type { EvalReport, QuestionResult } from './runEval';
import { shortSha } from './subjects';

const METRICS: Array<[keyof RankMetrics, string]> = [
  ['hit_at_1', 'hit@1'],
  ['hit_at_5', 'hit@5'],
  ['hit_at_10', 'hit@10'],
  ['mrr_at_10', 'MRR@10'],
];

const STYLE = `
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px auto;max-width:1100px;padding:0 16px;color:#1f2328;background:#fff}
h1{font-size:20px;margin:0 0 4px}h2{font-size:16px;margin:28px 0 8px}
.sub{color:#59636e;margin:0 0 16px}
table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:4px 8px;border-bottom:1px solid #d1d9e0;vertical-align:top}
th{font-weight:600;background:#f6f8fa}
.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.bar{position:relative;height:18px;min-width:140px;background:#eff2f5;border-radius:3px}
.bar span{position:absolute;left:0;top:0;bottom:0;background:#8fbce6;border-radius:3px}
.bar b{position:absolute;left:6px;top:0;font-weight:600;font-size:12px;line-height:18px;color:#1f2328}
.r{display:inline-block;min-width:34px;text-align:center;border-radius:3px;padding:0 4px;font-weight:600;font-variant-numeric:tabular-nums}
.r1{background:#1a7f37;color:#fff}.r5{background:#8ddb8c}.r10{background:#f2cc60}.rx{background:#ffcecb;color:#82071e}.rk{background:#eff2f5}
.q{max-width:560px}.q details summary{cursor:pointer}
.sha{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:12px;color:#59636e}
.ans{margin:2px 0 0 0;padding-left:18px}.ans li{margin:0}
.legend span{margin-right:12px}
`;

function f3(x: number): string {
  return x.toFixed(3);
}

function text(s: string | null | undefined): string {
  return escapeHtml(printable(String(s ?? '')));
}

function bar(value: number): string {
  const pct = Math.max(0, Math.min(1, value)) * 100;
  return `<div class="bar" title="${f3(value)}"><span style="width:${pct.toFixed(1)}%"></span><b>${f3(value)}</b></div>`;
}

function rankCell(rank: number | null | undefined): string {
  if (rank === undefined) return '<td></td>';
  if (rank === null) return '<td><span class="r rx" title="not in the answers scored">miss</span></td>';
  const cls = rank === 1 ? 'r1' : rank <= 5 ? 'r5' : rank <= 10 ? 'r10' : 'rk';
  return `<td><span class="r ${cls}">${rank}</span></td>`;
}

function commitLine(sha: string, subjects: Record<string, string>): string {
  const s = subjects[shortSha(sha)];
  return `<span class="sha">${text(shortSha(sha))}</span> ${s === undefined ? '<i>not in the history imported</i>' : text(s)}`;
}

function metricsTable(rows: Array<{ label: string; m: RankMetrics; latency?: string }>, latency: boolean): string {
  const head = `<tr><th></th><th class="num">n</th>${METRICS.map(([, name]) => `<th>${name}</th>`).join('')}${latency ? '<th class="num">p50 / p95 ms</th>' : ''}</tr>`;
  const body = rows
    .map((r) => `<tr><th>${r.label}</th><td class="num">${r.m.n}</td>${METRICS.map(([key]) => `<td>${bar(r.m[key])}</td>`).join('')}${latency ? `<td class="num">${r.latency ?? ''}</td>` : ''}</tr>`)
    .join('');
  return `<table>${head}${body}</table>`;
}

function questionRow(q: QuestionResult, tools: EvalTool[], subjects: Record<string, string>): string {
  // What each tool that missed its first 5 answered instead; tools that answered alike, once.
  const lists = new Map<string, { tools: EvalTool[]; top: string[] }>();
  for (const t of tools.filter((t) => q.ranks[t] === null || (q.ranks[t] ?? 0) > 5)) {
    const top = q.top[t] ?? [];
    const key = top.join(' ');
    if (lists.has(key)) lists.get(key)!.tools.push(t);
    else lists.set(key, { tools: [t], top });
  }
  const answers = [...lists.values()]
    .map((l) => `<div>${l.tools.map((t) => escapeHtml(t)).join(', ')} answered first:</div><ol class="ans">${l.top.map((sha) => `<li>${commitLine(sha, subjects)}</li>`).join('') || '<li><i>nothing</i></li>'}</ol>`)
    .join('');
  return (
    `<tr><td class="sha">${text(q.id)}</td><td>${text(q.kind ?? '')}</td>${tools.map((t) => rankCell(q.ranks[t])).join('')}` +
    `<td class="q"><details><summary>${text(q.question)}</summary>` +
    `<div>Answered by:</div><ul class="ans">${q.gold_commits.map((g) => `<li>${commitLine(g, subjects)}</li>`).join('')}</ul>${answers}</details></td></tr>`
  );
}

/** The whole report as one HTML page. */
export function reportHtml(report: EvalReport): string {
  const tools = Object.keys(report.tools) as EvalTool[];
  const name = path.basename(report.repository) || report.repository;
  const toolRows = tools.map((t) => {
    const r = report.tools[t]!;
    return { label: escapeHtml(t), m: r.metrics, latency: `${r.latency.p50_ms.toFixed(0)} / ${r.latency.p95_ms.toFixed(0)}` };
  });
  const kinds = tools.flatMap((t) => Object.entries(report.tools[t]!.by_kind).map(([kind, m]) => ({ label: `${escapeHtml(t)} · ${text(kind)}`, m })));
  const misses = (t: EvalTool): number => report.per_question.filter((q) => q.ranks[t] === null || (q.ranks[t] ?? 0) > 5).length;
  const imp = report.import;
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Retrieval evaluation: ${text(name)}</title><style>${STYLE}</style></head>
<body>
<h1>Retrieval evaluation: ${text(name)}</h1>
<p class="sub">${text(report.repository)} at ${text(report.rev)} · ${imp.imported} commits imported in ${imp.seconds} s · embedder ${text(report.embedder)} (${imp.cells_with_vectors}/${imp.cells} cells embedded)${report.reranker ? ` · reranker ${text(report.reranker)}` : ''} · ${report.questions} questions, ${report.k} answers scored each</p>
<h2>Every question</h2>
${metricsTable(toolRows, true)}
${kinds.length ? `<h2>By kind of question</h2>${metricsTable(kinds, false)}` : ''}
<h2>Each question</h2>
<p class="legend"><span><span class="r r1">1</span> first</span><span><span class="r r5">2-5</span></span><span><span class="r r10">6-10</span></span><span><span class="r rx">miss</span> not in the answers scored</span>${tools.map((t) => `<span>${escapeHtml(t)}: ${misses(t)} not in its first 5</span>`).join('')}</p>
<table><tr><th>id</th><th>kind</th>${tools.map((t) => `<th>${escapeHtml(t)}</th>`).join('')}<th>question (open it for the commits)</th></tr>
${report.per_question.map((q) => questionRow(q, tools, report.subjects ?? {})).join('\n')}
</table>
</body></html>
`;
}
