// Browser tests of the built page (dist/whatif-viewer.html) in real headless Chromium via
// playwright-core: plots, error bars, sorting, filters, latency sign, error messages, HTML-looking
// file names shown as text, `?profile=URL`, `whatif view` embedding. Saves screenshots to test-artifacts/.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chromium } from 'playwright-core';
import { createServer } from 'node:http';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as stallsFixture from './stalls-fixture.mjs';
import * as branchesFixture from './branches-fixture.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const fixtures = join(root, 'tests', 'fixtures', 'profiles');
const page = join(here, '..', 'dist', 'whatif-viewer.html');
const artifacts = join(root, 'test-artifacts');
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];

let context, scratch, server, baseUrl;

before(async () => {
  mkdirSync(artifacts, { recursive: true });
  scratch = mkdtempSync(join(tmpdir(), 'whatif-viewer-test-'));
  context = await chromium.launchPersistentContext(join(scratch, 'profile'), {
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: true, args: CHROMIUM_ARGS,
    viewport: { width: 1400, height: 1000 },
  });
  server = createServer((request, response) => {
    const path = decodeURIComponent(new URL(request.url, 'http://x').pathname);
    const file = path === '/' ? page : join(fixtures, path.slice(1));
    if (!file.startsWith(fixtures) && file !== page) { response.writeHead(403).end(); return; }
    if (!existsSync(file)) { response.writeHead(404).end('not found'); return; }
    response.writeHead(200, { 'content-type': file === page ? 'text/html' : 'text/plain' }).end(readFileSync(file));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${server.address().port}/`;
});

after(async () => {
  await context?.close();
  server?.close();
  rmSync(scratch, { recursive: true, force: true });
});

/** Opens the viewer from file:// and loads `files` through the file picker. */
async function open(files = [], url = `file://${page}`) {
  const tab = await context.newPage();
  const errors = [];
  tab.on('pageerror', (error) => errors.push(error.message));
  tab.errors = errors;
  await tab.goto(url);
  await tab.waitForSelector('body[data-init="1"]');
  if (files.length) {
    await tab.setInputFiles('#file-input', files);
    await tab.waitForFunction(() => document.body.dataset.ready === '1' || document.querySelector('.message'));
  }
  return tab;
}

const cardNames = (tab) => tab.$$eval('#plots .card', (cards) => cards.map((c) => c.dataset.line));

test('one plot per line, with error bars, trends and source', async () => {
  const tab = await open([join(fixtures, 'basic.jsonl')]);
  assert.equal((await cardNames(tab)).length, 6);
  const first = tab.locator('#plots .card').first();
  assert.equal(await first.getAttribute('data-line'), '/home/dev/app/src/worker.cpp:42');
  assert.ok(await first.locator('svg g.error-bar line').count() >= 10, 'error bars');
  assert.equal(await first.locator('svg g.trend path').count(), 1, 'trend line');
  assert.equal(await first.locator('svg g.measurement circle').count(), 12);
  assert.match(await first.locator('.source .hit').textContent(), /work_at_line_42/);
  const summary = await tab.locator('#summary').textContent();
  assert.match(summary, /400/);
  assert.match(summary, /\.\/app --threads 4 input\.txt/);
  assert.match(summary, /run-wide baseline: \/home\/dev\/app\/src\/parse\.cpp:7/);
  assert.match(summary, /no debug info/);
  assert.equal(await tab.locator('#lbr-section, #stalls-section, #branch-flow-section').count(), 0, 'no invented sections');
  await tab.screenshot({ path: join(artifacts, 'viewer-basic.png') });
  await tab.screenshot({ path: join(artifacts, 'viewer-basic-full.png'), fullPage: true });
  assert.deepEqual(tab.errors, []);
  await tab.close();
});

test('plots off the first screen are drawn when scrolled into view', async () => {
  const tab = await open();
  await tab.setViewportSize({ width: 900, height: 500 });
  await tab.setInputFiles('#file-input', join(fixtures, 'basic.jsonl'));
  await tab.waitForSelector('body[data-ready="1"]');
  const drawn = () => tab.locator('#plots .chart svg').count();
  const before = await drawn();
  assert.ok(before >= 1 && before < 6, `${before} plots drawn eagerly`);
  await tab.locator('#plots .card').last().scrollIntoViewIfNeeded();
  await tab.waitForFunction(() => document.querySelector('#plots .card:last-child .chart svg'));
  assert.ok(await drawn() > before);
  assert.match(await tab.locator('#plots .card').last().locator('.metrics').textContent(), /impact −\d+\.\d% \[/);
  await tab.close();
});

test('sort orders', async () => {
  const tab = await open([join(fixtures, 'basic.jsonl')]);
  const base = (names) => names.map((n) => n.split('/').pop());
  // Default: the report's rank. parse.cpp:7 and worker.cpp:57 have equal impacts (11.39%, 11.41%);
  // parse.cpp:7's lower noise bound is higher.
  assert.deepEqual(base(await cardNames(tab)),
    ['worker.cpp:42', 'parse.cpp:7', 'worker.cpp:57', 'hash.h:120', 'util.cpp:88', 'queue.cpp:17']);
  await tab.selectOption('#sort', 'impact');
  assert.deepEqual(base(await cardNames(tab)).slice(0, 3), ['worker.cpp:42', 'worker.cpp:57', 'parse.cpp:7']);
  await tab.selectOption('#sort', 'name');
  assert.deepEqual(base(await cardNames(tab)),
    ['hash.h:120', 'parse.cpp:7', 'queue.cpp:17', 'util.cpp:88', 'worker.cpp:42', 'worker.cpp:57']);
  await tab.selectOption('#sort', 'min');
  assert.equal(base(await cardNames(tab))[0], 'queue.cpp:17');
  await tab.selectOption('#sort', 'max');
  assert.equal(base(await cardNames(tab))[0], 'worker.cpp:42');
  await tab.selectOption('#sort', 'slope');
  const slopes = base(await cardNames(tab));
  assert.equal(slopes[0], 'worker.cpp:42');
  assert.equal(slopes[5], 'queue.cpp:17');
  await tab.close();
});

test('filters: file, text, minimum speedups, contention', async () => {
  const tab = await open([join(fixtures, 'basic.jsonl')]);
  await tab.selectOption('#file-filter', '/home/dev/app/src/worker.cpp');
  assert.equal((await cardNames(tab)).length, 2);
  await tab.selectOption('#file-filter', '');
  await tab.fill('#text-filter', 'queue');
  assert.deepEqual(await cardNames(tab), ['/home/dev/app/src/queue.cpp:17']);
  await tab.fill('#text-filter', 'work_at_line_88');  // matches the source snippet
  assert.deepEqual(await cardNames(tab), ['/home/dev/app/src/util.cpp:88']);
  await tab.fill('#text-filter', '');
  await tab.locator('#min-points').fill('13');
  const many = await cardNames(tab);
  assert.ok(many.length >= 1 && many.length < 6, `min 13 speedups leaves ${many.length}`);
  await tab.locator('#min-points').fill('1');
  await tab.check('#contention-only');
  assert.deepEqual(await cardNames(tab), ['/home/dev/app/src/queue.cpp:17']);
  assert.equal(await tab.locator('#plots .card.contention .badge.contention').count(), 1);
  await tab.close();
});

test('latency: shorter latency plots upwards', async () => {
  const tab = await open([join(fixtures, 'latency.jsonl')]);
  const first = tab.locator('#plots .card').first();
  assert.equal(await first.getAttribute('data-line'), '/srv/server.cpp:210');
  assert.match(await first.locator('.metrics').textContent(), /impact \+\d/);
  const [zeroY, highestY] = await first.evaluate((card) => {
    const dots = [...card.querySelectorAll('g.measurement circle')];
    const ys = dots.map((d) => Number(d.getAttribute('cy')));
    return [ys[0], Math.min(...ys)];  // the first dot is the baseline at (0, 0)
  });
  assert.ok(highestY < zeroY - 20, 'the largest line speedup sits well above the zero line');
  await tab.close();
});

test('clear messages for empty, invalid and unknown-version files', async () => {
  const tab = await open([join(fixtures, 'empty.jsonl'), join(fixtures, 'invalid.jsonl'),
    join(fixtures, 'unknown-version.jsonl')]);
  // open() returns at the first message; the other files' messages follow.
  await tab.waitForFunction(() => document.querySelectorAll('.message').length >= 3);
  const messages = await tab.$$eval('.message', (m) => m.map((x) => x.textContent));
  assert.equal(messages.length, 3);
  assert.match(messages[0], /^Empty profile.*empty\.jsonl: empty profile/);
  assert.match(messages[1], /^Invalid profile.*invalid\.jsonl: not a profile/);
  assert.match(messages[2], /^Unsupported profile version.*version 99; this viewer reads format 'whatif-profile' version 1/);
  assert.equal((await cardNames(tab)).length, 0);
  await tab.close();
});

test('file names that look like HTML are shown as text', async () => {
  const dir = join(scratch, 'names');
  mkdirSync(dir, { recursive: true });
  const good = join(dir, '<script>window.__pwned=1<script><img src=x onerror="window.__pwned=2">.jsonl');
  const bad = join(dir, '<b>bold<b><script>window.__pwned=3<script>.jsonl');
  writeFileSync(good, readFileSync(join(fixtures, 'exact.jsonl')));
  writeFileSync(bad, 'not a profile\n');
  const tab = await open([good, bad]);
  const names = await tab.locator('.profile-names').textContent();
  assert.ok(names.includes('<script>window.__pwned=1<script><img src=x onerror="window.__pwned=2">.jsonl'), names);
  assert.match(await tab.locator('.message').textContent(), /<b>bold<b><script>window\.__pwned=3<script>\.jsonl: not a profile/);
  assert.equal(await tab.locator('#summary img, #messages b, #messages script').count(), 0);
  assert.equal(await tab.evaluate(() => window.__pwned), undefined);
  await tab.close();
});

test('a program without debug info shows functions, by symbol or object+offset', async () => {
  // whatif names the functions of an object without line tables (docs/profile-format.md).
  const profile = join(scratch, 'functions.jsonl');
  writeFileSync(profile, readFileSync(join(fixtures, 'exact.jsonl'), 'utf8')
    .replaceAll('src/exact.cpp:10', 'ns::Parser::parse(char const*)').replaceAll('src/exact.cpp:20', 'exact+0x1139'));
  const tab = await open([profile]);
  await tab.waitForSelector('body[data-ready="1"]');
  assert.deepEqual((await cardNames(tab)).sort(), ['exact+0x1139', 'ns::Parser::parse(char const*)']);
  const names = await tab.locator('#plots .card h3 .name').allTextContents();
  assert.deepEqual(names.sort(), ['exact+0x1139', 'ns::Parser::parse(char const*)'], 'names shown whole');
  assert.equal(await tab.locator('#plots .card h3 .badge', { hasText: 'function' }).count(), 2);
  assert.equal(await tab.locator('#plots .card .source').count(), 0, 'no source for a function');
  const files = await tab.locator('#file-filter option').allTextContents();
  assert.ok(files.includes('functions (no debug info)'), files.join(', '));
  assert.deepEqual(tab.errors, []);
  await tab.close();
});

test('?profile=URL loads and combines profiles (Coz text and JSON Lines too)', async () => {
  const tab = await open([], `${baseUrl}?profile=basic.jsonl&profile=coz-basic.coz`);
  await tab.waitForSelector('body[data-ready="1"]');
  assert.equal((await cardNames(tab)).length, 9);
  assert.match(await tab.locator('.profile-names').textContent(), /basic\.jsonl \(whatif\), coz-basic\.coz \(coz-text\)/);
  await tab.close();
  const coz = await open([join(fixtures, 'coz-basic.coz.jsonl')]);
  assert.deepEqual((await cardNames(coz)).slice(0, 1), ['matrix.c:31']);
  assert.equal(await coz.locator('.legend-item').count(), 2);
  await coz.screenshot({ path: join(artifacts, 'viewer-coz.png') });
  await coz.close();
});

test('branch-record and stall sections appear only with such records', async () => {
  const file = join(scratch, 'with-lbr.jsonl');
  writeFileSync(file, `${readFileSync(join(fixtures, 'exact.jsonl'), 'utf8')}` +
    '{"type":"lbr","from":"a.c:1","to":"a.c:9","count":12}\n' +
    [stallsFixture.chase, stallsFixture.helper, stallsFixture.source].map((r) => JSON.stringify(r)).join('\n') + '\n');
  const tab = await open([file]);
  assert.match(await tab.locator('#lbr-section').textContent(), /Branch records \(1 record\).*a\.c:9/);
  const stalls = tab.locator('#stalls-section');
  assert.match(await stalls.locator('h2').textContent(), /Stalls \(2 procedures\)/);
  assert.deepEqual(await stalls.locator('.stalls-procedures tbody td.mono:nth-child(4)').allTextContents(), ['chase', 'helper']);
  // The hottest procedure is shown: its summary and its listing, the bubble beside the source line.
  assert.match(await stalls.locator('.stalls-summary').textContent(), /D-cache88\.9% to 98\.9%/);
  assert.match(await stalls.locator('.stalls-source').first().textContent(), /micro\.c:18 +for \(long i/);
  assert.match(await stalls.locator('.stalls-bubble.dynamic').textContent(), /dt … 78\.8cy dynamic: D-cache ← 1524, DTLB ← 1524/);
  await tab.screenshot({ path: join(artifacts, 'viewer-stalls.png'), fullPage: true });
  await stalls.locator('tr[data-procedure="helper"]').click();
  assert.match(await stalls.locator('.stalls-detail h3').first().textContent(), /helper/);
  await tab.close();
});

test('counters: utilisation and CPI over time and the function table, only with such records', async () => {
  const tab = await open([join(fixtures, 'counters-pmu.jsonl')]);
  const section = tab.locator('#counters-section');
  // One point per interval on each chart; the CPI line, not a message, where the PMU counted.
  assert.equal(await section.locator('#utilisation-chart svg g.dots-utilisation circle').count(), 10);
  assert.equal(await section.locator('#cpi-chart svg g.dots-cpi circle').count(), 10);
  assert.equal(await section.locator('#cpi-chart svg g.series-cpi path').count(), 1);
  assert.equal(await section.locator('.counters-missing').count(), 0);
  assert.match(await section.locator('.counters-note').first().textContent(), /1 interval\(s\) multiplexed/);
  const parent = section.locator('.counters-functions tr[data-function="parent"] td');
  assert.deepEqual((await parent.allTextContents()).slice(0, 6), ['parent', '20', '5.000 ms', '3.000 ms', '2000000*', '1200000*']);
  assert.match(await parent.nth(4).getAttribute('title'), /counted in 50% of the calls/);
  assert.equal(await section.locator('.counters-threads tbody tr').count(), 4);
  await tab.screenshot({ path: join(artifacts, 'viewer-counters-pmu.png'), fullPage: true });
  await tab.close();

  const nopmu = await open([join(fixtures, 'counters-nopmu.jsonl')]);
  const plain = nopmu.locator('#counters-section');
  assert.equal(await plain.locator('#utilisation-chart svg g.dots-utilisation circle').count(), 10);
  assert.equal(await plain.locator('#cpi-chart svg').count(), 0, 'no CPI chart without instructions and cycles');
  assert.match(await plain.locator('#cpi-chart .counters-missing').textContent(),
    /CPI needs a hardware PMU: instructions not available on this machine \(this machine has no hardware PMU for it\)/);
  assert.deepEqual(await plain.locator('.counters-functions tr[data-function="leaf"] td.na').allTextContents(), ['n/a', 'n/a']);
  await nopmu.screenshot({ path: join(artifacts, 'viewer-counters-nopmu.png'), fullPage: true });
  await nopmu.close();

  const none = await open([join(fixtures, 'basic.jsonl')]);
  assert.equal(await none.locator('#counters-section').count(), 0, 'no counters section without counter records');
  await none.close();
});

test('hot paths: blocks and edges weighted by count beside the source, a clicked path lit up', async () => {
  const file = join(scratch, 'with-flow.jsonl');
  writeFileSync(file, `${readFileSync(join(fixtures, 'exact.jsonl'), 'utf8')}` +
    [branchesFixture.other, branchesFixture.loop, branchesFixture.source].map((r) => JSON.stringify(r)).join('\n') + '\n');
  const tab = await open([file]);
  const section = tab.locator('#branch-flow-section');
  assert.match(await section.locator('h2').textContent(), /Hot paths \(2 functions/);
  // The most taken function first, and shown.
  assert.deepEqual(await section.locator('.flow-functions tbody td.mono:nth-child(2)').allTextContents(), ['classify', 'helper']);
  assert.equal(await section.locator('svg.flow-graph .flow-block').count(), 5);
  assert.equal(await section.locator('svg.flow-graph .flow-edge').count(), 7);
  // Weighted: the hottest edge is drawn thickest, the hottest block darkest.
  const widths = await section.locator('svg.flow-graph .flow-edge').evaluateAll((paths) =>
    paths.map((p) => [Number(p.dataset.count), Number(p.getAttribute('stroke-width'))]));
  const thickest = widths.reduce((a, b) => (b[1] > a[1] ? b : a));
  assert.equal(thickest[0], 399);
  // The source beside the graph, with each line's count.
  assert.match(await section.locator('.flow-source tr[data-line="11"]').textContent(), /400.*11.*if \(i & 3\)/);
  // The hottest path is lit: blocks 1, 3, 4 and their lines.
  const lit = () => section.locator('svg.flow-graph .flow-block.on-path').evaluateAll((g) => g.map((n) => Number(n.dataset.block)));
  assert.deepEqual(await lit(), [1, 3, 4]);
  assert.deepEqual(await section.locator('.flow-source tr.on-path').evaluateAll((r) => r.map((n) => Number(n.dataset.line))), [11, 13, 14]);
  await section.locator('.flow-paths tbody tr[data-path="1"]').click();
  assert.deepEqual(await lit(), [1, 2, 4]);
  assert.equal(await section.locator('svg.flow-graph .flow-edge.on-path').count(), 3);
  await tab.screenshot({ path: join(artifacts, 'viewer-hot-paths.png'), fullPage: true });
  await section.locator('.flow-functions tr[data-index="1"]').click();
  assert.match(await section.locator('.flow-detail h3').first().textContent(), /helper/);
  assert.deepEqual(tab.errors, []);
  await tab.close();
});

test('drag and drop replaces the profiles; rarely visited points are warned about', async () => {
  const tab = await open([join(fixtures, 'basic.jsonl')]);
  let rare = '{"type":"header","format":"whatif-profile","version":1,"command":["./rare"]}\n';
  for (let i = 0; i < 8; i++) {
    rare += `{"type":"experiment","selected":"r.c:${1 + (i % 2)}","speedup":${i < 4 ? 0 : 0.5},` +
      '"effective_duration_ns":1000000,"points":[{"name":"rare","kind":"throughput","delta":2}]}\n';
  }
  await tab.evaluate(async (text) => {
    delete document.body.dataset.ready;
    const transfer = new DataTransfer();
    transfer.items.add(new File([text], 'dropped.jsonl'));
    for (const type of ['dragenter', 'dragover', 'drop']) {
      window.dispatchEvent(new DragEvent(type, { dataTransfer: transfer, bubbles: true, cancelable: true }));
    }
  }, rare);
  await tab.waitForSelector('body[data-ready="1"]');
  assert.deepEqual(await cardNames(tab), ['r.c:1', 'r.c:2']);
  assert.match(await tab.locator('.profile-names').textContent(), /^dropped\.jsonl \(whatif\)$/);
  assert.match(await tab.locator('.warnings').textContent(), /progress point 'rare' has only 2\.0 visits per experiment/);
  assert.equal(await tab.evaluate(() => document.body.classList.contains('dragging')), false);
  await tab.close();
});

/** The launcher, when built: $WHATIF_BIN, else the usual build directories. */
function whatifBinary() {
  const candidates = [process.env.WHATIF_BIN, join(root, 'build', 'launcher', 'whatif'),
    join(root, 'build-view', 'launcher', 'whatif')].filter(Boolean);
  return candidates.find((c) => existsSync(c));
}

test('the default view shows what whatif report shows, in its order, flagging thin evidence', async () => {
  const profile = join(fixtures, 'evidence.jsonl');
  const tab = await open([profile]);
  const expected = ['src/evidence.cpp:10', 'src/evidence.cpp:30', 'src/evidence.cpp:20'];
  assert.deepEqual(await cardNames(tab), expected);
  if (whatifBinary()) {
    const report = JSON.parse(execFileSync(whatifBinary(), ['report', profile, '--format', 'json'], { encoding: 'utf8' }));
    assert.deepEqual(report.lines.map((l) => l.line), expected);
    assert.deepEqual(report.lines.map((l) => l.enough_evidence), [true, true, false]);
  }
  const flagged = await tab.$$eval('#plots .card', (cards) => cards.map((c) => !!c.querySelector('.badge.weak')));
  assert.deepEqual(flagged, [false, false, true]);
  assert.match(await tab.locator('#plots .card').last().locator('.metrics').textContent(), /impact \+17\.5% \[\+13\.\d%, \+21\.\d%\]/);
  await tab.screenshot({ path: join(artifacts, 'viewer-evidence.png'), fullPage: true });
  assert.deepEqual(tab.errors, []);
  await tab.close();
  // basic.jsonl: every line shown by default, as in the report.
  const basic = await open([join(fixtures, 'basic.jsonl')]);
  assert.equal(await basic.locator('#min-points').inputValue(), '0');
  if (whatifBinary()) {
    const report = JSON.parse(execFileSync(whatifBinary(),
      ['report', join(fixtures, 'basic.jsonl'), '--format', 'json'], { encoding: 'utf8' }));
    assert.deepEqual(await cardNames(basic), report.lines.map((l) => l.line));
  }
  await basic.close();
});

test('a --fixed-speedup run shows its prediction at that speedup, not a flag of thin evidence', async () => {
  // Bug: the card showed the impact (the mean over 0..60%, half the answer) and "not enough evidence".
  const profile = join(fixtures, 'fixed-speedup.jsonl');
  const tab = await open([profile]);
  const card = tab.locator('#plots .card').first();
  await card.locator('svg').first().waitFor();
  const metrics = await card.locator('.metrics').textContent();
  assert.match(metrics, /at 60% \+20\.0% \[\+1\d\.\d%, \+2\d\.\d%\]/);
  assert.doesNotMatch(metrics, /impact/);
  assert.equal(await card.locator('.badge.weak').count(), 0);
  assert.match(await tab.locator('#summary').textContent(), /fixed speedup\s*60%/);
  if (whatifBinary()) {
    const report = JSON.parse(execFileSync(whatifBinary(), ['report', profile, '--format', 'json'], { encoding: 'utf8' }));
    const at = report.lines[0].points[0].at_fixed_speedup;
    assert.ok(metrics.includes(`+${(at.value * 100).toFixed(1)}% [+${(at.ci_low * 100).toFixed(1)}%, +${(at.ci_high * 100).toFixed(1)}%]`), metrics);
  }
  assert.deepEqual(tab.errors, []);
  await tab.close();
});

test('whatif view embeds profiles safely', { skip: !whatifBinary() && 'whatif not built' }, async () => {
  const profile = join(scratch, '<script>alert(1)<script>.jsonl');
  const hostile = '{"type":"warning","message":"</script><script>window.__pwned=1</script><!-- x"}\n';
  writeFileSync(profile, readFileSync(join(fixtures, 'basic.jsonl'), 'utf8') + hostile);
  const out = join(scratch, 'embedded.html');
  const printed = execFileSync(whatifBinary(), ['view', profile, '-o', out],
    { env: { ...process.env, WHATIF_VIEWER_HTML: page }, encoding: 'utf8' }).trim();
  assert.equal(printed, out);
  const html = readFileSync(out, 'utf8');
  assert.equal(html.split('</script><script>window.__pwned').length, 1, 'no raw </script> from the profile');
  const tab = await open([], `file://${out}`);
  await tab.waitForSelector('body[data-ready="1"]');
  assert.equal((await cardNames(tab)).length, 6);
  assert.match(await tab.locator('.warnings').textContent(), /<\/script><script>window\.__pwned=1<\/script>/);
  assert.match(await tab.locator('.profile-names').textContent(), /<script>alert\(1\)<script>\.jsonl/);
  assert.equal(await tab.evaluate(() => window.__pwned), undefined);
  await tab.close();
});
