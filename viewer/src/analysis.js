// The viewer's analysis: a line-for-line mirror of analysis/causal/analysis.cpp (same sums in the
// same order, the same Mulberry32 bootstrap, the same ranking), checked against the same golden vectors.
// Point estimates, noise-floor intervals and the ranking are computed for every line up front;
// bootstrap CIs on demand (ensureIntervals), so the ranking never waits for the bootstrap.

export const DEFAULT_OPTIONS = Object.freeze({ bootstrap: 500, seed: 1, phaseCorrection: true, point: null });
export const CONTENTION_SLOPE = -0.05;
export const MIN_VISITS_PER_EXPERIMENT = 5;
export const MIN_NOISE_DEGREES = 4;
export const MIN_EVIDENCE_SPEEDUPS = 2;
export const MIN_EVIDENCE_EXPERIMENTS = 3;
// And the line sampled this many times in its sped experiments (each sample inserts one period's delay).
export const MIN_EVIDENCE_SAMPLES = 10;
// A point whose median visited experiment saw this many visits or more is busy: an experiment without a
// visit beside one with visits marks where its activity started or stopped (analysis.cpp kEdgeMinVisits).
export const EDGE_MIN_VISITS = 20;

/** Mulberry32 with 32-bit integer arithmetic, identical to the C++ class. */
export function mulberry32(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
}

const encoder = new TextEncoder();
export function fnv1a(text) {
  let hash = 2166136261;
  for (const byte of encoder.encode(text)) {
    hash ^= byte;
    hash = Math.imul(hash, 16777619) >>> 0;
  }
  return hash >>> 0;
}

function period(kind, duration, visits, inFlight) {
  if (!(visits > 0)) return NaN;
  if (kind === 'throughput') return duration > 0 ? duration / visits : NaN;
  return inFlight > 0 ? inFlight / visits : NaN;
}

function periodOf(kind, units) {
  let duration = 0, visits = 0, inFlight = 0;
  for (const u of units) { duration += u.duration; visits += u.visits; inFlight += u.inFlight; }
  return period(kind, duration, visits, inFlight);
}

/** Units packed as [duration, visits, inFlight] triples, for the bootstrap's inner loop. */
function pack(units) {
  const packed = new Float64Array(units.length * 3);
  units.forEach((u, i) => { packed[3 * i] = u.duration; packed[3 * i + 1] = u.visits; packed[3 * i + 2] = u.inFlight; });
  return packed;
}

function resampledPeriod(kind, packed, next) {
  let duration = 0, visits = 0, inFlight = 0;
  const n = packed.length / 3;
  for (let i = 0; i < n; i++) {
    const j = 3 * Math.floor((next() * n) / 4294967296);
    duration += packed[j]; visits += packed[j + 1]; inFlight += packed[j + 2];
  }
  return period(kind, duration, visits, inFlight);
}

function meanHeight(x, y) {
  if (x.length < 2 || !(x[x.length - 1] > 0)) return NaN;
  let area = 0;
  for (let i = 1; i < x.length; i++) area += ((y[i - 1] + y[i]) / 2) * (x[i] - x[i - 1]);
  return area / x[x.length - 1];
}

function fit(x, y) {
  const n = x.length;
  if (n < 2) return [NaN, NaN];
  let sx = 0, sy = 0;
  for (let i = 0; i < n; i++) { sx += x[i]; sy += y[i]; }
  const xm = sx / n, ym = sy / n;
  let sxy = 0, sxx = 0;
  for (let i = 0; i < n; i++) { sxy += (x[i] - xm) * (y[i] - ym); sxx += (x[i] - xm) * (x[i] - xm); }
  if (!(sxx > 0)) return [NaN, NaN];
  const slope = sxy / sxx;
  return [slope, ym - slope * xm];
}

function quantile(sorted, p) {
  if (sorted.length === 0) return NaN;
  const position = p * (sorted.length - 1);
  const lower = Math.floor(position);
  if (lower + 1 >= sorted.length) return sorted[sorted.length - 1];
  return sorted[lower] + (sorted[lower + 1] - sorted[lower]) * (position - lower);
}

