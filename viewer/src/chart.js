// One speedup plot (Observable Plot): program speedup against line speedup, one series per progress
// point, 95% CI error bars, the least-squares trend, a zero line. Latency is already signed so up = better.
import * as Plot from '@observablehq/plot';

export const PALETTE = ['#2563eb', '#d97706', '#059669', '#9333ea', '#db2777', '#0891b2', '#65a30d', '#dc2626'];

const pct = (v) => `${v >= 0 ? '+' : ''}${v.toFixed(1)}%`;

/** Rows for the marks, in percent. */
function rows(line) {
  const points = [], bars = [], trends = [];
  for (const p of line.points) {
    for (const c of p.curve) {
      const row = { x: c.speedup * 100, y: c.programSpeedup * 100, series: p.name, n: c.experiments };
      points.push(row);
      if (c.ciLow !== null && c.ciHigh !== null && c.speedup > 0) {
        bars.push({ ...row, lo: c.ciLow * 100, hi: c.ciHigh * 100 });
      }
    }
    if (p.slope && p.intercept !== null && p.curve.length) {
      const xmax = p.curve[p.curve.length - 1].speedup;
      trends.push({ x: 0, y: p.intercept * 100, series: p.name });
      trends.push({ x: xmax * 100, y: (p.intercept + p.slope.value * xmax) * 100, series: p.name });
    }
  }
  return { points, bars, trends };
}

/** Renders the chart for `line` into an SVG element. `yDomain` is shared by all plots (percent). */
export function speedupChart(line, { width, height = 210, yDomain, pointNames }) {
  const { points, bars, trends } = rows(line);
  return Plot.plot({
    width, height, marginLeft: 46, marginRight: 12, marginTop: 22, marginBottom: 34,
    style: { fontSize: '11px', background: 'transparent', overflow: 'visible' },
    x: { domain: [0, 100], label: 'line speedup (%) →', labelAnchor: 'right', ticks: 5, grid: true },
    y: { domain: yDomain, label: '↑ program speedup (%)', labelAnchor: 'top', ticks: 5, grid: true, nice: false },
    color: { domain: pointNames, range: PALETTE },
    marks: [
      Plot.ruleY([0], { stroke: '#64748b', strokeWidth: 1 }),
      Plot.ruleX(bars, { x: 'x', y1: 'lo', y2: 'hi', stroke: 'series', strokeWidth: 1.5, strokeOpacity: 0.7,
        className: 'error-bar', clip: true }),
      Plot.ruleY(bars, { y: 'lo', x1: (d) => d.x - 1.2, x2: (d) => d.x + 1.2, stroke: 'series', strokeOpacity: 0.7, clip: true }),
      Plot.ruleY(bars, { y: 'hi', x1: (d) => d.x - 1.2, x2: (d) => d.x + 1.2, stroke: 'series', strokeOpacity: 0.7, clip: true }),
      Plot.line(trends, { x: 'x', y: 'y', z: 'series', stroke: 'series', strokeDasharray: '5,4', strokeWidth: 1.5,
        className: 'trend', clip: true }),
      Plot.dot(points, { x: 'x', y: 'y', fill: 'series', r: 3.5, stroke: 'white', strokeWidth: 0.8,
        className: 'measurement', clip: true,
        title: (d) => `${d.series}\nline +${d.x.toFixed(0)}% → program ${pct(d.y)}\n${d.n} experiment(s)` }),
    ],
  });
}
