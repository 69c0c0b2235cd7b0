// The stall analysis in the viewer (docs/stalls.md): the procedure table (dcpiprof), the Figure-4
// summary and the annotated disassembly with stall bubbles beside the source, from the `stalls`
// records `whatif run` appends after the run (the viewer never disassembles). Pure row builders for
// the tests, and one DOM renderer; all record text goes through textContent.

const DYNAMIC = ['I-cache', 'D-cache', 'DTLB', 'store buffer', 'branch mispredict', 'long-latency unit (div/sqrt)'];
const STATIC = ['load latency (L1 hit)', 'divider/sqrt latency', 'dependency chain'];
const num = (v) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
const percent = (v) => `${(100 * v).toFixed(1)}%`;

/** Procedures by samples, most first: {procedure, object, samples, share, cumulative, bestCpi, actualCpi}. */
export function procedureRows(records) {
  const total = records.reduce((sum, r) => sum + num(r.samples), 0);
  let cumulative = 0;
  return [...records].sort((a, b) => num(b.samples) - num(a.samples) || String(a.procedure).localeCompare(String(b.procedure)))
    .map((r) => {
      cumulative += num(r.samples);
      return {
        procedure: String(r.procedure ?? '?'), object: String(r.object ?? ''), samples: num(r.samples),
        share: total > 0 ? num(r.samples) / total : 0, cumulative: total > 0 ? cumulative / total : 0,
        bestCpi: num(r.summary?.best_case_cpi), actualCpi: num(r.summary?.actual_cpi),
      };
    });
}

/** Figure 4 as [label, text] rows: each cause's range, unexplained, subtotals, execution. */
export function summaryRows(record) {
  const s = record.summary ?? {};
  const total = num(s.total_cycles) || 1;
  const share = (cycles) => percent(num(cycles) / total);
  const causes = s.causes ?? {};
  const rows = [['Best-case CPI', num(s.best_case_cpi).toFixed(2)], ['Actual CPI', num(s.actual_cpi).toFixed(2)]];
  for (const name of DYNAMIC) {
    const [low, high] = causes[name] ?? [0, 0];
    rows.push([name, `${share(low)} to ${share(high)}`]);
  }
  rows.push(['Unexplained stall', share((causes.unexplained ?? [0, 0])[1])]);
  rows.push(['Unexplained gain', share(s.unexplained_gain)]);
  rows.push(['Subtotal dynamic', share(s.dynamic_stall)]);
  for (const name of STATIC) rows.push([name, share((causes[name] ?? [0, 0])[1])]);
  rows.push(['Subtotal static', share(s.static_stall)]);
  rows.push(['Execution', share(s.execution)]);
  rows.push(['Frequencies from', String(s.frequencies_from ?? '?')]);
  return rows;
}

/** The annotated listing: {kind: 'source'|'bubble'|'instruction', ...} rows in address order; a source
    row carries the line's text when a `source` record has it. */
export function annotatedRows(record, sources = []) {
  const text = (location) => {
    const colon = location.lastIndexOf(':');
    const file = location.slice(0, colon), line = Number(location.slice(colon + 1));
    for (const s of sources) {
      if (s.file === file && line >= s.firstLine && line < s.firstLine + s.lines.length) return s.lines[line - s.firstLine];
    }
    return null;
  };
  const rows = [];
  let lastSource = '';
  for (const i of record.instructions ?? []) {
    const source = String(i.source ?? '');
    if (source && source !== lastSource) {
      rows.push({ kind: 'source', location: source, text: text(source) });
      lastSource = source;
    }
    if (num(i.static_stall) >= 0.5) {
      rows.push({ kind: 'bubble', dynamic: false, cycles: num(i.static_stall), label: String(i.static_cause ?? ''), culprits: [] });
    }
    const culprits = Array.isArray(i.culprits) ? i.culprits : [];
    if (culprits.length) {
      rows.push({ kind: 'bubble', dynamic: true, cycles: num(i.dynamic_stall),
        label: culprits.map((c) => String(c.letter ?? '?')).join(''),
        culprits: culprits.map((c) => `${c.cause}${c.instruction ? ` ← ${Number(c.instruction).toString(16)}` : ''}`) });
    }
    rows.push({ kind: 'instruction', address: Number(i.address).toString(16), text: String(i.text ?? ''),
      samples: num(i.samples), executions: num(i.executions), confidence: String(i.confidence ?? ''),
      cpi: num(i.cpi), best: num(i.best_case), head: Boolean(i.block_head) });
  }
  return rows;
}