function interval(values) {
  if (values.length === 0) return null;
  const sorted = Float64Array.from(values).sort();
  return [quantile(sorted, 0.025), quantile(sorted, 0.975)];
}

const finite = Number.isFinite;

function phaseFor(line, options) {
  if (!options.phaseCorrection) return { applied: false, factor: 1, reason: 'disabled' };
  if (line.fixedLine) {
    // Eq. 8 corrects experiments that only run while the line runs (lines chosen from recent
    // samples). --fixed-line experiments run in every phase: their average is already weighted.
    return { applied: false, factor: 1, reason: '--fixed-line experiments ran in every phase' };
  }
  if (!line.sObsKnown || !(line.sObs > 0)) {
    return { applied: false, factor: 1, reason: 'no samples in the line during its experiments' };
  }
  let s = 0, total = 0;
  for (const profile of line.profiles) {
    const pair = line.sAndT.get(profile);
    if (!pair) return { applied: false, factor: 1, reason: 'the profile has no sample totals or run time' };
    s += pair[0];
    total += pair[1];
  }
  if (!(s > 0) || !(total > 0) || !(line.tObs > 0)) {
    return { applied: false, factor: 1, reason: 'the profile has no sample totals or run time' };
  }
  return { applied: true, factor: Math.min(1, (line.tObs / line.sObs) * (s / total)), reason: null };
}

