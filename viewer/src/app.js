// The viewer page: loads profiles (embedded by `whatif view`, file picker, drag and drop, ?profile=URL),
// analyses them together, and renders the summary, controls and one speedup plot per line. All
// profile-derived text goes through textContent, never innerHTML.
import { parseProfile } from './parse.js';
import { analyse, ensureLineIntervals, compareLines, curvePointAt, DEFAULT_OPTIONS } from './analysis.js';
import { speedupChart, PALETTE } from './chart.js';
import { renderStalls } from './stalls.js';
import { renderCounters } from './counters.js';
import { renderBranchFlows } from './branches.js';

const $ = (id) => document.getElementById(id);
const state = { profiles: [], report: null, pointNames: [], visible: [], observer: null };

function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (key === 'class') node.className = value;
    else if (key === 'text') node.textContent = value;
    else if (key.startsWith('data-')) node.setAttribute(key, value);
    else node[key] = value;
  }
  for (const child of children) if (child !== null && child !== undefined) node.append(child);
  return node;
}

const pct = (v, digits = 1) => (v === null || v === undefined || !Number.isFinite(v) ? '–'
  : `${v >= 0 ? '+' : '−'}${Math.abs(v * 100).toFixed(digits)}%`);
const seconds = (ns) => (ns >= 1e9 ? `${(ns / 1e9).toFixed(2)} s` : `${(ns / 1e6).toFixed(1)} ms`);

function showMessage(title, detail) {
  $('messages').append(el('div', { class: 'message' }, el('strong', { text: title }), el('span', { text: detail })));
}

function classify(error) {
  const m = String(error.message || error);
  if (m.includes('empty profile')) return 'Empty profile';
  if (m.includes('unsupported profile')) return 'Unsupported profile version';
  return 'Invalid profile';
}

function addProfile(name, text) {
  try {
    state.profiles.push(parseProfile(text, name));
    return true;
  } catch (error) {
    showMessage(classify(error), error.message);
    return false;
  }
}

// ---- summary --------------------------------------------------------------------------------------

function renderSummary() {
  const { report, profiles } = state;
  const summary = $('summary');
  summary.replaceChildren();
  const first = profiles[0];
  const program = first.command.length ? first.command[0].split('/').pop()
    : first.format === 'whatif' ? '(unknown)' : '(not recorded by Coz)';
  const runtimes = profiles.map((p) => p.runtime).filter((t) => t > 0);
  const stat = (label, value) => el('div', { class: 'stat' }, el('div', { class: 'label', text: label }),
    el('div', { class: 'value', text: value }));
  summary.append(el('div', { class: 'summary-grid' },
    stat('program', program),
    stat('runtime', runtimes.length ? runtimes.map(seconds).join(' + ') : 'unknown (no runtime record)'),
    stat('experiments', report.experiments.toLocaleString('en-US')),
    stat('lines', String(report.lines.length)),
    stat('progress points', String(report.points.length)),
    stat('phase correction', report.phaseCorrectedLines ? `${report.phaseCorrectedLines} of ${report.lines.length} lines`
      : 'not applied'),
    report.fixedSpeedup > 0 ? stat('fixed speedup', `${Math.round(report.fixedSpeedup * 100)}%, with its own baselines`) : null));
  if (first.command.length) summary.append(el('div', { class: 'command mono', text: `$ ${first.command.join(' ')}` }));
  summary.append(el('div', { class: 'profiles' }, el('span', { text: `${profiles.length} profile(s): ` }),
    el('span', { class: 'profile-names', text: profiles.map((p) => `${p.name} (${p.format})`).join(', ') })));
  const legend = el('div', { class: 'legend' });
  report.points.forEach((p, i) => {
    legend.append(el('span', { class: 'legend-item' },
      el('span', { class: 'swatch', style: `background:${PALETTE[i % PALETTE.length]}` }),
      el('span', { text: `${p.name} — ${p.kind}, ${p.meanVisits.toFixed(0)} ${p.kind === 'latency' ? 'arrivals' : 'visits'}/experiment, ` +
        (p.noiseKnown ? `noise ±${(p.noise * 100).toFixed(1)}%/experiment` : 'noise unknown') })));
  });
  summary.append(legend);
  const warnings = [
    ...profiles.flatMap((p) => p.warnings.map((w) => `${p.name}: ${w}`)),
    ...profiles.flatMap((p) => p.notes.map((n) => `${p.name}: ${n}`)),
    ...report.warnings,
  ];
  if (warnings.length) {
    summary.append(el('ul', { class: 'warnings' }, ...warnings.map((w) => el('li', { text: w }))));
  }
  summary.hidden = false;
}

