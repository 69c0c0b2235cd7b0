// Builds dist/whatif-viewer.html: esbuild bundles src/app.js (with Observable Plot and the shared
// format/profile-format.json) and the page inlines it and the CSS, so the file works from file://.
// Usage: node build.mjs [--out PATH]
import { build } from 'esbuild';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const outIndex = process.argv.indexOf('--out');
const out = outIndex > 0 ? process.argv[outIndex + 1] : join(here, 'dist', 'whatif-viewer.html');

const result = await build({
  entryPoints: [join(here, 'src', 'app.js')], bundle: true, minify: true, format: 'iife', target: 'es2020',
  write: false, legalComments: 'none', logLevel: 'warning',
});
// Inside <script>, '</script' and '<!--' would end or confuse the element: break them up.
const script = result.outputFiles[0].text.replaceAll('</script', '<\\/script').replaceAll('<!--', '<\\!--');
const css = readFileSync(join(here, 'src', 'style.css'), 'utf8');
const page = readFileSync(join(here, 'src', 'template.html'), 'utf8')
  .replace('/*@STYLE@*/', () => css)
  .replace('/*@SCRIPT@*/', () => script);
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, page);
console.log(`viewer: wrote ${out} (${(page.length / 1024).toFixed(0)} KiB)`);
