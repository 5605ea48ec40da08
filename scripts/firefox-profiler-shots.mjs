// firefox-profiler-shots: by hand (docs/FIREFOX-PROFILER.md), the Firefox Profiler built
// from its source and served on loopback (scripts/serve-profiler.py) opens a -f firefox
// file through /from-url/; screenshots of its call tree (inverted) and its stack chart.
//   node scripts/firefox-profiler-shots.mjs http://127.0.0.1:PORT OUTDIR
// (run from the source tree: playwright-core from tests/browser, Debian's chromium)
import { createRequire } from 'module';
const require = createRequire(process.cwd() + '/tests/browser/package.json');
const { chromium } = require('playwright-core');
const [base, outdir] = process.argv.slice(2);
const profileUrl = base + '/profile/node.firefox.json';
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
const page = await browser.newPage({ viewport: { width: 1280, height: 760 } });
const errors = [];
page.on('pageerror', (e) => errors.push(String(e)));
page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
const t0 = Date.now();
await page.goto(base + '/from-url/' + encodeURIComponent(profileUrl) + '/calltree/?invertCallstack&v=10');
await page.waitForSelector('.treeViewRow', { timeout: 60000 });
console.log('call tree drawn in', Date.now() - t0, 'ms; url', page.url());
// expand everything: select the root, press '*'
await page.click('.treeViewRow');
await page.focus('.treeViewBody');
await page.keyboard.press('Home');
await page.keyboard.type('*');
await page.waitForTimeout(800);
// the hottest JIT function, selected: its path from the root open

const rows = await page.$$eval('.treeViewRow', (r) => r.slice(0, 40).map((x) => x.innerText.replace(/\s+/g, ' ')));
console.log(rows.join('\n'));
await page.screenshot({ path: outdir + '/firefox-calltree.png' });
// the stack chart: the timeline of the selected thread's stacks
await page.click('button.tabBarTab:has-text("Stack Chart")').catch(async () => {
  await page.goto(page.url().replace('/calltree/', '/stack-chart/'));
});
await page.waitForTimeout(2500);
await page.screenshot({ path: outdir + '/firefox-stackchart.png' });
const tracks = await page.$$eval('.timelineTrackThreadRow, .timelineTrackRow', (r) => r.map((x) => x.innerText.replace(/\s+/g, ' ').slice(0, 80)));
console.log('tracks:', JSON.stringify(tracks.slice(0, 10)));
console.log('errors:', JSON.stringify(errors.slice(0, 5)));
await browser.close();
