// Timelines drawn as inline SVG (no script, themable through CSS classes):
// activity per file across a session, and a project's sessions over time.

import { addToList, largest, smallest } from '../../core/lists';
import type { SessionInfo } from '../../core/api';
import type { Observation } from '../../core/model/records';
import { parseList } from '../capture/capturedLog';
import { escapeHtml } from './html';

const ROW = 22;
const LABEL_W = 210;
const PLOT_W = 560;
const MAX_FILES = 14;

export interface TimelinePoint {
  at: number;
  type: string;
  files: string[];
  title: string;
}

export function pointsOf(observations: readonly Observation[]): TimelinePoint[] {
  return observations.map((o) => ({
    at: o.created_at_epoch,
    type: o.type,
    files: [...new Set([...parseList(o.files_modified), ...parseList(o.files_read)])],
    title: o.title ?? o.type,
  }));
}

/** Rows are files (most active first), dots are observations coloured by type. */
export function fileActivitySvg(points: readonly TimelinePoint[], highlightFile?: string): string {
  const perFile = new Map<string, TimelinePoint[]>();
  for (const p of points) for (const f of p.files) addToList(perFile, f, p);
  if (perFile.size === 0) return '<p class="muted">No file activity recorded.</p>';
  const files = [...perFile.entries()].sort((a, b) => b[1].length - a[1].length).slice(0, MAX_FILES);
  const times = points.map((p) => p.at);
  const t0 = smallest(times);
  const t1 = largest(times);
  const span = Math.max(t1 - t0, 60_000);
  const x = (t: number): number => LABEL_W + 8 + ((t - t0) / span) * (PLOT_W - 16);
  const height = files.length * ROW + 30;
  const rows = files
    .map(([file, list], i) => {
      const y = i * ROW + 14;
      const name = file.length > 32 ? `…${file.slice(-31)}` : file;
      const dots = list
        .map(
          (p) =>
            `<circle class="dot t-${escapeHtml(p.type)}" cx="${x(p.at).toFixed(1)}" cy="${y}" r="${p.type === 'read' ? 4 : 5.5}"><title>${escapeHtml(
              `${new Date(p.at).toLocaleTimeString()} · ${p.title}`,
            )}</title></circle>`,
        )
        .join('');
      return `<g class="row${file === highlightFile ? ' hl' : ''}"><text class="label" x="${LABEL_W}" y="${y + 4}" text-anchor="end"><title>${escapeHtml(file)}</title>${escapeHtml(name)}</text><line class="track" x1="${LABEL_W + 8}" x2="${LABEL_W + PLOT_W - 8}" y1="${y}" y2="${y}"/>${dots}</g>`;
    })
    .join('');
  const axisY = files.length * ROW + 8;
  const axis = `<text class="axis" x="${LABEL_W + 8}" y="${axisY + 14}">${escapeHtml(clock(t0))}</text><text class="axis" x="${LABEL_W + PLOT_W - 8}" y="${axisY + 14}" text-anchor="end">${escapeHtml(clock(t1))}</text>`;
  const more = perFile.size > MAX_FILES ? `<p class="muted">${perFile.size - MAX_FILES} more file(s) not shown.</p>` : '';
  return `<svg class="timeline" role="img" aria-label="Activity per file" viewBox="0 0 ${LABEL_W + PLOT_W} ${height}" width="100%" preserveAspectRatio="xMinYMin meet">${rows}${axis}</svg>${legend(points)}${more}`;
}

/** A project's sessions as bars on a time axis: width is duration, height is observation count. */
export function sessionsSvg(sessions: readonly SessionInfo[], current?: string): string {
  if (sessions.length === 0) return '';
  const w = LABEL_W + PLOT_W;
  const h = 70;
  const starts = sessions.map((s) => s.started_at_epoch);
  const ends = sessions.map((s) => s.ended_at_epoch ?? Date.now());
  const t0 = smallest(starts);
  const t1 = largest(ends);
  const span = Math.max(t1 - t0, 3_600_000);
  const maxCount = Math.max(1, largest(sessions.map((s) => s.observation_count)));
  const x = (t: number): number => 8 + ((t - t0) / span) * (w - 16);
  const bars = sessions
    .map((s) => {
      const x0 = x(s.started_at_epoch);
      const x1 = Math.max(x0 + 4, x(s.ended_at_epoch ?? Date.now()));
      const bh = 8 + (s.observation_count / maxCount) * 36;
      const cls = s.memory_session_id === current ? 'bar current' : s.ended_at_epoch ? 'bar' : 'bar open';
      return `<rect class="${cls}" x="${x0.toFixed(1)}" y="${(48 - bh).toFixed(1)}" width="${(x1 - x0).toFixed(1)}" height="${bh.toFixed(1)}" rx="2"><title>${escapeHtml(
        `${new Date(s.started_at_epoch).toLocaleString()}${s.branch ? ` · ${s.branch}` : ''} · ${s.observation_count} observations`,
      )}</title></rect>`;
    })
    .join('');
  const axis = `<line class="track" x1="8" x2="${w - 8}" y1="48" y2="48"/><text class="axis" x="8" y="64">${escapeHtml(day(t0))}</text><text class="axis" x="${w - 8}" y="64" text-anchor="end">${escapeHtml(day(t1))}</text>`;
  return `<svg class="timeline sessions" role="img" aria-label="Sessions over time" viewBox="0 0 ${w} ${h}" width="100%" preserveAspectRatio="xMinYMin meet">${bars}${axis}</svg>`;
}

function legend(points: readonly TimelinePoint[]): string {
  const types = [...new Set(points.map((p) => p.type))].sort();
  return `<div class="legend">${types.map((t) => `<span><svg width="10" height="10"><circle class="dot t-${escapeHtml(t)}" cx="5" cy="5" r="4.5"/></svg>${escapeHtml(t)}</span>`).join('')}</div>`;
}

function clock(t: number): string {
  return new Date(t).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
}

function day(t: number): string {
  return new Date(t).toLocaleDateString([], { month: 'short', day: 'numeric' });
}
