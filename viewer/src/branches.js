// Hot paths in the viewer: for each `branch_flow` record (`whatif run --lbr`), the function's basic
// blocks and edges drawn as a graph weighted by count, beside its source lines, and its hottest
// paths (click one to light its blocks and edges up). Pure model builders for the tests, and one
// DOM renderer; all record text goes through textContent.

const num = (v) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
const SVG = 'http://www.w3.org/2000/svg';
const KINDS = new Set(['taken', 'fall-through', 'leaves']);

/** FILE:LINE split into {file, line}; line 0 when there is none. */
function splitLocation(location) {
  const text = String(location ?? '');
  const colon = text.lastIndexOf(':');
  const line = colon > 0 ? Number(text.slice(colon + 1)) : NaN;
  return Number.isInteger(line) && line > 0 ? { file: text.slice(0, colon), line } : { file: '', line: 0 };
}

/** The record as {function, object, location, taken, blocks, edges, paths}, malformed entries dropped.
    blocks: {index, start, last, count, file, line}; edges: {from, to (-1: leaves), count, kind, back};
    paths: {count, blocks, edges (indices into edges)}. */
export function flowModel(record) {
  const blocks = (Array.isArray(record.blocks) ? record.blocks : [])
    .filter((b) => Array.isArray(b) && b.length >= 3)
    .map((b, index) => ({ index, start: num(b[0]), last: num(b[1]), count: num(b[2]), ...splitLocation(b[3]) }));
  const valid = (i) => Number.isInteger(i) && i >= 0 && i < blocks.length;
  const edges = (Array.isArray(record.edges) ? record.edges : [])
    .filter((e) => Array.isArray(e) && e.length >= 4 && valid(e[0]) && (e[1] === -1 || valid(e[1])) && KINDS.has(e[3]))
    .map((e) => ({ from: e[0], to: e[1], count: num(e[2]), kind: e[3], back: e[1] !== -1 && e[1] <= e[0] }));
  const paths = (Array.isArray(record.paths) ? record.paths : [])
    .filter((p) => Array.isArray(p) && p.length >= 2 && p.slice(1).every(valid))
    .map((p) => {
      const path = p.slice(1);
      const used = [];
      for (let i = 0; i + 1 < path.length; ++i) {
        const edge = edges.findIndex((e) => e.from === path[i] && e.to === path[i + 1]);
        if (edge >= 0) used.push(edge);
      }
      // The closing back edge: from the path's last block to its first.
      const closing = edges.findIndex((e) => e.from === path[path.length - 1] && e.to === path[0] && e.kind === 'taken');
      if (closing >= 0) used.push(closing);
      return { count: num(p[0]), blocks: path, edges: used };
    });
  return {
    function: String(record.function ?? '?'), object: String(record.object ?? ''), location: String(record.location ?? ''),
    taken: num(record.taken), blocks, edges, paths,
  };
}

/** The source lines the function spans, from the profiles' `source` snippets: {line, text, count,
    blocks} per line, count being the most any block starting on the line ran. [] without a snippet. */
export function sourceRows(model, sources = []) {
  const file = model.blocks.find((b) => b.file)?.file ?? splitLocation(model.location).file;
  const lines = model.blocks.filter((b) => b.file === file && b.line > 0).map((b) => b.line);
  if (!file || !lines.length) return [];
  const first = Math.min(...lines), last = Math.max(...lines);
  const rows = [];
  for (let line = first; line <= last; ++line) {
    const snippet = sources.find((s) => s.file === file && line >= s.firstLine && line < s.firstLine + s.lines.length);
    const onLine = model.blocks.filter((b) => b.file === file && b.line === line);
    rows.push({ line, text: snippet ? snippet.lines[line - snippet.firstLine] : null,
      count: Math.max(0, ...onLine.map((b) => b.count)), blocks: onLine.map((b) => b.index) });
  }
  return rows;
}

function svg(tag, attributes = {}, ...children) {
  const node = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, String(value));
  for (const child of children) node.append(child);
  return node;
}

/** The graph: blocks stacked in address order, edges as arcs on the right (backward edges further out). */
function drawGraph(model) {
  const ROW = 26, BOX = 18, WIDTH = 150, LEFT = 8;
  const maxBlock = Math.max(1, ...model.blocks.map((b) => b.count));
  const maxEdge = Math.max(1, ...model.edges.map((e) => e.count));
  const height = model.blocks.length * ROW + 10;
  const graph = svg('svg', { class: 'flow-graph', width: 420, height, viewBox: `0 0 420 ${height}` });
  const y = (index) => 5 + index * ROW + BOX / 2;
  const edgeLayer = svg('g');
  model.edges.forEach((edge, index) => {
    const width = 1 + 7 * (edge.count / maxEdge);
    let d;
    if (edge.to === -1) {
      d = `M ${LEFT + WIDTH} ${y(edge.from)} h 40`;
    } else if (edge.kind === 'fall-through') {
      d = `M ${LEFT + 20} ${y(edge.from) + BOX / 2} V ${y(edge.to) - BOX / 2}`;
    } else {
      const bulge = 20 + 12 * Math.abs(edge.to - edge.from) + (edge.back ? 30 : 0);
      d = `M ${LEFT + WIDTH} ${y(edge.from)} C ${LEFT + WIDTH + bulge} ${y(edge.from)}, ${LEFT + WIDTH + bulge} ${y(edge.to)}, ${LEFT + WIDTH + 4} ${y(edge.to)}`;
    }
    const path = svg('path', { d, class: `flow-edge ${edge.kind}${edge.back ? ' back' : ''}`, 'stroke-width': width.toFixed(1),
      'data-edge': index, 'data-count': edge.count }, svg('title'));
    path.firstChild.textContent = `${edge.kind}: ${edge.count}`;
    edgeLayer.append(path);
  });
  const blockLayer = svg('g');
  for (const block of model.blocks) {
    const heat = block.count / maxBlock;
    const group = svg('g', { class: 'flow-block', 'data-block': block.index, 'data-count': block.count });
    group.append(svg('rect', { x: LEFT, y: 5 + block.index * ROW, width: WIDTH, height: BOX, rx: 3,
      fill: `rgba(214, 69, 65, ${(0.08 + 0.82 * heat).toFixed(3)})` }));
    const label = svg('text', { x: LEFT + 6, y: 5 + block.index * ROW + 13 });
    label.textContent = `${block.line ? `L${block.line}` : block.start.toString(16)} ×${block.count}`;
    group.append(label);
    const title = svg('title');
    title.textContent = `0x${block.start.toString(16)}–0x${block.last.toString(16)} ran ${block.count} times`;
    group.append(title);
    blockLayer.append(group);
  }
  graph.append(edgeLayer, blockLayer);
  return graph;
}

