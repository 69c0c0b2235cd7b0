// Profile readers for the viewer: whatif JSON Lines (v1), Coz's text format and Coz's JSON Lines
// variant, normalised to one model. Mirrors launcher/analysis/profile.cpp (same rules, same messages).
import { PROFILE_FORMAT, PROFILE_VERSION, IDLE_CPU_SHARE } from './format.js';
import { readInterval, readFunctionCounters } from './counters.js';

const COZ_TYPES = new Set(['startup', 'experiment', 'throughput-point', 'progress-point', 'latency-point',
  'samples', 'runtime', 'shutdown']);

const num = (value, fallback) => (typeof value === 'number' && Number.isFinite(value) ? value : fallback);
const str = (value, fallback = '') => (typeof value === 'string' ? value : fallback);
const blank = (line) => /^[ \t\r]*$/.test(line);

function emptyProfile(name) {
  return {
    name, format: 'whatif', command: [], sampler: '', fixedLine: false, fixedSpeedups: [], experiments: [], setAside: 0, idle: 0,
    activity: [],  // every experiment record in file order: { process, visits: [[point, visits]] }
    sampleCounts: new Map(),
    samplesElapsed: -1, runtime: -1, warnings: [], notes: [], sources: [], lbr: [], stalls: [],
    counterIntervals: [], functionCounters: new Map(), process: 0, branchFlows: [],
  };
}

function checkHeader(header, name, profile) {
  const format = str(header.format, '?');
  const version = header.version === undefined ? 'none' : JSON.stringify(header.version);
  if (format !== PROFILE_FORMAT || version !== String(PROFILE_VERSION)) {
    throw new Error(`${name}: unsupported profile: format '${format}' version ${version}; this viewer reads ` +
      `format '${PROFILE_FORMAT}' version ${PROFILE_VERSION}. Use the whatif release that wrote it, or re-run ` +
      'the profile with this one.');
  }
  if (Array.isArray(header.command)) profile.command = header.command.filter((a) => typeof a === 'string');
  profile.sampler = str(header.sampler);
  // Run with --fixed-line: its experiments ran in every phase, not only while the line ran.
  const options = header.options && typeof header.options === 'object' ? header.options : {};
  profile.fixedLine = typeof options.fixed_line === 'string' && options.fixed_line !== '';
  // Each process's --fixed-speedup (0 < x <= 1), or -1: none, or --end-to-end (no baselines of its own).
  const speedup = options.fixed_speedup;
  profile.fixedSpeedups.push(typeof speedup === 'number' && speedup > 0 && speedup <= 1 && options.end_to_end !== true
    ? speedup : -1);
}

function readWhatifRecord(record, profile) {
  switch (record.type) {
    case 'experiment': {
      // Every record, kept or not: where a point's activity starts and stops (analysis: edges).
      const visits = [];
      for (const point of Array.isArray(record.points) ? record.points : []) {
        if (!point || typeof point !== 'object') continue;
        const kind = str(point.kind, 'throughput');
        if (kind !== 'throughput' && kind !== 'latency') continue;
        visits.push([str(point.name), num(kind === 'latency' ? point.arrivals : point.delta, 0)]);
      }
      profile.activity.push({ process: profile.process, visits });
      // The runtime set it aside: it could not measure it faithfully (SampleCoverage, RingLosses, ProfilerLoad).
      if (record.set_aside === true) {
        profile.setAside += 1;
        break;
      }
      const duration = num(record.duration_ns, -1);
      // duration - delay with its sign: the field is clamped at zero, but an experiment whose line
      // ran all the time at a 100% speedup is worth about zero, a little either side, and must add as such.
      const delay = num(record.delay_ns, -1);
      const effectiveDuration = duration >= 0 && delay >= 0 ? duration - delay
        : num(record.effective_duration_ns, duration);
      const experiment = {
        selected: str(record.selected),
        speedup: num(record.speedup, 0),
        effectiveDuration,  // for progress periods
        duration: duration >= 0 ? duration : effectiveDuration,  // real: t_obs for phase correction
        selectedSamples: num(record.selected_samples, -1),
        lineSamplesTotal: num(record.line_samples_total, -1),
        elapsed: num(record.elapsed_ns, -1),
        points: [],
        record: profile.activity.length - 1,  // its index in profile.activity
      };
      for (const point of Array.isArray(record.points) ? record.points : []) {
        if (!point || typeof point !== 'object') continue;
        const kind = str(point.kind, 'throughput');
        if (kind === 'latency') {
          // In flight over effective time where recorded (the sped-up program's count); older
          // profiles have only the real-time average.
          experiment.points.push({ name: str(point.name), kind, arrivals: num(point.arrivals, 0),
            departures: num(point.departures, 0),
            inFlightAvg: num(point.in_flight_effective_avg, num(point.in_flight_avg, 0)) });
        } else if (kind === 'throughput') {
          experiment.points.push({ name: str(point.name), kind, delta: num(point.delta, 0) });
        }
      }
      // The program was idle through it: no progress point visited and under a tenth of a CPU (or,
      // without cpu_ns, no sample of its code), so it measured no line (format::idle_experiment).
      const cpu = num(record.cpu_ns, -1);
      const idle = experiment.points.every((p) => (p.delta ?? 0) === 0 && (p.arrivals ?? 0) === 0) &&
        (cpu >= 0 && experiment.duration > 0 ? cpu < IDLE_CPU_SHARE * experiment.duration
          : num(record.total_samples, -1) === 0 && num(record.unscoped_samples, 0) === 0);
      if (idle) {
        profile.idle += 1;
        break;
      }
      profile.experiments.push(experiment);
      break;
    }
    case 'samples':
      profile.sampleCounts = new Map();
      if (record.counts && typeof record.counts === 'object') {
        for (const [line, count] of Object.entries(record.counts)) {
          if (typeof count === 'number') profile.sampleCounts.set(line, count);
        }
      }
      profile.samplesElapsed = num(record.elapsed_ns, -1);
      break;
    case 'runtime': profile.runtime = num(record.elapsed_ns, -1); break;
    case 'warning': profile.warnings.push(str(record.message)); break;
    case 'source':
      profile.sources.push({ file: str(record.file), firstLine: num(record.first_line, 1),
        lines: Array.isArray(record.lines) ? record.lines.map((l) => str(l)) : [] });
      break;
    case 'lbr': profile.lbr.push(record); break;
    case 'stalls': profile.stalls.push(record); break;
    case 'counter_interval': profile.counterIntervals.push(readInterval(record)); break;
    case 'counters': {  // cumulative: the last record of a (process, tid, function) holds its totals
      const counters = readFunctionCounters(record);
      profile.functionCounters.set(`${profile.process}\u0000${counters.tid}\u0000${counters.function}`, counters);
      break;
    }
    case 'branch_flow': profile.branchFlows.push(record); break;
    default: break;  // header (checked by the caller), object and unknown types
  }
}

