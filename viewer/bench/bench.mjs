// Measures (not part of `make test`): the time for the built viewer to open a 50,000-experiment profile
// and render its first screen in headless Chromium, embedded (as `whatif view` writes it) and through
// the file picker; and the time of `whatif report` on the same profile. Usage (from viewer/):
//   npm run bench [-- --experiments 50000 --lines 400 --runs 3]   (WHATIF_BIN overrides the launcher path)
import { chromium } from 'playwright-core';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generate } from './generate.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const page = join(here, '..', 'dist', 'whatif-viewer.html');
const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const experiments = arg('experiments', 50000);
const lines = arg('lines', 400);
const runs = arg('runs', 3);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const scratch = mkdtempSync(join(tmpdir(), 'whatif-viewer-bench-'));
const profile = join(scratch, 'big.jsonl');
await generate(profile, { experiments, lines });
const size = statSync(profile).size;

// The page as `whatif view` writes it: the profile in the JSON slot, '<' escaped.
const slot = '<script id="whatif-profiles" type="application/json">[]</script>';
const payload = JSON.stringify([{ name: 'big.jsonl', text: readFileSync(profile, 'utf8') }]).replaceAll('<', '\\u003c');
const embedded = join(scratch, 'big.html');
writeFileSync(embedded, readFileSync(page, 'utf8').replace(slot, () => slot.replace('[]', payload)));

const context = await chromium.launchPersistentContext(join(scratch, 'chrome'), {
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: true, viewport: { width: 1400, height: 1000 },
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
/** Navigation start to the first screen drawn (body[data-ready] set after the eager plots render). */
async function openEmbedded() {
  const tab = await context.newPage();
  const start = Date.now();
  await tab.goto(`file://${embedded}`);
  await tab.waitForSelector('body[data-ready="1"]', { timeout: 60000 });
  await tab.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
  const total = Date.now() - start;
  const inPage = await tab.evaluate(() => performance.now());
  const phases = await tab.evaluate(() => {
    const nav = performance.getEntriesByType('navigation')[0];
    const d = document.body.dataset;
    return { html_parsed_ms: Math.round(nav.domInteractive), embedded_json_ms: +d.embedMs, parse_ms: +d.parseMs,
      analyse_ms: +d.analyseMs, render_ms: +d.renderMs };
  });
  const plots = await tab.locator('.chart svg').count();
  await tab.close();
  return { total, inPage, plots, phases };
}
async function openPicker() {
  const tab = await context.newPage();
  await tab.goto(`file://${page}`);
  await tab.waitForSelector('body[data-init="1"]');
  const start = Date.now();
  await tab.setInputFiles('#file-input', profile);
  await tab.waitForSelector('body[data-ready="1"]', { timeout: 60000 });
  await tab.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
  const total = Date.now() - start;
  await tab.close();
  return { total };
}
const embeddedRuns = [], pickerRuns = [];
for (let i = 0; i < runs; i++) embeddedRuns.push(await openEmbedded());
for (let i = 0; i < runs; i++) pickerRuns.push(await openPicker());
await context.close();

const results = {
  experiments, lines, profile_bytes: size,
  viewer_embedded_first_screen_ms: median(embeddedRuns.map((r) => r.total)),
  viewer_embedded_in_page_ms: Math.round(median(embeddedRuns.map((r) => r.inPage))),
  viewer_file_picker_first_screen_ms: median(pickerRuns.map((r) => r.total)),
  plots_on_first_screen: embeddedRuns[0].plots,
  embedded_phases_last_run: embeddedRuns[embeddedRuns.length - 1].phases,
};
const whatif = [process.env.WHATIF_BIN, join(root, 'build', 'launcher', 'whatif'), join(root, 'build-view', 'launcher', 'whatif')]
  .filter(Boolean).find((p) => existsSync(p));
if (whatif) {
  const times = [];
  for (let i = 0; i < runs; i++) {
    const start = process.hrtime.bigint();
    execFileSync(whatif, ['report', profile, '--format', 'json'], { maxBuffer: 1 << 30 });
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  results.whatif_report_ms = Math.round(median(times));
} else {
  results.whatif_report_ms = null;
}
const outDir = join(root, 'bench-out');
mkdirSync(outDir, { recursive: true });
writeFileSync(join(outDir, 'viewer-bench.json'), `${JSON.stringify(results, null, 2)}\n`);
console.log(JSON.stringify(results, null, 2));
rmSync(scratch, { recursive: true, force: true });
