// The viewer's stall rows (src/stalls.js) from `stalls` records: the procedure table, the Figure-4
// summary and the annotated listing with bubbles and source text.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { procedureRows, summaryRows, annotatedRows } from '../src/stalls.js';
import { chase, helper } from './stalls-fixture.mjs';

test('procedures are listed by samples with their share and cumulative share', () => {
  const rows = procedureRows([helper, chase]);
  assert.deepEqual(rows.map((r) => r.procedure), ['chase', 'helper']);
  assert.equal(rows[0].share, 0.9);
  assert.equal(rows[1].cumulative, 1);
  assert.equal(rows[0].actualCpi, 76.2);
});

test('the summary gives each cause its range as a share of the cycles', () => {
  const rows = Object.fromEntries(summaryRows(chase));
  assert.equal(rows['D-cache'], '88.9% to 98.9%');
  assert.equal(rows.DTLB, '0.0% to 10.0%');
  assert.equal(rows['I-cache'], '0.0% to 0.0%');
  assert.equal(rows['Best-case CPI'], '1.12');
  assert.equal(rows['load latency (L1 hit)'], '0.9%');
});

test('the listing puts bubbles with culprits before the stalled instruction, under its source line', () => {
  const sources = [{ file: '/src/micro.c', firstLine: 17, lines: ['{', '  for (long i = 0; i < n; ++i) p = p->next;'] }];
  const rows = annotatedRows(chase, sources);
  assert.equal(rows[0].kind, 'source');
  assert.match(rows[0].text, /p = p->next/);
  const load = rows.findIndex((r) => r.kind === 'instruction' && r.address === '1524');
  assert.equal(rows[load - 1].kind, 'bubble');
  assert.equal(rows[load - 1].label, 'dt');
  assert.ok(rows[load - 1].dynamic);
  assert.deepEqual(rows[load - 1].culprits, ['D-cache ← 1524', 'DTLB ← 1524']);
  assert.equal(rows[load - 2].kind, 'bubble');
  assert.equal(rows[load - 2].dynamic, false, 'the static load-latency bubble comes first');
});