function cozFromText(line) {
  const parts = line.split('\t');
  const type = parts[0];
  if (!type || type.includes('=') || type.includes(' ')) return null;
  const fields = {};
  for (const part of parts.slice(1)) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    fields[part.slice(0, eq).replaceAll('-', '_')] = part.slice(eq + 1);
  }
  return { type, fields };
}

function cozFromJson(object) {
  const fields = {};
  for (const [key, value] of Object.entries(object)) {
    if (typeof value === 'string' || typeof value === 'number') fields[key.replaceAll('-', '_')] = String(value);
  }
  return { type: str(object.type).replaceAll('_', '-'), fields };
}

function cozNumber(record, key, fallback) {
  const text = record.fields[key];
  if (text === undefined) return fallback;
  const value = parseFloat(text);
  return Number.isFinite(value) ? value : fallback;
}

/**
 * A number Coz prints as an unsigned 64-bit integer that may have wrapped below zero: values of 2^63
 * and above are read as negative, value - 2^64 in double arithmetic like the C++ reader, and at most
 * -1: a double (as JSON numbers are here) cannot tell 2^64 - 2 from 2^64.
 */
function cozSignedNumber(record, key, fallback) {
  const value = cozNumber(record, key, fallback);
  return value >= 2 ** 63 ? Math.min(value - 2 ** 64, -1) : value;
}

/** `state`: { dropping, dropped, unusableLatency }, carried from record to record for the notes. */
function readCozRecord(record, profile, state) {
  const last = state.dropping ? undefined : profile.experiments[profile.experiments.length - 1];
  switch (record.type) {
    case 'experiment': {
      // Coz subtracts the delays already, and prints the result unsigned: it wraps when the inserted
      // delay exceeds the elapsed time (at high speedups). Such an experiment measured nothing usable.
      const effectiveDuration = cozSignedNumber(record, 'duration', 0);
      state.dropping = !(effectiveDuration > 0);
      if (state.dropping) { state.dropped++; break; }
      profile.experiments.push({
        selected: record.fields.selected ?? '', speedup: cozNumber(record, 'speedup', 0),
        effectiveDuration, duration: effectiveDuration,  // the only duration Coz records
        selectedSamples: cozNumber(record, 'selected_samples', -1), lineSamplesTotal: -1, elapsed: -1,
        points: [],
      });
      break;
    }
    case 'throughput-point':
    case 'progress-point':
      if (last) last.points.push({ name: record.fields.name ?? '', kind: 'throughput', delta: cozNumber(record, 'delta', 0) });
      break;
    case 'latency-point':
      if (last) {
        const inFlightAvg = cozSignedNumber(record, 'difference', 0);
        if (inFlightAvg < 0) { state.unusableLatency++; break; }  // a wrapped count: unusable
        last.points.push({ name: record.fields.name ?? '', kind: 'latency', arrivals: cozNumber(record, 'arrivals', 0),
          departures: cozNumber(record, 'departures', 0), inFlightAvg });
      }
      break;
    case 'samples':
      if (record.fields.location) profile.sampleCounts.set(record.fields.location, cozNumber(record, 'count', 0));
      profile.samplesElapsed = profile.runtime;
      break;
    case 'runtime': profile.runtime = cozNumber(record, 'time', -1); break;
    default: break;
  }
}

