// Golden vectors shared with the C++ tests (tests/unit/analysis): the viewer's parser and analysis
// must reproduce tests/fixtures/profiles/golden/*.expected.json, and reject bad files with clear messages.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseProfile } from '../src/parse.js';
import { analyse, ensureLineIntervals, mulberry32, fnv1a, commonFixedSpeedup, curvePointAt } from '../src/analysis.js';

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
        contention: p.contention, enough_evidence: p.enoughEvidence, rank_bound: p.rankBound,
        curve: p.curve.map((c) => ({ speedup: c.speedup, program_speedup: c.programSpeedup, ci_low: c.ciLow,
          ci_high: c.ciHigh, n_experiments: c.experiments })),
      };
    }
    lines[line.line] = { experiments: line.experiments, speedups: line.speedups,
      phase_correction: { applied: line.phase.applied, factor: line.phase.factor },
      enough_evidence: line.enoughEvidence, rank_bound: line.rankBound, points };
  }
  const noise = {};
  for (const p of report.points) {
    noise[p.name] = { known: p.noiseKnown, sigma: p.noiseKnown ? p.noise : null, degrees: p.noiseDegrees };
  }
  return { lines, ranking: report.lines.map((l) => l.line), noise };
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
  const actual = goldenOf(report);
  for (const key of ['lines', 'ranking', 'noise']) {
    if (key in golden) matches(golden[key], actual[key], golden.tolerance, `${file}.${key}`);
  }
}

for (const file of readdirSync(join(fixtures, 'golden')).filter((f) => f.endsWith('.expected.json'))) {
  test(`golden vectors: ${file}`, () => checkGolden(file));
}

test('experiments the runtime set aside are skipped, and counted in a note', () => {
  const profile = load('exact-set-aside.jsonl');
  assert.equal(profile.experiments.length, load('exact.jsonl').experiments.length);
  assert.equal(profile.setAside, 6);
  assert.match(profile.notes[0], /^set aside 6 experiment\(s\)/);
  checkGolden('exact.expected.json', ['exact-set-aside.jsonl']);
});

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

test('experiments with an effective duration at or below zero add like the rest', () => {
  const report = analyse([load('full-speedup.jsonl')], { bootstrap: 0, phaseCorrection: false });
  assert.deepEqual(report.warnings.filter((w) => w.includes('skipped')), []);
  const curve = report.lines[0].points[0].curve;
  assert.equal(curve[1].speedup, 1);
  assert.ok(Math.abs(curve[1].programSpeedup - (1 - 99.5 / 200)) < 1e-9, JSON.stringify(curve));
});

test('latency uses the in-flight count over effective time where the profile has it', () => {
  const effective = load('latency-effective.jsonl');
  assert.equal(effective.experiments[1].points[0].inFlightAvg, 1.5);
  assert.equal(load('latency.jsonl').experiments[0].points[0].inFlightAvg, 98.971665);
});

test('phase correction uses real time at high speedups (one thread, two phases)', () => {
  // Nobody pauses for the delays in a single-threaded program: the selected line's samples accrue in
  // real time, so eq. 8 needs real experiment durations and the real run time. Subtracting the delays
  // gave both lines 0.5 (B at x = 1: 0.40 instead of the actual 0.48).
  const report = analyse([load('phases-one-thread.jsonl')]);
  const b = report.lines.find((l) => l.line === 'src/stages.cpp:30');
  assert.ok(b.phase.applied);
  assert.ok(Math.abs(b.phase.factor - 0.6) < 1e-12, `factor ${b.phase.factor}`);
  const a = report.lines.find((l) => l.line === 'src/stages.cpp:12');
  assert.ok(Math.abs(a.phase.factor - 0.4) < 1e-12, `factor ${a.phase.factor}`);
  const full = b.points[0].curve.at(-1);
  assert.equal(full.speedup, 1);
  assert.ok(Math.abs(full.programSpeedup - 0.48) < 1e-12, `program speedup ${full.programSpeedup}`);
});