/** The hot-paths panel for `records` (one per function), `sources` the profiles' source snippets. */
export function renderBranchFlows(el, records, sources) {
  const models = records.map(flowModel).sort((a, b) => b.taken - a.taken);
  const section = el('section', { class: 'panel', id: 'branch-flow-section' },
    el('h2', { text: `Hot paths (${models.length} function${models.length === 1 ? '' : 's'}, from branch records)` }));
  const list = el('table', { class: 'flow-functions' }, el('thead', {}, el('tr', {},
    ...['taken', 'function', 'where', 'blocks', 'paths'].map((c) => el('th', { text: c })))));
  const body = el('tbody');
  const detail = el('div', { class: 'flow-detail' });
  const show = (index) => {
    const model = models[index];
    for (const tr of body.children) tr.classList.toggle('selected', Number(tr.dataset.index) === index);
    detail.replaceChildren();
    const graph = drawGraph(model);
    const rows = sourceRows(model, sources);
    const maxCount = Math.max(1, ...rows.map((r) => r.count));
    const source = el('table', { class: 'flow-source mono' });
    for (const row of rows) {
      const bar = el('span', { class: 'flow-heat' });
      bar.style.width = `${Math.round(60 * row.count / maxCount)}px`;
      source.append(el('tr', { 'data-line': row.line, 'data-blocks': row.blocks.join(' ') },
        el('td', { class: 'flow-count', text: row.count ? String(row.count) : '' }), el('td', {}, bar),
        el('td', { class: 'flow-line', text: String(row.line) }), el('td', { class: 'flow-text', text: row.text ?? '' })));
    }
    const paths = el('table', { class: 'flow-paths' }, el('thead', {}, el('tr', {},
      ...['count', 'share', 'path (lines of its blocks)'].map((c) => el('th', { text: c })))));
    const pathBody = el('tbody');
    const total = model.paths.reduce((sum, p) => sum + p.count, 0);
    const highlight = (path) => {
      const blocks = new Set(path ? path.blocks : []), edges = new Set(path ? path.edges : []);
      for (const node of graph.querySelectorAll('.flow-block')) node.classList.toggle('on-path', blocks.has(Number(node.dataset.block)));
      for (const node of graph.querySelectorAll('.flow-edge')) node.classList.toggle('on-path', edges.has(Number(node.dataset.edge)));
      for (const tr of source.children) {
        tr.classList.toggle('on-path', tr.dataset.blocks.split(' ').some((b) => b !== '' && blocks.has(Number(b))));
      }
      for (const tr of pathBody.children) tr.classList.toggle('selected', path !== null && Number(tr.dataset.path) === model.paths.indexOf(path));
    };
    model.paths.forEach((path, i) => {
      const lines = path.blocks.map((b) => (model.blocks[b].line ? String(model.blocks[b].line) : model.blocks[b].start.toString(16)));
      const tr = el('tr', { 'data-path': i }, el('td', { text: String(path.count) }),
        el('td', { text: total ? `${(100 * path.count / total).toFixed(1)}%` : '–' }), el('td', { class: 'mono', text: lines.join(' → ') }));
      tr.addEventListener('click', () => highlight(path));
      pathBody.append(tr);
    });
    paths.append(pathBody);
    detail.append(el('h3', { text: `${model.function} — ${model.taken} taken branches` }),
      el('div', { class: 'flow-columns' }, el('div', { class: 'flow-graph-box' }, graph),
        rows.length ? source : el('p', { class: 'flow-nosource', text: 'no source lines (no debug info, or the source is not readable)' })),
      model.paths.length ? el('h3', { text: 'Hottest paths (one loop iteration each: from a backward branch to the next)' }) : null,
      model.paths.length ? paths : null);
    if (model.paths.length) highlight(model.paths[0]);
  };
  models.forEach((model, index) => {
    const tr = el('tr', { 'data-index': index }, el('td', { text: String(model.taken) }), el('td', { class: 'mono', text: model.function }),
      el('td', { class: 'mono', text: model.location.split('/').pop() }), el('td', { text: String(model.blocks.length) }),
      el('td', { text: String(model.paths.length) }));
    tr.addEventListener('click', () => show(index));
    body.append(tr);
  });
  list.append(body);
  section.append(list, detail);
  if (models.length) show(0);
  return section;
}