// ---- branch records / stalls: only when a profile carries such records ----------------------------

function renderExtras() {
  const extras = $('extras');
  extras.replaceChildren();
  const intervals = state.profiles.flatMap((p) => p.counterIntervals);
  const functions = state.profiles.flatMap((p) => [...p.functionCounters.values()]);
  if (intervals.length || functions.length) {
    extras.append(renderCounters(el, { intervals, functions, warnings: state.profiles.flatMap((p) => p.warnings),
      width: extras.clientWidth || window.innerWidth - 48 }));
  }
  const stalls = state.profiles.flatMap((p) => p.stalls);
  if (stalls.length) extras.append(renderStalls(el, stalls, state.profiles.flatMap((p) => p.sources)));
  const flows = state.profiles.flatMap((p) => p.branchFlows);
  if (flows.length) extras.append(renderBranchFlows(el, flows, state.profiles.flatMap((p) => p.sources)));
  const sections = [['lbr', 'Branch records', 'lbr-section']];
  for (const [key, title, id] of sections) {
    const records = state.profiles.flatMap((p) => p[key]);
    if (!records.length) continue;
    const columns = [...new Set(records.flatMap((r) => Object.keys(r)))].filter((c) => c !== 'type').slice(0, 8);
    const table = el('table', {}, el('thead', {}, el('tr', {}, ...columns.map((c) => el('th', { text: c })))));
    const body = el('tbody');
    for (const record of records.slice(0, 50)) {
      body.append(el('tr', {}, ...columns.map((c) => el('td', { class: 'mono',
        text: typeof record[c] === 'object' ? JSON.stringify(record[c]) : String(record[c] ?? '') }))));
    }
    table.append(body);
    extras.append(el('section', { class: 'panel', id },
      el('h2', { text: `${title} (${records.length} record${records.length === 1 ? '' : 's'})` }), table));
  }
}

// ---- controls, sorting, filtering -----------------------------------------------------------------

// A location is FILE:LINE, or, in a program without debug info, a function: its symbol (`worker`,
// `ns::f()`) or OBJECT+0xOFFSET when fully stripped (docs/profile-format.md). Only a line ends in :NUMBER.
const FUNCTIONS = 'functions (no debug info)';
const isLine = (name) => /:\d+$/.test(name);
const fileOf = (line) => (isLine(line) ? line.slice(0, line.lastIndexOf(':')) : FUNCTIONS);
const measured = (line) => Math.max(0, ...line.points.map((p) => p.curve.length));
const lineMax = (line) => Math.max(...line.points.map((p) => (p.max ?? -Infinity)));
const lineMin = (line) => Math.min(...line.points.map((p) => (p.min ?? Infinity)));
const lineSlope = (line) => Math.max(...line.points.map((p) => (p.slope ? p.slope.value : -Infinity)));

// `rank` is the report's order (whatif report's too): lines with enough evidence first, by the impact's
// lower noise bound (analysis.js compareLines). The others sort by one number, evidence aside.
const SORTS = {
  rank: compareLines,
  impact: (a, b) => (b.rankImpact ?? -Infinity) - (a.rankImpact ?? -Infinity) || a.line.localeCompare(b.line),
  max: (a, b) => lineMax(b) - lineMax(a) || a.line.localeCompare(b.line),
  min: (a, b) => lineMin(a) - lineMin(b) || a.line.localeCompare(b.line),
  slope: (a, b) => lineSlope(b) - lineSlope(a) || a.line.localeCompare(b.line),
  name: (a, b) => a.line.localeCompare(b.line, 'en', { numeric: true }),
};