test('--fixed-line experiments are not phase-corrected again', () => {
  const report = analyse([load('fixed-line-phases.jsonl')]);
  const b = report.lines.find((l) => l.line === 'src/stages.cpp:30');
  assert.equal(b.phase.applied, false);
  assert.equal(b.phase.reason, '--fixed-line experiments ran in every phase');
  assert.ok(Math.abs(b.points[0].curve.at(-1).programSpeedup - 0.48) < 1e-12);
});

test('a --fixed-speedup run answers at its speedup, as whatif report does', () => {
  const profile = load('fixed-speedup.jsonl');
  // Two experiments at the end through which the program idled are left out, and said so.
  assert.equal(profile.idle, 2);
  assert.equal(profile.experiments.length, 12);
  assert.ok(profile.notes.some((n) => n.includes('left out 2 experiment(s)')));
  const report = analyse([profile]);
  assert.equal(report.fixedSpeedup, 0.6);
  const at = curvePointAt(report.lines[0].points[0], 0.6);
  assert.ok(Math.abs(at.programSpeedup - 0.2) < 1e-12);  // 0.8 ms an item against 1 ms (generate.py)
  assert.ok(at.ciLow < 0.2 && at.ciHigh > 0.2);
  assert.equal(at.experiments, 6);
  assert.equal(commonFixedSpeedup([load('exact.jsonl')]), -1);
  assert.equal(commonFixedSpeedup([load('coz-basic.coz')]), -1);
  assert.equal(commonFixedSpeedup([load('fixed-speedup.jsonl'), load('exact.jsonl')]), -1);
  assert.equal(commonFixedSpeedup([load('fixed-speedup.jsonl'), load('fixed-speedup.jsonl')]), 0.6);
});

test("Coz's wrapped unsigned duration and difference read as negative: dropped and skipped with notes", () => {
  const text = load('coz-wrapped.coz');
  const rows = [['0', '100000000', '2'], ['0', '100000000', '18446744073709551614'],
    ['1', '18446744073309551616', '2'], ['1', '50000000', '3']];
  const jsonl = parseProfile(['{"type":"startup","time":1}', ...rows.flatMap(([speedup, duration, difference]) => [
    `{"type":"experiment","selected":"w.c:1","speedup":${speedup},"duration":${duration},"selected_samples":5}`,
    '{"type":"throughput_point","name":"done","delta":10}',
    `{"type":"latency_point","name":"req","arrivals":9,"departures":9,"difference":${difference}}`])].join('\n') + '\n',
  'wrapped.json');
  assert.equal(text.experiments.length, 10);
  assert.equal(jsonl.experiments.length, 3);
  for (const [profile, dropped, skipped, delta] of [[text, 2, 3, 1000], [jsonl, 1, 1, 10]]) {
    let latency = 0;
    for (const experiment of profile.experiments) {
      assert.ok(experiment.effectiveDuration > 0 && experiment.effectiveDuration < 1e9, profile.name);
      assert.equal(experiment.points[0].delta, delta);
      for (const point of experiment.points) {
        if (point.kind !== 'latency') continue;
        latency++;
        assert.ok(point.inFlightAvg >= 0 && point.inFlightAvg < 10, profile.name);
      }
    }
    assert.equal(latency, profile.experiments.length - skipped, profile.name);
    assert.equal(profile.notes.length, 2, profile.name);
    assert.match(profile.notes[0], new RegExp(`dropped ${dropped} experiment\\(s\\)`));
    assert.match(profile.notes[1], new RegExp(`skipped ${skipped} latency observation\\(s\\)`));
  }
  const report = analyse([text]);
  const work = report.lines.find((l) => l.line === 'work.c:10');
  assert.equal(work.experiments, 10);
  const [done, req] = work.points;
  assert.equal(done.name, 'done');
  assert.ok(Math.abs(done.impact.value - 0.25) < 1e-9, `impact ${done.impact.value}`);
  assert.equal(req.kind, 'latency');
  assert.equal(req.curve.length, done.curve.length);
  req.curve.forEach((c, i) => assert.ok(Math.abs(c.programSpeedup - done.curve[i].programSpeedup) < 1e-9));
  assert.ok(!report.warnings.some((w) => w.includes('skipped')), report.warnings.join('; '));
});

