// The hot-path model (branches.js): blocks, edges and paths of a `branch_flow` record, and the
// source rows beside the graph.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { flowModel, sourceRows } from '../src/branches.js';
import * as fixture from './branches-fixture.mjs';

const sources = [{ file: fixture.source.file, firstLine: fixture.source.first_line, lines: fixture.source.lines }];

test('blocks keep their counts and lines; malformed edges are dropped', () => {
  const model = flowModel(fixture.loop);
  assert.equal(model.function, 'classify');
  assert.deepEqual(model.blocks.map((b) => [b.line, b.count]), [[10, 1], [11, 400], [12, 100], [13, 300], [14, 400]]);
  assert.equal(model.edges.length, 7, 'the edge from block 9 (no such block) is dropped');
  const back = model.edges.find((e) => e.from === 4 && e.to === 1);
  assert.equal(back.back, true);
  assert.equal(model.edges.find((e) => e.to === -1).kind, 'leaves');
});

test('a path lights up the edges between its blocks and the back edge that closes it', () => {
  const model = flowModel(fixture.loop);
  const [hot, cold] = model.paths;
  assert.equal(hot.count, 290);
  const edges = (path) => path.edges.map((i) => [model.edges[i].from, model.edges[i].to, model.edges[i].kind]);
  assert.deepEqual(edges(hot), [[1, 3, 'taken'], [3, 4, 'fall-through'], [4, 1, 'taken']]);
  assert.deepEqual(edges(cold), [[1, 2, 'fall-through'], [2, 4, 'taken'], [4, 1, 'taken']]);
});

test('source rows span the function with the most any block on the line ran', () => {
  const rows = sourceRows(flowModel(fixture.loop), sources);
  assert.deepEqual(rows.map((r) => r.line), [10, 11, 12, 13, 14]);
  assert.equal(rows[1].text, '    if (i & 3)');
  assert.equal(rows[1].count, 400);
  assert.deepEqual(rows[3].blocks, [3]);
  assert.deepEqual(sourceRows(flowModel({ ...fixture.loop, blocks: fixture.loop.blocks.map((b) => b.slice(0, 3)) }), sources), []);
});
