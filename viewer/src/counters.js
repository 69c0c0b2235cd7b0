// The counters view (docs/counters.md): CPI and utilisation over time from `counter_interval` records
// and the per-function table (ScALPEL) from `counters` records of `whatif run --counters`. Pure row
// builders for the tests, and one DOM renderer (Observable Plot charts, as the speedup plots); all
// record text goes through textContent.
import * as Plot from '@observablehq/plot';

const num = (v) => (typeof v === 'number' && Number.isFinite(v) ? v : null);

/** A `counter_interval` record in the viewer's model: times in ns, values by event name. */
export function readInterval(record) {
  const values = new Map();
  if (record.values && typeof record.values === 'object') {
    for (const [name, pair] of Object.entries(record.values)) {
      if (Array.isArray(pair) && num(pair[0]) !== null) values.set(name, { value: pair[0], running: num(pair[1]) ?? 1 });
    }
  }
  const unavailable = new Map();
  if (record.unavailable && typeof record.unavailable === 'object') {
    for (const [name, reason] of Object.entries(record.unavailable)) unavailable.set(name, String(reason));
  }
  return { elapsed: num(record.elapsed_ns) ?? 0, interval: num(record.interval_ns) ?? 0, values, unavailable };
}

/**
 * One row per interval: `t` (seconds at the interval's end), `utilisation` (task-clock / interval, in
 * CPUs), `cpi` (cycles / instructions, null where either is missing or zero), `scaled` (the least share
 * of the interval an event counted, 1 when nothing was multiplexed).
 */
export function intervalRows(intervals) {
  return intervals.filter((i) => i.interval > 0).map((i) => {
    const task = i.values.get('task-clock');
    const instructions = i.values.get('instructions');
    const cycles = i.values.get('cycles');
    const cpi = instructions && cycles && instructions.value > 0 ? cycles.value / instructions.value : null;
    const scaled = Math.min(1, ...[...i.values.values()].map((v) => v.running));
    return { t: i.elapsed / 1e9, utilisation: task ? task.value / i.interval : null, cpi, scaled };
  });
}

/** Why CPI cannot be shown (null when it can): the reason the profile gives for instructions or cycles. */
export function cpiMissing(intervals) {
  for (const name of ['instructions', 'cycles']) {
    for (const i of intervals) {
      if (i.unavailable.has(name)) {
        return `CPI needs a hardware PMU: ${name} not available on this machine (${i.unavailable.get(name)}); ` +
          'utilisation comes from task-clock, a software event.';
      }
    }
  }
  return intervals.length && intervalRows(intervals).every((r) => r.cpi === null)
    ? 'CPI needs instructions and cycles: none were counted in any interval.' : null;
}

/** The last `counters` record of each (profile, tid, function), as the runtime's totals are cumulative. */
export function readFunctionCounters(record) {
  const events = [];
  if (record.events && typeof record.events === 'object') {
    for (const [name, values] of Object.entries(record.events)) {
      if (!Array.isArray(values) || num(values[0]) === null || num(values[1]) === null) continue;
      // A third number (event sets cycled by call count): the calls in which this event counted.
      events.push({ name, inclusive: values[0], exclusive: values[1], measured: num(values[2]) });
    }
  }
  return { tid: num(record.tid) ?? 0, function: String(record.function ?? '?'), calls: num(record.calls) ?? 0,
    inclusive: num(record.inclusive_ns) ?? 0, exclusive: num(record.exclusive_ns) ?? 0, events };
}

/**
 * Per function (threads summed) or per thread (`byThread`): calls, inclusive and exclusive time per
 * call (ns), and each event's inclusive and exclusive count per call. An event counted in only some
 * calls (cycled sets) is scaled to all of them, and `share` says in what fraction it counted; an event
 * named in `unavailable` is null (not available on this machine).
 */
export function functionRows(records, { byThread = false, unavailable = [] } = {}) {
  const rows = new Map();
  const eventNames = [];
  for (const r of records) {
    const key = byThread ? `${r.function}\u0000${r.tid}` : r.function;
    let row = rows.get(key);
    if (!row) {
      row = { function: r.function, tid: byThread ? r.tid : null, calls: 0, inclusive: 0, exclusive: 0, events: new Map() };
      rows.set(key, row);
    }
    row.calls += r.calls;
    row.inclusive += r.inclusive;
    row.exclusive += r.exclusive;
    for (const e of r.events) {
      if (!eventNames.includes(e.name)) eventNames.push(e.name);
      const sum = row.events.get(e.name) ?? { inclusive: 0, exclusive: 0, measured: 0 };
      sum.inclusive += e.inclusive;
      sum.exclusive += e.exclusive;
      sum.measured += e.measured ?? r.calls;
      row.events.set(e.name, sum);
    }
  }
  const out = [...rows.values()].map((row) => {
    const perCall = (v) => (row.calls > 0 ? v / row.calls : null);
    const events = {};
    for (const name of eventNames) {
      const sum = row.events.get(name);
      if (!sum || unavailable.includes(name) || sum.measured === 0) { events[name] = null; continue; }
      const scale = row.calls / sum.measured;  // 1 unless the event's set counted only some calls
      events[name] = { inclusive: perCall(sum.inclusive * scale), exclusive: perCall(sum.exclusive * scale),
        share: Math.min(1, sum.measured / row.calls) };
    }
    return { function: row.function, tid: row.tid, calls: row.calls, inclusivePerCall: perCall(row.inclusive),
      exclusivePerCall: perCall(row.exclusive), events };
  });
  out.sort((a, b) => (b.inclusivePerCall ?? 0) * b.calls - (a.inclusivePerCall ?? 0) * a.calls
    || a.function.localeCompare(b.function) || (a.tid ?? 0) - (b.tid ?? 0));
  return { rows: out, events: eventNames };
}

