// Writes a synthetic whatif profile (format v1) with N experiments over L lines and two progress points,
// for timing the viewer and `whatif report` on large profiles. Deterministic for a given seed.
// Usage: node generate.mjs OUT.jsonl [--experiments 50000] [--lines 400] [--seed 1]
import { createWriteStream } from 'node:fs';
import definition from '../../format/profile-format.json' with { type: 'json' };
import { mulberry32 } from '../src/analysis.js';

export async function generate(out, { experiments = 50000, lines = 400, seed = 1 } = {}) {
  const rand = mulberry32(seed);
  const uniform = () => rand() / 4294967296;
  const gauss = () => Math.sqrt(-2 * Math.log(uniform() + 1e-12)) * Math.cos(2 * Math.PI * uniform());
  const names = Array.from({ length: lines }, (_, i) => `/src/project/module${i % 37}/file${i % 91}.cpp:${10 + i}`);
  const effect = names.map((_, i) => (i % 17 === 0 ? -0.3 : i % 5 === 0 ? 0.5 * uniform() : 0.05 * uniform()));
  const stream = createWriteStream(out);
  const write = (record) => new Promise((resolve) => {
    if (!stream.write(`${JSON.stringify(record)}\n`)) stream.once('drain', resolve); else resolve();
  });
  await write({ type: 'header', format: definition.format, version: definition.version,
    command: ['./big-app', '--bench'], start_time: '2026-11-20T10:00:00Z', pid: 1, sampling_period_ns: 1000000,
    sampler: 'perf_event', options: {}, machine: { hostname: 'bench', kernel: '6.1', cpus: 2 }, scope: {} });
  let now = 0;
  const lineSamples = new Array(lines).fill(0);
  for (let id = 0; id < experiments; id++) {
    const l = Math.floor(uniform() * lines);
    const speedup = uniform() < 0.5 ? 0 : Math.ceil(uniform() * 20) / 20;
    const effective = Math.round(50e6 * (1 + 0.02 * gauss()));
    const rate = effect[l] >= 0 ? 1 + effect[l] * speedup : 1 / (1 - effect[l] * speedup);
    const delay = Math.round(effective * speedup * 0.3);
    now += effective + delay + 10e6;
    const selected = Math.round(effective / 1e6);
    lineSamples[l] += selected;
    const arrivals = Math.max(1, Math.round(800 * (1 + 0.03 * gauss())));
    const latency = 120000 / rate * (1 + 0.03 * gauss());
    await write({ type: 'experiment', id, selected: names[l], speedup, start_ns: now - effective - delay - 10e6,
      duration_ns: effective + delay, delay_ns: delay, effective_duration_ns: effective, selected_samples: selected,
      total_samples: selected * 2, line_samples_total: lineSamples[l], elapsed_ns: now,
      points: [{ name: 'requests', kind: 'throughput', delta: Math.max(0, Math.round(1000 * rate * (1 + 0.03 * gauss()))) },
        { name: 'request-latency', kind: 'latency', arrivals, departures: arrivals,
          in_flight_avg: +(latency * arrivals / effective).toFixed(6), in_flight_end: 1 }] });
  }
  for (let i = 0; i < lines; i++) {
    const [file, line] = names[i].split(':');
    await write({ type: 'source', file, first_line: Number(line) - 2,
      lines: [-2, -1, 0, 1, 2].map((d) => `  statement_${Number(line) + d}();`) });
  }
  await write({ type: 'samples', counts: Object.fromEntries(names.map((n, i) => [n, lineSamples[i] * 3])), elapsed_ns: now });
  await write({ type: 'runtime', elapsed_ns: now, experiments, exit_status: 0 });
  await new Promise((resolve) => stream.end(resolve));
}

if (process.argv[1] && import.meta.url === `file://${process.argv[1]}`) {
  const arg = (name, fallback) => {
    const i = process.argv.indexOf(`--${name}`);
    return i > 0 ? Number(process.argv[i + 1]) : fallback;
  };
  const out = process.argv[2];
  if (!out || out.startsWith('--')) {
    console.error('usage: node generate.mjs OUT.jsonl [--experiments N] [--lines L] [--seed S]');
    process.exit(2);
  }
  await generate(out, { experiments: arg('experiments', 50000), lines: arg('lines', 400), seed: arg('seed', 1) });
}
