// The report page's inline style sheet and scripts (run_report_html.h), kept apart from the
// C++ that writes the page. The scripts build SVG with createElementNS and textContent only,
// never innerHTML, so nothing from the run is ever parsed as markup.
#pragma once

namespace kiln::frontier::report_assets {

inline constexpr const char* kStyle = R"css(
:root { --fg: #1d232b; --muted: #5b6573; --line: #d9dee5; --bg: #ffffff; --panel: #f6f8fa;
        --good: #1a7f37; --bad: #c0392b; --accent: #2f6fdb; --gold: #c98a00; }
* { box-sizing: border-box; }
body { margin: 0 auto; max-width: 1000px; padding: 24px; color: var(--fg); background: var(--bg);
       font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 17px; margin: 28px 0 8px; border-bottom: 1px solid var(--line); padding-bottom: 4px; }
.meta, .hint, .muted { color: var(--muted); }
.meta { margin: 2px 0; }
code, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12.5px; }
.cards { display: flex; flex-wrap: wrap; gap: 12px; margin: 16px 0; }
.card { background: var(--panel); border: 1px solid var(--line); border-radius: 6px; padding: 10px 14px;
        min-width: 150px; }
.card .value { font-size: 20px; font-weight: 600; }
.card .label { color: var(--muted); font-size: 12px; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; width: 100%; font-size: 13px; }
th, td { text-align: left; padding: 5px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { background: var(--panel); font-weight: 600; }
td.mono, td.when { white-space: nowrap; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tr.best td { background: #fff8e1; }
.verdict-refused { color: var(--bad); }
.verdict-accepted_best, .verdict-accepted_approach, .status-passed { color: var(--good); }
.status-failed, .status-error, .errors { color: var(--bad); }
.empty { background: var(--panel); border: 1px dashed var(--line); border-radius: 6px; padding: 14px; }
svg.chart { width: 100%; height: auto; display: block; background: var(--panel);
            border: 1px solid var(--line); border-radius: 6px; }
svg text { font-size: 11px; fill: var(--muted); }
.grid { stroke: var(--line); stroke-width: 1; }
.baseline { stroke: var(--fg); stroke-width: 1; stroke-dasharray: 5 4; }
.best-so-far { fill: none; stroke: var(--gold); stroke-width: 1.5; opacity: 0.8; }
.point .mark { fill: var(--accent); stroke: #fff; stroke-width: 1; }
.point.subset .mark { fill: #fff; stroke: var(--accent); stroke-width: 2; }
.point.failed .mark { fill: none; stroke: var(--bad); stroke-width: 2; }
.point.revalidation .mark { fill: #7b5cd6; }
.point .ring { fill: none; stroke: var(--gold); stroke-width: 2.5; }
.point.former .ring { stroke: var(--muted); stroke-dasharray: 3 2; }
svg text.point-label { fill: var(--gold); font-weight: 600; }
.bar rect { fill: var(--good); }
.bar.slower rect { fill: var(--bad); }
svg text.bar-value { fill: var(--fg); }
.legend { display: flex; flex-wrap: wrap; gap: 16px; margin: 6px 0 0; color: var(--muted); font-size: 12px; }
.legend svg { vertical-align: middle; }
.bar-cell { width: 120px; }
.bar-cell span { display: inline-block; height: 8px; background: var(--bad); border-radius: 2px; }
#report-status { color: var(--muted); font-size: 12px; }
#report-status[data-status="error"] { color: var(--bad); font-weight: 600; }
)css";

// Runs first, so an error in the main script (even a syntax error) is shown in the page.
inline constexpr const char* kErrorScript = R"js(
window.addEventListener('error', (event) => {
  const status = document.getElementById('report-status');
  status.dataset.status = 'error';
  status.textContent = 'The report script failed: ' + event.message;
});
)js";

inline constexpr const char* kScript = R"js(
(() => {
  'use strict';
  const status = document.getElementById('report-status');
  const data = JSON.parse(document.getElementById('report-data').textContent);
  const NS = 'http://www.w3.org/2000/svg';
  const el = (name, attrs, parent) => {
    const node = document.createElementNS(NS, name);
    for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, String(value));
    if (parent) parent.appendChild(node);
    return node;
  };
  const label = (parent, x, y, text, attrs) => {
    const node = el('text', Object.assign({x, y}, attrs || {}), parent);
    node.textContent = text;
    return node;
  };
  const tip = (node, text) => { el('title', {}, node).textContent = text; };
  const times = (v) => v.toFixed(3) + 'x';
  const clock = (ms, seconds) =>
    new Date(ms).toISOString().slice(5, seconds ? 19 : 16).replace('T', ' ');
  // About `count` round values covering [lo, hi].
  const ticks = (lo, hi, count) => {
    const span = hi - lo;
    if (!(span > 0) || !isFinite(span)) return [lo];
    const magnitude = Math.pow(10, Math.floor(Math.log10(span / count)));
    const step = [1, 2, 5, 10].map((m) => m * magnitude).find((s) => span / s <= count);
    const out = [];
    for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step)
      out.push(Number(v.toFixed(10)));
    return out;
  };

  // Every benchmark result over time: y is its geomean speedup over the baseline; failed
  // results sit on the strip below the axis. Rings mark frontier members, the gold line is the
  // best scored geomean so far.
  function drawTimeline(svg, points) {
    if (!svg || points.length === 0) return 0;
    const W = 900, H = 360, L = 64, R = 24, T = 20, B = 72;
    svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
    const least = (values) => values.reduce((a, b) => Math.min(a, b));
    const most = (values) => values.reduce((a, b) => Math.max(a, b));
    let t0 = least(points.map((p) => p.t)), t1 = most(points.map((p) => p.t));
    if (t1 - t0 < 60000) { t0 -= 30000; t1 += 30000; }
    const measured = points.filter((p) => p.geomean !== null);
    const values = measured.map((p) => p.geomean).concat([1]);
    let lo = least(values), hi = most(values);
    const pad = Math.max((hi - lo) * 0.1, 0.02);
    lo = Math.max(0, lo - pad);
    hi += pad;
    const bottom = H - B, failY = H - B + 24;
    const x = (t) => L + (t - t0) / (t1 - t0) * (W - L - R);
    const y = (v) => T + (hi - v) / (hi - lo) * (bottom - T);
    const axes = el('g', {class: 'axes'}, svg);
    for (const v of ticks(lo, hi, 6)) {
      el('line', {x1: L, x2: W - R, y1: y(v), y2: y(v), class: 'grid'}, axes);
      label(axes, L - 8, y(v) + 4, v.toFixed(2) + 'x', {'text-anchor': 'end'});
    }
    el('line', {x1: L, x2: W - R, y1: y(1), y2: y(1), class: 'baseline'}, axes);
    label(axes, W - R - 4, y(1) - 6, 'baseline 1.0x', {'text-anchor': 'end'});
    for (let i = 0; i <= 4; ++i) {
      const t = t0 + (t1 - t0) * i / 4;
      label(axes, x(t), H - 8, clock(t, t1 - t0 < 600000) + ' UTC', {'text-anchor': i === 0 ? 'start' : i === 4 ? 'end' : 'middle'});
    }
    if (points.length > measured.length)
      label(axes, L - 8, failY + 4, 'failed', {'text-anchor': 'end'});
    let best = null, path = '';
    for (const p of measured.filter((q) => q.scored)) {
      if (best !== null && p.geomean <= best) continue;
      path += path ? ` H${x(p.t)} V${y(p.geomean)}` : `M${x(p.t)} ${y(p.geomean)}`;
      best = p.geomean;
    }
    if (path) el('path', {d: path + ` H${x(t1)}`, class: 'best-so-far'}, svg);
    const layer = el('g', {class: 'points'}, svg);
    for (const p of points) {
      const kind = p.geomean === null ? 'failed' : p.scored ? 'scored' : 'subset';
      const classes = ['point', kind];
      if (p.member) classes.push(p.active ? 'member' : 'former');
      if (p.best) classes.push('best');
      if (p.revalidation) classes.push('revalidation');
      const py = p.geomean === null ? failY : y(p.geomean);
      const g = el('g', {class: classes.join(' '), 'data-result-id': p.id,
                         transform: `translate(${x(p.t)},${py})`}, layer);
      if (p.member) el('circle', {r: p.best ? 11 : 9, class: 'ring'}, g);
      if (kind === 'failed') el('path', {d: 'M-5 -5 L5 5 M-5 5 L5 -5', class: 'mark'}, g);
      else if (p.revalidation) el('rect', {x: -4.5, y: -4.5, width: 9, height: 9, transform: 'rotate(45)', class: 'mark'}, g);
      else el('circle', {r: 5, class: 'mark'}, g);
      if (p.best && !p.revalidation) label(g, 14, -10, p.member, {class: 'point-label'});
      const lines = [p.id + ' (' + clock(p.t, true) + ' UTC)',
                     p.geomean === null ? p.status + (p.gate ? ': ' + p.gate : '')
                                        : times(p.geomean) + (p.scored ? ' geomean' : ' on a subset, unscored'),
                     p.passed + '/' + p.total + ' workloads passed'];
      if (p.member) lines.push((p.active ? 'frontier member ' : 'former member ') + p.member + (p.best ? ' (best)' : ''));
      if (p.revalidation) lines.push('revalidation job');
      if (p.verdict) lines.push('frontier: ' + p.verdict);
      tip(g, lines.join('\n'));
    }
    return points.length;
  }

  // The best member's speedup over the baseline on each workload (1.0x: as fast).
  function drawBars(svg, best) {
    if (!svg || !best || best.workloads.length === 0) return 0;
    const rows = best.workloads;
    const W = 900, H = 340, L = 64, R = 24, T = 24, B = 96;
    svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
    const hi = rows.reduce((m, r) => Math.max(m, r.speedup), 1) * 1.12;
    const y = (v) => T + (hi - v) / hi * (H - B - T);
    for (const v of ticks(0, hi, 6)) {
      el('line', {x1: L, x2: W - R, y1: y(v), y2: y(v), class: 'grid'}, svg);
      label(svg, L - 8, y(v) + 4, v.toFixed(1) + 'x', {'text-anchor': 'end'});
    }
    const slot = (W - L - R) / rows.length, width = Math.min(56, slot * 0.7);
    rows.forEach((r, i) => {
      const cx = L + slot * (i + 0.5);
      const g = el('g', {class: 'bar ' + (r.speedup >= 1 ? 'faster' : 'slower'), 'data-workload': r.name}, svg);
      el('rect', {x: cx - width / 2, y: y(r.speedup), width, height: Math.max(0, y(0) - y(r.speedup))}, g);
      label(g, cx, y(r.speedup) - 5, r.speedup.toFixed(2) + 'x', {'text-anchor': 'middle', class: 'bar-value'});
      label(g, cx, H - B + 16, r.name, {'text-anchor': 'end', transform: `rotate(-35 ${cx} ${H - B + 16})`});
      tip(g, r.name + ': ' + times(r.speedup) + (r.passed ? '' : ' (failed)'));
    });
    el('line', {x1: L, x2: W - R, y1: y(1), y2: y(1), class: 'baseline'}, svg);
    return rows.length;
  }

  const points = drawTimeline(document.getElementById('timeline'), data.points);
  const bars = drawBars(document.getElementById('bars'), data.best);
  if (status.dataset.status === 'error') return;
  status.dataset.status = 'ok';
  status.dataset.points = String(points);
  status.dataset.bars = String(bars);
  status.textContent = `Charts drawn: ${points} points, ${bars} bars.`;
})();
)js";

}  // namespace kiln::frontier::report_assets