/** The stalls panel for `records` (one per procedure), `sources` the profiles' source snippets. */
export function renderStalls(el, records, sources) {
  const section = el('section', { class: 'panel', id: 'stalls-section' },
    el('h2', { text: `Stalls (${records.length} procedure${records.length === 1 ? '' : 's'})` }));
  const rows = procedureRows(records);
  const detail = el('div', { class: 'stalls-detail' });
  const table = el('table', { class: 'stalls-procedures' }, el('thead', {}, el('tr', {},
    ...['samples', '%', 'cum%', 'procedure', 'object', 'best CPI', 'actual CPI'].map((c) => el('th', { text: c })))));
  const body = el('tbody');
  const show = (name) => {
    const record = records.find((r) => String(r.procedure) === name);
    detail.replaceChildren();
    if (!record) return;
    for (const tr of body.children) tr.classList.toggle('selected', tr.dataset.procedure === name);
    const summary = el('table', { class: 'stalls-summary' });
    for (const [label, value] of summaryRows(record)) summary.append(el('tr', {}, el('th', { text: label }), el('td', { class: 'mono', text: value })));
    const listing = el('table', { class: 'stalls-listing mono' }, el('thead', {}, el('tr', {},
      ...['address', 'instruction', 'samples', 'executions', 'conf', 'CPI', 'best'].map((c) => el('th', { text: c })))));
    const rowsBody = el('tbody');
    for (const row of annotatedRows(record, sources)) {
      if (row.kind === 'source') {
        rowsBody.append(el('tr', { class: 'stalls-source' }, el('td', { colSpan: 7,
          text: row.text === null ? row.location : `${row.location}  ${row.text.trim()}` })));
      } else if (row.kind === 'bubble') {
        rowsBody.append(el('tr', { class: row.dynamic ? 'stalls-bubble dynamic' : 'stalls-bubble static' },
          el('td', { colSpan: 7, text: `${row.label} … ${row.cycles.toFixed(1)}cy ${row.dynamic ? 'dynamic' : 'static'}` +
            (row.culprits.length ? `: ${row.culprits.join(', ')}` : '') })));
      } else {
        rowsBody.append(el('tr', { class: row.head ? 'stalls-instruction head' : 'stalls-instruction' },
          el('td', { text: row.address }), el('td', { text: row.text }), el('td', { text: String(row.samples) }),
          el('td', { text: row.executions > 0 ? row.executions.toPrecision(3) : '–' }), el('td', { text: row.confidence }),
          el('td', { text: row.cpi.toFixed(2) }), el('td', { text: row.best.toFixed(2) })));
      }
    }
    listing.append(rowsBody);
    detail.append(el('h3', { text: `${name} — where its cycles go` }), summary, el('h3', { text: 'Annotated disassembly' }), listing);
  };
  for (const r of rows) {
    const tr = el('tr', { 'data-procedure': r.procedure },
      el('td', { text: String(r.samples) }), el('td', { text: percent(r.share) }), el('td', { text: percent(r.cumulative) }),
      el('td', { class: 'mono', text: r.procedure }), el('td', { class: 'mono', text: r.object.split('/').pop() }),
      el('td', { text: r.bestCpi.toFixed(2) }), el('td', { text: r.actualCpi.toFixed(2) }));
    tr.addEventListener('click', () => show(r.procedure));
    body.append(tr);
  }
  table.append(body);
  section.append(table, detail);
  if (rows.length) show(rows[0].procedure);
  return section;
}
