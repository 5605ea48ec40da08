// open_svg: perfconv's SVG flame graphs in headless Chromium, used as a person would.
//
// usage: node open_svg.mjs SHOTDIR CASE.json...
//   Each CASE.json (written by tests/svg_check.py --case) names the SVG file, the
//   hottest function `name`, the share its widest frame shows (`share`, "41.23%") and
//   the share of the samples whose stack holds it (`matched`, the figure a search for
//   it must report). For each file, with scripts on: the frame is there and its
//   tooltip (<title>) states the share; a click on it zooms (it then spans the graph's
//   width) and Reset Zoom undoes it; Search (the prompt answered with the name as a
//   regular expression) colours its frames and reports the matched share; the
//   search as plain text (a name with parentheses is no valid regular expression)
//   finds it too. A screenshot is kept (SHOTDIR/<file>.png). Then with scripts off, as
//   an image viewer shows the file: its label is drawn, with a size (SHOTDIR/
//   <file>-noscript.png). Prints "ok"/"FAIL" lines.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { chromium } from 'playwright-core'

const [shotDir, ...caseFiles] = process.argv.slice(2)
let failed = 0
const ok = (m) => console.log(`ok   ${m}`)
const bad = (m) => { failed++; console.log(`FAIL ${m}`) }
const escapeRe = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

const launch = (js) => chromium.launchPersistentContext(
  fs.mkdtempSync(path.join(os.tmpdir(), 'perfconv-svg-')), {
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    javaScriptEnabled: js,
    viewport: { width: 1300, height: 900 },
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
  })

// The frame <g> whose title's first line is `name` and whose second holds `share`.
async function findFrame (page, name, share) {
  const frames = page.locator('#frames > g')
  const n = await frames.count()
  for (let i = 0; i < n; i++) {
    const t = await frames.nth(i).locator('title').textContent()
    const lines = t.split('\n')
    if (lines[0] === name && lines[1].endsWith(`(${share})`)) return frames.nth(i)
  }
  return null
}

// the whole graph: the viewport made as tall as the image (at most 4000 px)
async function shot (page, file) {
  const h = Number(await page.locator('svg').first().getAttribute('height'))
  const w = Number(await page.locator('svg').first().getAttribute('width'))
  await page.setViewportSize({ width: Math.min(w, 4000), height: Math.min(Math.max(h, 100), 4000) })
  await page.screenshot({ path: file })
}