const byKey = (a, b) => a - b;
const byName = (a, b) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Edges of a point's activity (docs/report.md, "Edges of activity"): `${record}\0${point}` of each
 * experiment that saw a busy point visited next to an experiment record of the same process that did
 * not. Its activity began or ended during it, so its rate mixes two regimes (analysis.cpp's twin).
 */
function activityEdges(profile) {
  const records = profile.activity ?? [];
  const visitsIn = (r, name) => {
    for (const [point, visits] of records[r].visits) if (point === name) return visits;
    return 0;
  };
  const active = new Map();  // point -> its visits where visited, in file order
  for (const record of records) {
    for (const [point, visits] of record.visits) {
      if (!(visits > 0)) continue;
      if (!active.has(point)) active.set(point, []);
      active.get(point).push(visits);
    }
  }
  const edges = new Set();
  for (const [name, visits] of active) {
    if (!(quantile(Float64Array.from(visits).sort(), 0.5) >= EDGE_MIN_VISITS)) continue;
    for (let r = 0; r < records.length; r++) {
      if (!(visitsIn(r, name) > 0)) continue;
      const process = records[r].process;
      const before = r > 0 && records[r - 1].process === process && !(visitsIn(r - 1, name) > 0);
      const after = r + 1 < records.length && records[r + 1].process === process && !(visitsIn(r + 1, name) > 0);
      if (before || after) edges.add(`${r}\u0000${name}`);
    }
  }
  return edges;
}

/** Groups experiments into units per point, line and speedup (per mille), in experiment order. */
function collect(profiles, report) {
  const points = new Map();
  const lines = new Map();
  const edgesLeftOut = new Map();  // point -> experiments left out at its activity's edges
  let invalid = 0;
  profiles.forEach((profile, p) => {
    const lastRunning = new Map();
    const edges = activityEdges(profile);
    for (const experiment of profile.experiments) {
      // Effective durations add across experiments with equal settings (Coz's viewer does the
      // same): one near or below zero is data, not an error.
      if (!(experiment.duration > 0) || !experiment.selected) { invalid++; continue; }
      report.experiments++;
      const key = Math.round(experiment.speedup * 1000);
      let line = lines.get(experiment.selected);
      if (!line) {
        line = { experiments: 0, speedups: new Set(), tObs: 0, sObs: 0, sObsKnown: true, spedSamples: 0, sAndT: new Map(), profiles: new Set(), fixedLine: false };
        lines.set(experiment.selected, line);
      }
      line.experiments++;
      line.fixedLine = line.fixedLine || Boolean(profile.fixedLine);
      line.speedups.add(key);
      line.profiles.add(p);
      // t_obs in real time: the selected line's samples accrue in real time (its thread is not the one
      // paused for a virtual speedup; with one thread nobody pauses at all).
      line.tObs += experiment.duration;
      if (experiment.selectedSamples >= 0) line.sObs += experiment.selectedSamples;
      else line.sObsKnown = false;
      if (key !== 0 && experiment.selectedSamples > 0) line.spedSamples += experiment.selectedSamples;
      if (experiment.lineSamplesTotal >= 0 && experiment.elapsed > 0) {
        lastRunning.set(experiment.selected, [experiment.lineSamplesTotal, experiment.elapsed]);
      }
      const observations = experiment.points;
      for (let o = 0; o < observations.length; o++) {
        const observation = observations[o];
        let duplicate = false;
        for (let q = 0; q < o && !duplicate; q++) duplicate = observations[q].name === observation.name;
        if (duplicate) continue;
        if (edges.has(`${experiment.record}\u0000${observation.name}`)) {
          edgesLeftOut.set(observation.name, (edgesLeftOut.get(observation.name) ?? 0) + 1);
          continue;
        }
        let data = points.get(observation.name);
        if (!data) {
          data = { kind: observation.kind, byLine: new Map(), baseline: [], units: [], unitCells: [], noise: null,
            summary: { name: observation.name, kind: observation.kind, experiments: 0, visits: 0, meanVisits: 0, baselineExperiments: 0 } };
          points.set(observation.name, data);
        } else if (data.kind !== observation.kind) {
          continue;
        }
        const unit = observation.kind === 'throughput'
          ? { duration: experiment.effectiveDuration, visits: observation.delta, inFlight: 0 }
          : { duration: experiment.effectiveDuration, visits: observation.arrivals,
            inFlight: observation.inFlightAvg * experiment.effectiveDuration };
        let groups = data.byLine.get(experiment.selected);
        if (!groups) { groups = new Map(); data.byLine.set(experiment.selected, groups); }
        let group = groups.get(key);
        if (!group) { group = []; groups.set(key, group); }
        group.push(unit);
        data.units.push(unit);
        data.unitCells.push([experiment.selected, key]);
        if (key === 0) {
          data.baseline.push(unit);
          data.summary.baselineExperiments++;
        }
        data.summary.experiments++;
        data.summary.visits += unit.visits;
      }
    }
    // T is the real elapsed time, delays included, like t_obs: samples accrue in real time.
    const total = profile.samplesElapsed > 0 ? profile.samplesElapsed : profile.runtime;
    for (const [name, line] of lines) {
      if (!line.profiles.has(p)) continue;
      if (profile.sampleCounts.size > 0 && total > 0) {
        line.sAndT.set(p, [profile.sampleCounts.get(name) ?? 0, total]);
      } else if (lastRunning.has(name)) {
        line.sAndT.set(p, lastRunning.get(name));
      }
    }
  });
  return { points, lines, invalid, edgesLeftOut };
}

/**
 * Each experiment's rate relative to its own cell's pooled rate (the cell: its line and speedup),
 * summed in experiment order: sigma^2 = sum (P_cell / p_i - 1)^2 / (experiments - cells), as in
 * analysis.cpp. Every cell, not only the baselines: the noise floor applies sigma to the sped cells too.
 */
function estimateNoise(data) {
  const cells = new Map();  // line + "\n" + key -> { pooled, used }
  let sum = 0, used = 0;
  for (let i = 0; i < data.units.length; i++) {
    const [lineName, key] = data.unitCells[i];
    const id = lineName + '\n' + key;
    let cell = cells.get(id);
    if (!cell) {
      cell = { pooled: periodOf(data.kind, data.byLine.get(lineName).get(key)), used: 0 };
      cells.set(id, cell);
    }
    const u = data.units[i];
    const own = period(data.kind, u.duration, u.visits, u.inFlight);
    if (!finite(own) || !finite(cell.pooled)) continue;
    const r = cell.pooled / own - 1;  // the rate's deviation: a 1-visit edge experiment deviates by at most 1
    sum += r * r;
    used++;
    cell.used++;
  }
  let groups = 0;
  for (const cell of cells.values()) groups += cell.used > 0 ? 1 : 0;
  const degrees = used - groups;
  if (degrees < MIN_NOISE_DEGREES) return { known: false, sigma: 0, degrees, t: NaN };
  return { known: true, sigma: Math.sqrt(sum / degrees), degrees, t: t975(degrees) };
}

/** Student-t 97.5% quantile by the Cornish-Fisher expansion to 1/df^2, as in analysis.cpp. */
function t975(degrees) {
  const z = 1.959963984540054;
  const z3 = z * z * z, z5 = z3 * z * z;
  const df = degrees;
  return z + (z3 + z) / 4 / df + (5 * z5 + 16 * z3 + 3 * z) / 96 / (df * df);
}

/**
 * The 95% interval from the bootstrap's percentiles (when complete: every resampled cell has two
 * experiments or more) and the noise floor value ± half (when finite): their hull, or null.
 */
function combine(samples, complete, value, half) {
  const boot = complete ? interval(samples) : null;
  const noise = finite(half);
  if (!boot && !noise) return null;
  if (!noise) return boot;
  if (!boot) return [value - half, value + half];
  return [Math.min(boot[0], value - half), Math.max(boot[1], value + half)];
}

/** Point estimates, noise-floor intervals and the rank bound; `state` keeps what ensureIntervals needs. */
function analysePoint(lineName, name, data, groupsMap, factor) {
  const groups = [...groupsMap.entries()].sort((a, b) => byKey(a[0], b[0]));
  const result = { name, kind: data.kind, baseline: 'none', curve: [], impact: null, slope: null, intercept: null,
    max: null, min: null, experiments: 0, speedups: groups.length, contention: false, intervals: false,
    enoughEvidence: false, rankBound: null };
  for (const [, units] of groups) result.experiments += units.length;
  const own = groupsMap.get(0);
  let baseline = null;
  if (own && finite(periodOf(data.kind, own))) { baseline = own; result.baseline = 'line'; }
  else if (data.baseline.length && finite(periodOf(data.kind, data.baseline))) { baseline = data.baseline; result.baseline = 'run'; }
  else return result;
  const ownBaseline = result.baseline === 'line';
  const n0 = baseline.length;

  const base = periodOf(data.kind, baseline);
  const keys = [], levels = [], ratios = [];
  for (const [key, units] of groups) {
    if (key === 0 && ownBaseline) {
      keys.push(0); levels.push(units); ratios.push(0);
      result.curve.push({ speedup: 0, programSpeedup: 0, ciLow: 0, ciHigh: 0, experiments: units.length });
      continue;
    }
    const value = periodOf(data.kind, units);
    if (!finite(value)) continue;
    keys.push(key); levels.push(units); ratios.push(value / base);
    result.curve.push({ speedup: key / 1000, programSpeedup: (1 - value / base) * factor, ciLow: null, ciHigh: null,
      experiments: units.length });
  }
  if (result.curve.length === 0) return result;
  const fixed = (i) => keys[i] === 0 && ownBaseline;
  const offset = keys[0] !== 0 ? 1 : 0;
  const fitPoints = (ys) => {
    const fx = [], fy = [];
    if (offset) { fx.push(0); fy.push(0); }
    for (let i = 0; i < keys.length; i++) { fx.push(keys[i] / 1000); fy.push(ys[i]); }
    return [fx, fy];
  };
  const ys = result.curve.map((c) => c.programSpeedup);
  const [fx, fy] = fitPoints(ys);
  const impact = meanHeight(fx, fy);
  const [slope, intercept] = fit(fx, fy);
  result.impact = finite(impact) ? { value: impact, ciLow: null, ciHigh: null } : null;
  result.slope = finite(slope) ? { value: slope, ciLow: null, ciHigh: null } : null;
  result.intercept = finite(intercept) ? intercept : null;
  result.max = Math.max(...ys);
  result.min = Math.min(...ys);

  let nonzero = 0, curveExperiments = 0;
  for (let i = 0; i < keys.length; i++) {
    if (keys[i] !== 0) nonzero++;
    curveExperiments += result.curve[i].experiments;
  }
  result.enoughEvidence = nonzero >= MIN_EVIDENCE_SPEEDUPS && curveExperiments >= MIN_EVIDENCE_EXPERIMENTS;

  // Noise floor by the delta method (see analysis.cpp for the derivation).
  const halfLevel = keys.map(() => NaN);
  let halfImpact = NaN, halfSlope = NaN;
  const noise = data.noise;
  if (noise.known) {
    const scale = noise.t * noise.sigma * Math.abs(factor);
    for (let i = 0; i < keys.length; i++) {
      if (!fixed(i)) halfLevel[i] = scale * Math.abs(ratios[i]) * Math.sqrt(1 / levels[i].length + 1 / n0);
    }
    const m = fx.length;
    const top = fx[m - 1];
    let xs = 0;
    for (let j = 0; j < m; j++) xs += fx[j];
    const xm = xs / m;
    let sxx = 0;
    for (let j = 0; j < m; j++) sxx += (fx[j] - xm) * (fx[j] - xm);
    let impactSq = 0, impactLin = 0, slopeSq = 0, slopeLin = 0;
    for (let i = 0; i < keys.length; i++) {
      if (fixed(i)) continue;
      const j = i + offset;
      const left = j > 0 ? fx[j] - fx[j - 1] : 0;
      const right = j + 1 < m ? fx[j + 1] - fx[j] : 0;
      const a = (left + right) / 2 / top * ratios[i];
      const c = (fx[j] - xm) / sxx * ratios[i];
      const n = levels[i].length;
      impactSq += a * a / n;
      impactLin += a;
      slopeSq += c * c / n;
      slopeLin += c;
    }
    if (result.impact) halfImpact = scale * Math.sqrt(impactSq + impactLin * impactLin / n0);
    if (result.slope) halfSlope = scale * Math.sqrt(slopeSq + slopeLin * slopeLin / n0);
    if (result.impact) result.rankBound = result.impact.value - halfImpact;
  }
  let completeAll = n0 >= 2;
  for (let i = 0; i < keys.length; i++) if (!fixed(i)) completeAll = completeAll && levels[i].length >= 2;
  const halves = { level: halfLevel, impact: halfImpact, slope: halfSlope };
  Object.defineProperty(result, 'state',
    { value: { lineName, data, baseline, keys, levels, factor, fitPoints, fixed, completeAll, halves }, enumerable: false });
  setIntervals(result, keys.map(() => []), [], []);
  return result;
}

/** Sets every interval of a point from bootstrap samples (empty: the noise floor alone). */
function setIntervals(point, levelSamples, impactSamples, slopeSamples) {
  const { baseline, levels, fixed, completeAll, halves } = point.state;
  point.curve.forEach((c, i) => {
    if (fixed(i)) return;  // [0, 0] by definition
    const ci = combine(levelSamples[i], baseline.length >= 2 && levels[i].length >= 2, c.programSpeedup, halves.level[i]);
    [c.ciLow, c.ciHigh] = ci ?? [null, null];
  });
  if (point.impact) {
    [point.impact.ciLow, point.impact.ciHigh] =
      combine(impactSamples, completeAll, point.impact.value, halves.impact) ?? [null, null];
  }
  if (point.slope) {
    [point.slope.ciLow, point.slope.ciHigh] =
      combine(slopeSamples, completeAll, point.slope.value, halves.slope) ?? [null, null];
  }
}

/** Fills bootstrap 95% CIs (hulled with the noise floor) and the contention flag into a point (idempotent). */
export function ensureIntervals(point, options = DEFAULT_OPTIONS) {
  if (point.intervals || !point.state) return point;
  const { lineName, data, baseline, keys, levels, factor, fitPoints, fixed } = point.state;
  if (options.bootstrap > 0) {
    const next = mulberry32((options.seed ^ fnv1a(`${lineName}\n${point.name}`)) >>> 0);
    const packedBaseline = pack(baseline);
    const packedLevels = levels.map(pack);
    const levelSamples = keys.map(() => []);
    const impactSamples = [], slopeSamples = [];
    const replicate = new Array(keys.length);
    for (let b = 0; b < options.bootstrap; b++) {
      const baseB = resampledPeriod(data.kind, packedBaseline, next);
      let complete = true;
      for (let i = 0; i < keys.length; i++) {
        if (fixed(i)) { replicate[i] = 0; continue; }
        const value = resampledPeriod(data.kind, packedLevels[i], next);
        replicate[i] = (1 - value / baseB) * factor;
        if (finite(replicate[i])) levelSamples[i].push(replicate[i]);
        else complete = false;
      }
      if (!complete) continue;
      const [fx, fy] = fitPoints(replicate);
      const impactB = meanHeight(fx, fy);
      const slopeB = fit(fx, fy)[0];
      if (finite(impactB)) impactSamples.push(impactB);
      if (finite(slopeB)) slopeSamples.push(slopeB);
    }
    setIntervals(point, levelSamples, impactSamples, slopeSamples);
  }
  const nonzero = keys.filter((k) => k !== 0).length;
  point.contention = !!(point.slope && point.slope.ciHigh !== null && point.slope.ciHigh < 0 &&
    point.slope.value <= CONTENTION_SLOPE && nonzero >= 2);
  point.intervals = true;
  return point;
}

/** Bootstrap intervals for every point of a line (and its contention flag). */
export function ensureLineIntervals(line, options = DEFAULT_OPTIONS) {
  for (const point of line.points) ensureIntervals(point, options);
  line.contention = line.points.some((p) => p.contention);
  return line;
}

/**
 * Ranking order of two impacts (docs/report.md, "Ranking"): enough evidence first, then a known noise
 * floor first, then the higher conservative bound, then the higher impact. Negative: a first.
 */
function rankOrder(a, b) {
  if (a.enoughEvidence !== b.enoughEvidence) return a.enoughEvidence ? -1 : 1;
  if ((a.rankBound === null) !== (b.rankBound === null)) return a.rankBound !== null ? -1 : 1;
  if (a.rankBound !== null && a.rankBound !== b.rankBound) return a.rankBound > b.rankBound ? -1 : 1;
  if (a.impact.value !== b.impact.value) return a.impact.value > b.impact.value ? -1 : 1;
  return 0;
}

/** The report's order of lines (the viewer's default view): ranked lines, then those without an impact. */
export function compareLines(a, b) {
  if ((a.rankImpact === null) !== (b.rankImpact === null)) return a.rankImpact === null ? 1 : -1;
  if (a.rankImpact !== null) {
    const order = rankOrder({ enoughEvidence: a.enoughEvidence, rankBound: a.rankBound, impact: { value: a.rankImpact } },
      { enoughEvidence: b.enoughEvidence, rankBound: b.rankBound, impact: { value: b.rankImpact } });
    if (order !== 0) return order;
  }
  return byName(a.line, b.line);
}

function listSome(names, limit) {
  const shown = names.slice(0, limit).join(', ');
  return names.length > limit ? `${shown} and ${names.length - limit} more` : shown;
}

/**
 * The speedup every process of every profile ran with --fixed-speedup, or -1 when one had none (a
 * Coz profile, random speedups, --end-to-end) or two disagree (analysis.cpp common_fixed_speedup).
 */
export function commonFixedSpeedup(profiles) {
  let common = -1;
  for (const profile of profiles) {
    const speedups = profile.fixedSpeedups ?? [];
    if (speedups.length === 0) return -1;
    for (const speedup of speedups) {
      if (!(speedup > 0)) return -1;
      if (common > 0 && Math.round(speedup * 1000) !== Math.round(common * 1000)) return -1;
      common = speedup;
    }
  }
  return common;
}

/** The point's measured curve point at line speedup `speedup`, or null. */
export function curvePointAt(point, speedup) {
  return point.curve.find((c) => Math.round(c.speedup * 1000) === Math.round(speedup * 1000)) ?? null;
}

/**
 * Analyses profiles together. With `eager`, bootstrap intervals are computed for every line (as
 * `whatif report` does); otherwise call ensureLineIntervals for the lines you show.
 */
export function analyse(profiles, options = DEFAULT_OPTIONS, { eager = true } = {}) {
  options = { ...DEFAULT_OPTIONS, ...options };
  const report = { options, fixedSpeedup: commonFixedSpeedup(profiles), experiments: 0, phaseCorrectedLines: 0, points: [],
    lines: [], warnings: [] };
  const { points, lines, invalid, edgesLeftOut } = collect(profiles, report);
  if (invalid > 0) {
    report.warnings.push(`skipped ${invalid} experiment(s) without a positive duration or selected line`);
  }
  for (const name of [...edgesLeftOut.keys()].sort(byName)) {
    report.warnings.push(`progress point '${name}': left out ${edgesLeftOut.get(name)} experiment(s) at the edges of ` +
      'its activity, next to one without a visit: its visits began or stopped during them (a load starting or ' +
      'ending), so their rates mix two regimes');
  }
  const pointNames = [...points.keys()].sort(byName);
  for (const name of pointNames) {
    const data = points.get(name);
    const s = data.summary;
    s.meanVisits = s.experiments ? s.visits / s.experiments : 0;
    data.noise = estimateNoise(data);
    s.noiseKnown = data.noise.known;
    s.noise = data.noise.sigma;
    s.noiseDegrees = data.noise.degrees;
    if (s.meanVisits < MIN_VISITS_PER_EXPERIMENT) {
      report.warnings.push(`progress point '${name}' has only ${s.meanVisits.toFixed(1)} ` +
        `${data.kind === 'latency' ? 'arrivals' : 'visits'} per experiment on average: its rates are noisy; put it ` +
        'where it runs more often, or lengthen experiments');
    }
    if (s.baselineExperiments === 0) {
      report.warnings.push(`progress point '${name}' has no baseline (speedup 0) experiments: no speedups can be ` +
        'computed for it');
    } else if (!data.noise.known) {
      report.warnings.push(`progress point '${name}' has too few repeated experiments (two or more of one line at one ` +
        `speedup) to estimate their noise (${data.noise.degrees} degrees of freedom, ${MIN_NOISE_DEGREES} needed): speedups ` +
        'measured once have no interval, and lines are ranked by impact alone');
    }
    report.points.push(s);
  }
  if (points.size === 0 && report.experiments > 0) {
    report.warnings.push('no progress point was visited: add COZ_PROGRESS/COZ_BEGIN/COZ_END or use -p');
  }
  if (report.experiments === 0) report.warnings.push('no experiments: the run ended before the first experiment finished');

  const runBaselineLines = [];
  for (const name of [...lines.keys()].sort(byName)) {
    const data = lines.get(name);
    const result = { line: name, experiments: data.experiments, speedups: data.speedups.size,
      phase: phaseFor(data, options), points: [], rankImpact: null, rankBound: null, enoughEvidence: false,
      contention: false };
    if (result.phase.applied) report.phaseCorrectedLines++;
    let usesRun = false;
    for (const pointName of pointNames) {
      const point = points.get(pointName);
      const groups = point.byLine.get(name);
      if (!groups) continue;
      const pr = analysePoint(name, pointName, point, groups, result.phase.factor);
      usesRun ||= pr.baseline === 'run';
      result.points.push(pr);
    }
    let ranking = null;  // the line's ranking point
    for (const pr of result.points) {
      if (pr.impact && (!options.point || options.point === pr.name) && (!ranking || rankOrder(pr, ranking) < 0)) {
        ranking = pr;
      }
    }
    if (ranking) {
      result.rankImpact = ranking.impact.value;
      result.rankBound = ranking.rankBound;
      // Experiments in which the line was (almost) never sampled inserted no delay: no speedup tested.
      result.enoughEvidence = ranking.enoughEvidence && (!data.sObsKnown || data.spedSamples >= MIN_EVIDENCE_SAMPLES);
    }
    if (usesRun) runBaselineLines.push(name);
    if (eager) ensureLineIntervals(result, options);
    report.lines.push(result);
  }
  if (runBaselineLines.length) {
    report.warnings.push(`${runBaselineLines.length} line(s) have no baseline (speedup 0) experiments of their own; ` +
      `their predictions use the run-wide baseline: ${listSome(runBaselineLines, 5)}`);
  }
  report.lines.sort(compareLines);
  return report;
}
