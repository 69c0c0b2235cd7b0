// Golden vectors shared with the C++ tests (tests/unit/analysis): the viewer's parser and analysis
// must reproduce tests/fixtures/profiles/golden/*.expected.json, and reject bad files with clear messages.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseProfile } from '../src/parse.js';
import { analyse, mulberry32, fnv1a } from '../src/analysis.js';

const fixtures = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'tests', 'fixtures', 'profiles');
const load = (name) => parseProfile(readFileSync(join(fixtures, name), 'utf8'), name);

function goldenOf(report) {
  const lines = {};
  const estimate = (e) => ({ value: e ? e.value : null, ci_low: e ? e.ciLow : null, ci_high: e ? e.ciHigh : null });
  for (const line of report.lines) {
    const points = {};
    for (const p of line.points) {
      points[p.name] = {
        kind: p.kind, baseline: p.baseline, impact: estimate(p.impact), slope: estimate(p.slope),
        contention: p.contention,
        curve: p.curve.map((c) => ({ speedup: c.speedup, program_speedup: c.programSpeedup, ci_low: c.ciLow,
          ci_high: c.ciHigh, n_experiments: c.experiments })),
      };
    }
    lines[line.line] = { experiments: line.experiments, speedups: line.speedups,
      phase_correction: { applied: line.phase.applied, factor: line.phase.factor }, points };
  }
  return lines;
}

function matches(expected, actual, tolerance, where) {
  if (expected !== null && typeof expected === 'object' && !Array.isArray(expected)) {
    assert.ok(actual && typeof actual === 'object', `${where}: expected an object`);
    for (const key of Object.keys(expected)) {
      assert.ok(key in actual, `${where}.${key} missing`);
      matches(expected[key], actual[key], tolerance, `${where}.${key}`);
    }
  } else if (Array.isArray(expected)) {
    assert.equal(actual.length, expected.length, `${where}: length`);
    expected.forEach((e, i) => matches(e, actual[i], tolerance, `${where}[${i}]`));
  } else if (typeof expected === 'number') {
    assert.equal(typeof actual, 'number', `${where}: expected ${expected}, got ${actual}`);
    assert.ok(Math.abs(expected - actual) <= tolerance, `${where}: expected ${expected}, got ${actual}`);
  } else {
    assert.equal(actual, expected, where);
  }
}

function checkGolden(file, fixtureNames) {
  const golden = JSON.parse(readFileSync(join(fixtures, 'golden', file), 'utf8'));
  const o = golden.options;
  const report = analyse((fixtureNames ?? golden.fixtures).map(load),
    { bootstrap: o.bootstrap, seed: o.seed, phaseCorrection: o.phase_correction });
  matches(golden.lines, goldenOf(report), golden.tolerance, file);
}

for (const file of readdirSync(join(fixtures, 'golden')).filter((f) => f.endsWith('.expected.json'))) {
  test(`golden vectors: ${file}`, () => checkGolden(file));
}

test('combined runs reproduce the whole run', () => checkGolden('basic.expected.json', ['split-a.jsonl', 'split-b.jsonl']));

test('mulberry32 and fnv1a match their C++ twins', () => {
  const next = mulberry32(1);
  assert.deepEqual([next(), next(), next()], [2693262067, 11749833, 2265367787]);
  assert.equal(fnv1a('a.c:1\ndone'), fnv1a('a.c:1\ndone'));
  assert.equal(fnv1a(''), 2166136261);
  assert.equal(fnv1a('a'), 0xe40c292c);
});

test('Coz text and JSON Lines read alike', () => {
  const text = load('coz-basic.coz');
  const jsonl = load('coz-basic.coz.jsonl');
  assert.equal(text.format, 'coz-text');
  assert.equal(jsonl.format, 'coz-json');
  assert.equal(text.experiments.length, 180);
  assert.deepEqual(jsonl.experiments, text.experiments);
});

test('bad files are rejected with clear messages', () => {
  assert.throws(() => load('empty.jsonl'), /empty profile/);
  assert.throws(() => load('invalid.jsonl'), /not a profile/);
  assert.throws(() => load('unknown-version.jsonl'), /version 99; this viewer reads format 'whatif-profile' version 1/);
  const truncated = load('truncated.jsonl');
  assert.equal(truncated.experiments.length, 50);
  assert.match(truncated.notes[0], /incomplete last line/);
});

test('a truncated last Coz line is ignored', () => {
  const profile = parseProfile('startup\ttime=1\nexperiment\tselected=a.c:1\tspeedup=0.50\tduration=100\t' +
    'selected-samples=3\nthroughput-point\tname=x\tdelta=7\nthroughput-point\tname=y\tdel', 'cut.coz');
  assert.equal(profile.experiments.length, 1);
  assert.deepEqual(profile.experiments[0].points, [{ name: 'x', kind: 'throughput', delta: 7 }]);
  assert.equal(profile.experiments[0].selectedSamples, 3);
  assert.equal(profile.notes.length, 1);
});

test('latency: a shorter latency is a positive speedup', () => {
  const report = analyse([load('latency.jsonl')]);
  assert.equal(report.lines[0].line, '/srv/server.cpp:210');
  assert.ok(report.lines[0].points[0].impact.value > 0.1);
});