function setupControls() {
  const files = [...new Set(state.report.lines.map((l) => fileOf(l.line)))].sort();
  const select = $('file-filter');
  select.replaceChildren(el('option', { value: '', text: 'all files' }),
    ...files.map((f) => el('option', { value: f, text: f.split('/').slice(-2).join('/') })));
  const slider = $('min-points');
  slider.max = String(Math.max(2, ...state.report.lines.map(measured)));
  $('controls').hidden = false;
}

function sourceText(line) {
  const snippet = findSource(line.line);
  return snippet ? snippet.lines.join('\n') : '';
}

function applyView() {
  const sort = $('sort').value;
  const file = $('file-filter').value;
  const text = $('text-filter').value.trim().toLowerCase();
  const minPoints = Number($('min-points').value);
  const contentionOnly = $('contention-only').checked;
  $('min-points-value').textContent = String(minPoints);
  let lines = state.report.lines.filter((l) => measured(l) >= minPoints);
  if (file) lines = lines.filter((l) => fileOf(l.line) === file);
  if (text) lines = lines.filter((l) => l.line.toLowerCase().includes(text) || sourceText(l).toLowerCase().includes(text));
  if (contentionOnly) lines = lines.filter((l) => ensureLineIntervals(l, state.report.options).contention);
  lines = [...lines].sort(SORTS[sort] || SORTS.rank);
  state.visible = lines;
  $('count').textContent = `showing ${lines.length} of ${state.report.lines.length} lines`;
  renderPlots();
}

// ---- plots ------------------------------------------------------------------------------------------

let sourceIndex = null;
function findSource(lineName) {
  if (!sourceIndex) {
    sourceIndex = state.profiles.flatMap((p) => p.sources);
  }
  if (!isLine(lineName)) return null;
  const colon = lineName.lastIndexOf(':');
  const file = lineName.slice(0, colon);
  const number = Number(lineName.slice(colon + 1));
  const base = file.split('/').pop();
  return sourceIndex.find((s) => (s.file === file || s.file.endsWith(`/${base}`) || file.endsWith(`/${s.file}`))
    && number >= s.firstLine && number < s.firstLine + s.lines.length) || null;
}

function yDomain(lines) {
  let lo = -5, hi = 5;
  for (const line of lines) {
    for (const p of line.points) {
      for (const c of p.curve) {
        lo = Math.min(lo, c.programSpeedup * 100, (c.ciLow ?? c.programSpeedup) * 100);
        hi = Math.max(hi, c.programSpeedup * 100, (c.ciHigh ?? c.programSpeedup) * 100);
      }
    }
  }
  const pad = (hi - lo) * 0.06;
  return [Math.max(-100, lo - pad), Math.min(100, hi + pad)];
}

function metric(label, value, sign) {
  return el('span', {}, `${label} `, el('b', { class: sign === undefined ? '' : sign >= 0 ? 'pos' : 'neg', text: value }));
}

/** Impact, slope and counts; CIs once the line's bootstrap has run (ensureLineIntervals). */
function metricsOf(line) {
  const metrics = el('div', { class: 'metrics' });
  const fixed = state.report.fixedSpeedup;
  for (const p of line.points) {
    const prefix = line.points.length > 1 ? `${p.name}: ` : '';
    if (fixed > 0) {
      // A --fixed-speedup run asked one question: the prediction at that speedup (whatif report's table).
      const at = curvePointAt(p, fixed);
      const label = `${prefix}at ${Math.round(fixed * 100)}%`;
      if (!at) {
        metrics.append(metric(label, 'not measured'));
        continue;
      }
      const ci = at.ciLow !== null ? ` [${pct(at.ciLow)}, ${pct(at.ciHigh)}]` : '';
      metrics.append(metric(label, `${pct(at.programSpeedup)}${ci}`, at.programSpeedup));
      const base = curvePointAt(p, 0);
      metrics.append(metric('sped', String(at.experiments)), metric('baselines', String(base ? base.experiments : 0)));
      continue;
    }
    if (p.impact) {
      const ci = p.impact.ciLow !== null ? ` [${pct(p.impact.ciLow)}, ${pct(p.impact.ciHigh)}]` : '';
      metrics.append(metric(`${prefix}impact`, `${pct(p.impact.value)}${ci}`, p.impact.value));
    } else {
      metrics.append(metric(`${prefix}impact`, p.baseline === 'none' ? 'no baseline' : '–'));
    }
    if (p.slope) metrics.append(metric('slope', `${p.slope.value >= 0 ? '+' : ''}${p.slope.value.toFixed(2)}`));
  }
  if (!(fixed > 0)) {
    metrics.append(metric('experiments', String(line.experiments)));
    metrics.append(metric('speedups', String(line.speedups)));
  }
  if (line.phase.applied) metrics.append(metric('phase ×', line.phase.factor.toFixed(2)));
  return metrics;
}