test('a line almost never sampled in its sped experiments has no evidence (as the C++ test of that name)', () => {
  // memcached's merged report ranked first a line with one sample among its sped experiments.
  const text = readFileSync(join(fixtures, 'evidence.jsonl'), 'utf8');
  const withSamples = (perExperiment) => {
    let given = 0;
    return text.split('\n').map((l) => {
      if (!l.trim()) return l;
      const r = JSON.parse(l);
      if (r.type === 'experiment' && r.selected === 'src/evidence.cpp:10' && r.speedup > 0) {
        r.selected_samples = perExperiment(given++);
      }
      return JSON.stringify(r);
    }).join('\n');
  };
  const starved = analyse([parseProfile(withSamples(() => 1), 'starved')]);
  assert.equal(starved.lines[0].line, 'src/evidence.cpp:30');
  assert.equal(starved.lines.find((l) => l.line === 'src/evidence.cpp:10').enoughEvidence, false);
  assert.equal(starved.lines[0].enoughEvidence, true);
  const ten = analyse([parseProfile(withSamples((i) => (i < 2 ? 2 : 1)), 'ten')]);
  assert.equal(ten.lines[0].line, 'src/evidence.cpp:10');
});

test('ranks by evidence, not by single experiments (as the C++ test RanksByEvidenceNotBySingleExperiments)', () => {
  // evidence.jsonl: W (14 experiments, impact 0.1), M (one experiment at each of 0, 0.5, 1; impact 0.14),
  // S (one experiment at x = 1; impact 0.175). Ranking by impact put S first and gave M a zero-width
  // interval (bootstrap of single experiments).
  for (const [options, eager] of [[{}, true], [{ bootstrap: 0 }, true], [{}, false]]) {
    const report = analyse([load('evidence.jsonl')], options, { eager });
    const [well, few, single] = report.lines;
    assert.deepEqual(report.lines.map((l) => l.line), ['src/evidence.cpp:10', 'src/evidence.cpp:30', 'src/evidence.cpp:20']);
    assert.ok(single.rankImpact > few.rankImpact && few.rankImpact > well.rankImpact);
    assert.deepEqual([well.enoughEvidence, few.enoughEvidence, single.enoughEvidence], [true, true, false]);
    for (const line of report.lines) ensureLineIntervals(line, report.options);
    const once = single.points[0].curve.at(-1);
    assert.ok(once.ciHigh - once.ciLow > 0.15, JSON.stringify(once));
    const fewImpact = few.points[0].impact;
    assert.ok(fewImpact.ciHigh - fewImpact.ciLow > 0.18, JSON.stringify(fewImpact));
    const singleImpact = single.points[0].impact;
    assert.ok(singleImpact.ciHigh - singleImpact.ciLow > 0.08, JSON.stringify(singleImpact));
  }
});

test('the ranking does not depend on the bootstrap', () => {
  const order = (options) => analyse([load('basic.jsonl')], options).lines.map((l) => l.line);
  assert.deepEqual(order({ seed: 99 }), order({}));
  assert.deepEqual(order({ bootstrap: 0 }), order({}));
});

