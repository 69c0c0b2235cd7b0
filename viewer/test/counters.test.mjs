// The counters view's rows (src/counters.js) from the fixtures' `counter_interval` and `counters`
// records: utilisation and CPI per interval, why CPI is missing without a PMU, and the function table
// with events scaled by the calls they counted in (event sets cycled by call count).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseProfile } from '../src/parse.js';
import { intervalRows, cpiMissing, functionRows, unavailableEvents } from '../src/counters.js';

const fixtures = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'tests', 'fixtures', 'profiles');
const load = (name) => parseProfile(readFileSync(join(fixtures, name), 'utf8'), name);
const close = (a, b) => assert.ok(Math.abs(a - b) < 1e-9, `${a} != ${b}`);

test('utilisation and CPI per interval, with the multiplexed interval marked', () => {
  const profile = load('counters-pmu.jsonl');
  const rows = intervalRows(profile.counterIntervals);
  assert.equal(rows.length, 10);
  close(rows[0].t, 0.1);
  close(rows[0].utilisation, 1.5);
  close(rows[9].utilisation, 0.5);
  close(rows[0].cpi, 0.5);
  close(rows[9].cpi, 2.0);
  assert.equal(rows[7].scaled, 0.5);
  assert.equal(rows[6].scaled, 1);
  assert.equal(cpiMissing(profile.counterIntervals), null);
});

test('without a PMU: utilisation from task-clock, and CPI says it needs a PMU', () => {
  const profile = load('counters-nopmu.jsonl');
  const rows = intervalRows(profile.counterIntervals);
  close(rows[2].utilisation, 1.5);
  assert.ok(rows.every((r) => r.cpi === null));
  assert.match(cpiMissing(profile.counterIntervals), /CPI needs a hardware PMU: instructions not available on this machine \(this machine has no hardware PMU for it\)/);
});

test('per function: per-call time and events scaled by the share of calls they counted in', () => {
  const profile = load('counters-pmu.jsonl');
  const { rows, events } = functionRows([...profile.functionCounters.values()]);
  assert.deepEqual(events, ['cycles']);
  const parent = rows.find((r) => r.function === 'parent');
  assert.equal(parent.calls, 20);
  close(parent.inclusivePerCall, 5e6);
  close(parent.exclusivePerCall, 3e6);
  close(parent.events.cycles.inclusive, 2e6);
  close(parent.events.cycles.exclusive, 1.2e6);
  assert.equal(parent.events.cycles.share, 0.5);
  assert.equal(rows[0].function, 'parent', 'most inclusive time first');
  const threads = functionRows([...profile.functionCounters.values()], { byThread: true }).rows;
  assert.deepEqual(threads.filter((r) => r.function === 'leaf').map((r) => r.tid), [100, 101]);
  close(threads.find((r) => r.function === 'leaf').events.cycles.inclusive, 4e5);
});

test('an event the runtime could not open is n/a, not zero', () => {
  const profile = load('counters-nopmu.jsonl');
  const unavailable = unavailableEvents(profile.warnings);
  assert.deepEqual(unavailable, ['cycles']);
  const { rows } = functionRows([...profile.functionCounters.values()], { unavailable });
  assert.equal(rows[0].events.cycles, null);
  close(rows.find((r) => r.function === 'leaf').exclusivePerCall, 2e6);
});

test('the last counters record of a thread and function wins (the runtime writes cumulative totals)', () => {
  const text = readFileSync(join(fixtures, 'counters-pmu.jsonl'), 'utf8') +
    '{"type":"counters","tid":100,"function":"parent","calls":30,"inclusive_ns":150000000,"exclusive_ns":90000000,"events":{},"elapsed_ns":2000000000}\n';
  const { rows } = functionRows([...parseProfile(text, 'x').functionCounters.values()]);
  assert.equal(rows.find((r) => r.function === 'parent').calls, 40);
});

test('events a reload changed: both shown, each per call over the calls it counted in', () => {
  // What `whatif ctl PID reload` leaves: page-faults counted in the 5 calls before the reload,
  // task-clock in the 9 after (the runtime writes the calls each counted in as the third number).
  const header = readFileSync(join(fixtures, 'counters-nopmu.jsonl'), 'utf8').split('\n')[0];
  const leaf = {
    type: 'counters', tid: 4242, function: 'leaf', calls: 14, inclusive_ns: 28e6, exclusive_ns: 28e6,
    elapsed_ns: 1e9, events: { 'page-faults': [10, 10, 5], 'task-clock': [18e6, 18e6, 9] },
  };
  const profile = parseProfile(`${header}\n${JSON.stringify(leaf)}\n`, 'reload.jsonl');
  const { rows, events } = functionRows([...profile.functionCounters.values()]);
  assert.deepEqual(events, ['page-faults', 'task-clock']);
  close(rows[0].events['task-clock'].inclusive, 2e6);
  close(rows[0].events['task-clock'].share, 9 / 14);
  close(rows[0].events['page-faults'].inclusive, 2);
  close(rows[0].events['page-faults'].share, 5 / 14);
});