/** A card with the line's name, metrics and source; the chart is drawn when it scrolls into view. */
function card(line, rank) {
  const isFunction = !isLine(line.line);
  const colon = isFunction ? line.line.length : line.line.lastIndexOf(':');
  const path = line.line.slice(0, colon);
  const dir = !isFunction && path.includes('/') ? path.slice(0, path.lastIndexOf('/') + 1) : '';
  const title = el('h3', { title: line.line },
    el('span', { class: 'rank', text: `#${rank}` }),
    el('span', { class: 'name', text: isFunction ? line.line : `${path.slice(dir.length)}:${line.line.slice(colon + 1)}` }),
    dir ? el('span', { class: 'dir', text: dir.length > 40 ? `…${dir.slice(-40)}` : dir }) : null);
  if (isFunction) {
    title.append(el('span', { class: 'badge note', text: 'function',
      title: 'the program has no debug info: whatif sped up this whole function, not one line' }));
  }
  if (line.points.some((p) => p.baseline === 'run')) title.append(el('span', { class: 'badge note', text: 'run baseline' }));
  // One non-zero speedup is what a --fixed-speedup run measures by design, not a lack of evidence.
  const weak = line.rankImpact !== null && !line.enoughEvidence && !(state.report.fixedSpeedup > 0);
  if (weak) {
    title.append(el('span', { class: 'badge weak', text: 'not enough evidence',
      title: 'fewer than 2 non-zero speedups, 3 experiments, or 10 samples of the line in its sped experiments: ' +
        'ranked after the better-measured lines' }));
  }
  const article = el('article', { class: weak ? 'card weak' : 'card', 'data-line': line.line }, title, metricsOf(line),
    el('div', { class: 'chart' }));
  const snippet = findSource(line.line);
  if (snippet) {
    const number = Number(line.line.slice(colon + 1));
    const pre = el('pre', { class: 'source' });
    snippet.lines.forEach((text, i) => {
      const n = snippet.firstLine + i;
      pre.append(el('div', { class: n === number ? 'hit' : '' }, el('span', { class: 'num', text: String(n) }), text));
    });
    article.append(pre);
  }
  return article;
}

function drawChart(article, line) {
  const chart = article.querySelector('.chart');
  if (chart.dataset.rendered) return;
  ensureLineIntervals(line, state.report.options);
  article.querySelector('.metrics').replaceWith(metricsOf(line));
  if (line.contention) {
    article.classList.add('contention');
    article.querySelector('h3').append(el('span', { class: 'badge contention', text: 'contention' }));
  }
  const width = Math.max(280, chart.clientWidth || 400);
  chart.append(speedupChart(line, { width, yDomain: state.yDomain, pointNames: state.pointNames }));
  chart.dataset.rendered = '1';
}

/** Plots drawn before the page reports ready: what fits the first screen (the rest draw on scroll). */
function eagerPlots() {
  const width = $('plots').clientWidth || window.innerWidth;
  const columns = Math.max(1, Math.floor((width + 14) / (400 + 14)));
  const rows = Math.max(1, Math.ceil(window.innerHeight / 340));
  return columns * rows;
}