test('without enough baseline experiments, single experiments have no interval', () => {
  const rows = [[0, 1000], [0, 1010], [0.5, 1200], [1, 1400]];
  const profile = parseProfile(['{"type":"header","format":"whatif-profile","version":1}', ...rows.map(([speedup, delta]) =>
    `{"type":"experiment","selected":"a.c:1","speedup":${speedup},"effective_duration_ns":100000000,` +
    `"points":[{"name":"done","kind":"throughput","delta":${delta}}]}`)].join('\n') + '\n', 'few');
  const report = analyse([profile]);
  const point = report.lines[0].points[0];
  assert.equal(report.points[0].noiseKnown, false);
  assert.equal(point.rankBound, null);
  assert.ok(point.impact.value > 0);
  assert.equal(point.impact.ciLow, null);
  point.curve.forEach((c) => assert.equal(c.ciLow !== null, c.speedup === 0, JSON.stringify(c)));
  assert.ok(report.warnings.some((w) => w.includes('too few repeated experiments')));
});

test('the noise counts the sped experiments (as the C++ test NoiseCountsTheSpedExperiments)', () => {
  // Baselines repeat exactly, sped experiments' periods scatter by +-10%; in rate:
  // sigma^2 = 3 ((1/1.1 - 1)^2 + (1/0.9 - 1)^2) / (12 - 2 cells).
  const rows = [];
  for (let i = 0; i < 12; i++) {
    const sped = i % 2 === 1;
    const duration = sped ? (i % 4 === 1 ? 110000000 : 90000000) : 100000000;
    rows.push(`{"type":"experiment","selected":"a.c:1","speedup":${sped ? 0.5 : 0},"effective_duration_ns":${duration},` +
      `"points":[{"name":"done","kind":"throughput","delta":${sped ? 1200 : 1000}}]}`);
  }
  const profile = parseProfile(['{"type":"header","format":"whatif-profile","version":1}', ...rows].join('\n') + '\n', 'sped');
  const report = analyse([profile], { bootstrap: 0 });
  const sigma = Math.sqrt(3 * ((1 / 1.1 - 1) ** 2 + (1 / 0.9 - 1) ** 2) / 10);
  assert.equal(report.points[0].noiseKnown, true);
  assert.equal(report.points[0].noiseDegrees, 10);
  assert.ok(Math.abs(report.points[0].noise - sigma) < 1e-12, String(report.points[0].noise));
  const point = report.lines[0].points[0];
  ensureLineIntervals(report.lines[0], report.options);
  const sped = point.curve[1];
  const ratio = (100 / 1200) / (100 / 1000);
  const z = 1.959963984540054;
  const t10 = z + (z ** 3 + z) / 40 + (5 * z ** 5 + 16 * z ** 3 + 3 * z) / 9600;
  const half = t10 * sigma * ratio * Math.sqrt(1 / 6 + 1 / 6);
  assert.ok(Math.abs(sped.ciLow - (sped.programSpeedup - half)) < 1e-12, JSON.stringify(sped));
  assert.ok(Math.abs(sped.ciHigh - (sped.programSpeedup + half)) < 1e-12, JSON.stringify(sped));
});

test('an experiment at a phase\'s edge does not swamp the noise (as the C++ test AnExperimentAtAPhasesEdge...)', () => {
  const rows = [];
  for (let i = 0; i < 12; i++) {
    const sped = i % 2 === 1;
    const visits = i === 10 ? 1 : (sped ? 1250 : 1000);
    rows.push(`{"type":"experiment","selected":"a.c:1","speedup":${sped ? 0.5 : 0},"effective_duration_ns":100000000,` +
      `"points":[{"name":"done","kind":"throughput","delta":${visits}}]}`);
  }
  const profile = parseProfile(['{"type":"header","format":"whatif-profile","version":1}', ...rows].join('\n') + '\n', 'edge');
  const report = analyse([profile], { bootstrap: 0 });
  assert.equal(report.points[0].noiseKnown, true);
  assert.ok(report.points[0].noise < 0.5, String(report.points[0].noise));
  ensureLineIntervals(report.lines[0], report.options);
  assert.ok(report.lines[0].points[0].curve[1].ciLow > -1, JSON.stringify(report.lines[0].points[0].curve[1]));
});