/** Events the runtime warned it could not count (`event NAME not available on this machine`). */
export function unavailableEvents(warnings) {
  const out = [];
  for (const w of warnings) {
    const m = /--counters: event (\S+) not available on this machine/.exec(w);
    if (m && !out.includes(m[1])) out.push(m[1]);
  }
  return out;
}

const time = (ns) => (ns === null ? '–' : ns >= 1e6 ? `${(ns / 1e6).toFixed(3)} ms`
  : ns >= 1e3 ? `${(ns / 1e3).toFixed(3)} µs` : `${ns.toFixed(0)} ns`);
const count = (v) => (v === null ? '–' : v >= 100 ? v.toFixed(0) : v.toFixed(1));

function lineChart(rows, key, label, width, color) {
  const points = rows.filter((r) => r[key] !== null);
  return Plot.plot({
    width, height: 190, marginLeft: 50, marginRight: 12, marginTop: 22, marginBottom: 34,
    style: { fontSize: '11px', background: 'transparent', overflow: 'visible' },
    x: { label: 'time (s) →', labelAnchor: 'right', ticks: 6, grid: true },
    y: { label, labelAnchor: 'top', ticks: 5, grid: true, zero: true },
    marks: [
      Plot.lineY(points, { x: 't', y: key, stroke: color, strokeWidth: 1.6, className: `series-${key}` }),
      Plot.dot(points, { x: 't', y: key, fill: color, r: 2, className: `dots-${key}`,
        title: (d) => `${d.t.toFixed(2)} s: ${key === 'cpi' ? 'CPI' : 'utilisation'} ${d[key].toFixed(3)}` +
          (d.scaled < 1 ? `\n(scaled: counted ${(d.scaled * 100).toFixed(0)}% of the interval)` : '') }),
    ],
  });
}

function table(el, cls, rows, events, byThread) {
  const head = ['function', ...(byThread ? ['tid'] : []), 'calls', 'incl/call', 'excl/call',
    ...events.flatMap((e) => [`${e} incl/call`, `${e} excl/call`])];
  const body = el('tbody');
  for (const r of rows) {
    const cells = [el('td', { class: 'mono', text: r.function })];
    if (byThread) cells.push(el('td', { text: String(r.tid) }));
    cells.push(el('td', { text: r.calls.toLocaleString('en-US') }), el('td', { text: time(r.inclusivePerCall) }),
      el('td', { text: time(r.exclusivePerCall) }));
    for (const e of events) {
      const v = r.events[e];
      if (!v) {
        cells.push(el('td', { class: 'na', text: 'n/a', title: 'not available on this machine' }),
          el('td', { class: 'na', text: 'n/a', title: 'not available on this machine' }));
        continue;
      }
      const note = v.share < 1 ? `*` : '';
      const title = v.share < 1 ? `scaled: counted in ${(v.share * 100).toFixed(0)}% of the calls (event sets cycle by call count, or a reload changed the events)` : '';
      cells.push(el('td', { text: count(v.inclusive) + note, title }), el('td', { text: count(v.exclusive) + note, title }));
    }
    body.append(el('tr', { 'data-function': r.function }, ...cells));
  }
  return el('table', { class: `counters-table ${cls}` }, el('thead', {}, el('tr', {}, ...head.map((h) => el('th', { text: h })))), body);
}

/** The counters panel for the profiles' interval and function records. */
export function renderCounters(el, { intervals, functions, warnings, width }) {
  const section = el('section', { class: 'panel', id: 'counters-section' }, el('h2', { text: 'Counters' }));
  if (intervals.length) {
    const rows = intervalRows(intervals);
    const chartWidth = Math.max(300, Math.floor((width - 60) / 2));
    const util = el('div', { class: 'counters-chart', id: 'utilisation-chart' },
      el('h3', { text: 'CPU utilisation (task-clock / interval, CPUs)' }),
      lineChart(rows, 'utilisation', '↑ CPUs utilised', chartWidth, '#2563eb'));
    const missing = cpiMissing(intervals);
    const cpi = el('div', { class: 'counters-chart', id: 'cpi-chart' }, el('h3', { text: 'CPI (cycles / instructions)' }));
    if (missing) cpi.append(el('p', { class: 'counters-missing', text: missing }));
    else cpi.append(lineChart(rows, 'cpi', '↑ cycles per instruction', chartWidth, '#d97706'));
    const scaled = rows.filter((r) => r.scaled < 1).length;
    section.append(el('div', { class: 'counters-charts' }, util, cpi));
    if (scaled) section.append(el('p', { class: 'counters-note', text: `${scaled} interval(s) multiplexed: counts scaled by time enabled / time running` }));
  }
  if (functions.length) {
    const unavailable = unavailableEvents(warnings);
    const perFunction = functionRows(functions, { unavailable });
    const perThread = functionRows(functions, { unavailable, byThread: true });
    section.append(el('h3', { text: 'Per function (per call; exclusive leaves out selected callees; time is thread CPU time)' }),
      table(el, 'counters-functions', perFunction.rows, perFunction.events, false),
      el('h3', { text: 'Per thread' }), table(el, 'counters-threads', perThread.rows, perThread.events, true));
    if (unavailable.length) {
      section.append(el('p', { class: 'counters-missing', text: `n/a: ${unavailable.join(', ')} not available on this machine (see the warnings)` }));
    }
    if (perFunction.rows.some((r) => Object.values(r.events).some((v) => v && v.share < 1))) {
      section.append(el('p', { class: 'counters-note', text: '* scaled: the event counted in only some calls (event sets cycle by call count, or a reload changed the events); per call = count × calls / calls counted' }));
    }
  }
  return section;
}