function renderPlots() {
  const plots = $('plots');
  if (state.observer) state.observer.disconnect();
  plots.replaceChildren();
  state.renderedWidth = plots.clientWidth;
  state.yDomain = yDomain(state.visible.slice(0, 200));
  const byElement = new Map();
  state.observer = new IntersectionObserver((entries) => {
    for (const entry of entries) {
      if (!entry.isIntersecting) continue;
      drawChart(entry.target, byElement.get(entry.target));
      state.observer.unobserve(entry.target);
    }
  }, { rootMargin: '400px' });
  const fragment = document.createDocumentFragment();
  const articles = state.visible.map((line, i) => {
    const article = card(line, i + 1);
    byElement.set(article, line);
    fragment.append(article);
    return article;
  });
  plots.append(fragment);
  const eager = eagerPlots();
  articles.forEach((article, i) => {
    if (i < eager) drawChart(article, state.visible[i]);
    else state.observer.observe(article);
  });
}

// ---- loading ----------------------------------------------------------------------------------------

function refresh() {
  if (!state.profiles.length) {
    if (state.observer) state.observer.disconnect();
    $('plots').replaceChildren();
    $('extras').replaceChildren();
    $('summary').hidden = true;
    $('controls').hidden = true;
    $('empty-state').hidden = false;
    document.body.dataset.ready = '1';
    return;
  }
  const t0 = performance.now();
  sourceIndex = null;
  state.report = analyse(state.profiles, DEFAULT_OPTIONS, { eager: false });
  const t1 = performance.now();
  state.pointNames = state.report.points.map((p) => p.name);
  $('empty-state').hidden = true;
  renderSummary();
  renderExtras();
  setupControls();
  applyView();
  document.body.dataset.ready = '1';
  document.body.dataset.analyseMs = String(Math.round(t1 - t0));
  document.body.dataset.renderMs = String(Math.round(performance.now() - t1));
}

/** A new choice of files replaces what is shown; files chosen together combine. */
async function loadFiles(files) {
  state.profiles = [];
  $('messages').replaceChildren();
  delete document.body.dataset.ready;
  for (const file of files) addProfile(file.name, await file.text());
  refresh();
}

async function loadUrls(urls) {
  for (const url of urls) {
    try {
      const response = await fetch(url);
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      addProfile(url.split('/').pop() || url, await response.text());
    } catch (error) {
      showMessage('Cannot load profile', `${url}: ${error.message}. Browsers block fetch() from file:// pages; ` +
        'use `whatif view` to embed profiles, or open the file with the button.');
    }
  }
  refresh();
}

function init() {
  $('file-input').addEventListener('change', (event) => {
    loadFiles([...event.target.files]);
    event.target.value = '';
  });
  for (const id of ['sort', 'file-filter', 'min-points', 'contention-only']) $(id).addEventListener('input', applyView);
  $('text-filter').addEventListener('input', applyView);
  let depth = 0;
  window.addEventListener('dragenter', (e) => { e.preventDefault(); depth++; document.body.classList.add('dragging'); });
  window.addEventListener('dragleave', () => { if (--depth <= 0) { depth = 0; document.body.classList.remove('dragging'); } });
  window.addEventListener('dragover', (e) => e.preventDefault());
  window.addEventListener('drop', (e) => {
    e.preventDefault();
    depth = 0;
    document.body.classList.remove('dragging');
    if (e.dataTransfer.files.length) loadFiles([...e.dataTransfer.files]);
  });
  let resizeTimer = 0;
  window.addEventListener('resize', () => {
    clearTimeout(resizeTimer);
    // Charts have fixed widths: redraw them when the grid's width changed since they were drawn.
    resizeTimer = setTimeout(() => {
      if (state.report && $('plots').clientWidth !== state.renderedWidth) renderPlots();
    }, 200);
  });

  const t0 = performance.now();
  let embedded = [];
  try {
    embedded = JSON.parse($('whatif-profiles').textContent || '[]');
  } catch (error) {
    showMessage('Invalid embedded profiles', error.message);
  }
  const t1 = performance.now();
  for (const { name, text } of embedded) addProfile(String(name), String(text));
  document.body.dataset.embedMs = String(Math.round(t1 - t0));
  document.body.dataset.parseMs = String(Math.round(performance.now() - t1));
  const urls = new URLSearchParams(window.location.search).getAll('profile');
  if (urls.length) loadUrls(urls);
  else refresh();
  document.body.dataset.init = '1';
}

init();