fs.mkdirSync(shotDir, { recursive: true })
const withJs = await launch(true)
const noJs = await launch(false)
try {
  for (const caseFile of caseFiles) {
    const c = JSON.parse(fs.readFileSync(caseFile, 'utf8'))
    const base = path.basename(c.svg)
    const url = pathToFileURL(path.resolve(c.svg)).href
    const page = await withJs.newPage()
    const errors = []
    page.on('pageerror', (e) => errors.push(String(e)))
    page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') errors.push(m.text()) })
    const requests = []
    page.on('request', (r) => { if (!r.url().startsWith('file:')) requests.push(r.url()) })
    await page.goto(url)
    const width = Number(await page.locator('svg').first().getAttribute('width'))
    const full = width - 20
    const frame = await findFrame(page, c.name, c.share)
    if (!frame) {
      bad(`${base}: no frame titled ${c.name} with (${c.share}) in its tooltip`)
      await page.close()
      continue
    }
    ok(`${base}: ${c.name} is drawn, its tooltip says ${c.share}`)
    {
      // the graph opens where its frames are: the root (the bottom frame, or the
      // top one of an icicle graph) is in the window without scrolling
      const root = page.locator('#frames > g').first().locator('rect')
      const box = await root.boundingBox()
      const vh = page.viewportSize().height
      if (box && box.y >= 0 && box.y + box.height <= vh) ok(`${base}: it opens on its root frame (at ${Math.round(box.y)} px of ${vh})`)
      else bad(`${base}: the root frame is at ${box ? Math.round(box.y) : '?'} px, outside the ${vh} px window`)
    }
    const rect = frame.locator('rect')
    const w0 = Number(await rect.getAttribute('width'))
    await frame.click()
    const w1 = Number(await rect.getAttribute('width'))
    const x1 = Number(await rect.getAttribute('x'))
    const unzoomShown = await page.locator('#unzoom').isVisible()
    if (Math.abs(w1 - full) < 0.5 && Math.abs(x1 - 10) < 0.5 && unzoomShown) ok(`${base}: a click zooms: ${w0} px -> ${w1} px, the graph's width`)
    else bad(`${base}: after a click the frame is ${w1} px at x ${x1}, not ${full} px at 10 (Reset Zoom shown: ${unzoomShown})`)
    await shot(page, path.join(shotDir, base.replace(/\.svg$/, '') + '-zoomed.png'))
    await page.locator('#unzoom').click()
    const w2 = Number(await rect.getAttribute('width'))
    if (Math.abs(w2 - w0) < 0.01 && !(await page.locator('#unzoom').isVisible())) ok(`${base}: Reset Zoom gives back ${w0} px`)
    else bad(`${base}: after Reset Zoom the frame is ${w2} px, not ${w0}`)

    for (const [how, term] of [['regular expression', `^${escapeRe(c.name)}$`], ['text', c.name]]) {
      page.once('dialog', (d) => d.accept(term))
      await page.locator('#search').click()
      const matched = await page.locator('#matched').textContent()
      const fill = await rect.getAttribute('fill')
      if (matched.startsWith(`Matched: ${c.matched} `) && fill === '#e600e6') ok(`${base}: search by ${how} colours it and says "${matched}"`)
      else bad(`${base}: search by ${how} ${term}: "${matched}", fill ${fill}; want Matched: ${c.matched}`)
      if (how === 'regular expression') await shot(page, path.join(shotDir, base.replace(/\.svg$/, '') + '.png'))
      await page.locator('#search').click() // Reset Search
      const after = await page.locator('#matched').textContent()
      if (after.trim() !== '' || (await rect.getAttribute('fill')) === '#e600e6') bad(`${base}: Reset Search left "${after}"`)
    }
    await frame.hover()
    const details = await page.locator('#details').textContent()
    if (details.startsWith(`${c.name}: `) && details.includes(c.share)) ok(`${base}: hover shows "${details}"`)
    else bad(`${base}: hover shows "${details}"`)
    if (errors.length) bad(`${base}: the page logged: ${errors.slice(0, 3).join(' | ')}`)
    if (requests.length) bad(`${base}: the file fetched ${requests.slice(0, 3).join(', ')}`)
    else ok(`${base}: nothing fetched from outside the file`)
    await page.close()

    // scripts off: what an image viewer or a code host's preview shows
    const still = await noJs.newPage()
    await still.goto(url)
    const texts = await still.locator('#frames text').allTextContents()
    const label = texts.find((t) => t === c.name || (t.endsWith('..') && c.name.startsWith(t.slice(0, -2))))
    const scripted = await still.locator('#details').textContent()
    let box = null
    if (label !== undefined) box = await still.locator('#frames text', { hasText: label }).first().boundingBox()
    if (label !== undefined && box && box.width > 10 && box.height > 5 && texts.length > 3) ok(`${base}: with scripts off ${texts.length} labels are drawn, "${label}" among them (${Math.round(box.width)}x${Math.round(box.height)} px)`)
    else bad(`${base}: with scripts off: no label for ${c.name} among ${texts.length} (box ${JSON.stringify(box)})`)
    if (scripted !== ' ') bad(`${base}: the no-script page ran the script`)
    await shot(still, path.join(shotDir, base.replace(/\.svg$/, '') + '-noscript.png'))
    await still.close()
  }
} finally {
  await withJs.close()
  await noJs.close()
}
process.exit(failed ? 1 : 0)