/** Parses profile text; throws an Error whose message names the file and the problem. */
export function parseProfile(text, name) {
  const lines = text.split('\n');
  const completeLast = text.endsWith('\n');
  if (completeLast) lines.pop();
  for (let i = 0; i < lines.length; i++) if (lines[i].endsWith('\r')) lines[i] = lines[i].slice(0, -1);
  let last = lines.length - 1;
  while (last >= 0 && blank(lines[last])) last--;
  if (last < 0) {
    throw new Error(`${name}: empty profile: it holds no records. The profiled program may have exited before ` +
      'the profiler started; run it longer or check its output.');
  }
  let first = 0;
  while (blank(lines[first])) first++;
  const profile = emptyProfile(name);
  const head = lines[first].trimStart();
  const truncated = (i) => profile.notes.push(`ignored an incomplete last line (line ${i + 1})`);
  const cozState = { dropping: false, dropped: 0, unusableLatency: 0 };

  if (head.startsWith('{')) {
    let header;
    try {
      header = JSON.parse(lines[first]);
    } catch {
      throw new Error(`${name}: not a profile: line ${first + 1} is not valid JSON`);
    }
    const type = str(header?.type);
    if (type === 'header') {
      checkHeader(header, name, profile);
    } else if (COZ_TYPES.has(type) || type === 'throughput_point' || type === 'latency_point') {
      profile.format = 'coz-json';
    } else if (header && ('format' in header || 'version' in header)) {
      checkHeader(header, name, profile);
    } else {
      throw new Error(`${name}: not a profile: the first record has type '${type}', expected a whatif 'header' ` +
        'or a Coz record');
    }
    for (let i = first; i <= last; i++) {
      if (blank(lines[i])) continue;
      let record;
      try {
        record = JSON.parse(lines[i]);
      } catch (error) {
        if (i === last) { truncated(i); break; }
        throw new Error(`${name}:${i + 1}: invalid profile record: ${error.message}`);
      }
      if (!record || typeof record !== 'object' || Array.isArray(record)) {
        if (i === last) { truncated(i); break; }
        throw new Error(`${name}:${i + 1}: invalid profile record: not a JSON object`);
      }
      if (profile.format === 'whatif') {
        if (i !== first && record.type === 'header') { checkHeader(record, name, profile); profile.process++; continue; }
        readWhatifRecord(record, profile);
      } else {
        readCozRecord(cozFromJson(record), profile, cozState);
      }
    }
  } else {
    const record = cozFromText(lines[first]);
    if (!record || !COZ_TYPES.has(record.type)) {
      throw new Error(`${name}: not a profile: line ${first + 1} is neither JSON nor a record of Coz's text format ` +
        '(startup, experiment, throughput-point, ...)');
    }
    profile.format = 'coz-text';
    for (let i = first; i <= last; i++) {
      if (blank(lines[i])) continue;
      const coz = cozFromText(lines[i]);
      if (!coz) {
        if (i === last) { truncated(i); break; }
        throw new Error(`${name}:${i + 1}: invalid Coz record`);
      }
      if (i === last && !completeLast) { truncated(i); break; }  // Coz ends every record with a newline
      readCozRecord(coz, profile, cozState);
    }
  }
  if (profile.setAside > 0) {
    profile.notes.push(`set aside ${profile.setAside} experiment(s) that measured a disturbed program: their ` +
      "samples covered far less of its CPU time than the run's others (samples lost, the machine stalled, or " +
      "whatif's own code took the time), or whatif's profiler thread took a CPU from it");
  }
  if (profile.idle > 0) {
    profile.notes.push(`left out ${profile.idle} experiment(s) through which the program was idle (no sample of ` +
      'its code, no progress point visited): they measured no line');
  }
  if (cozState.dropped > 0) {
    profile.notes.push(`dropped ${cozState.dropped} experiment(s) without a positive duration: Coz prints the ` +
      'duration minus the inserted delay unsigned, and it wraps when the delay exceeds the elapsed time');
  }
  if (cozState.unusableLatency > 0) {
    profile.notes.push(`skipped ${cozState.unusableLatency} latency observation(s) with a negative (wrapped) ` +
      "in-flight count, Coz's `difference`: unusable");
  }
  return profile;
}
