// open_in_speedscope: validate perfconv's speedscope files against the schema that
// ships in the speedscope package, then open each given file (speedscope or Chrome
// trace) in the speedscope app, served on 127.0.0.1 and driven in headless Chromium.
//
// usage: node open_in_speedscope.mjs SHOTDIR FILE EXPECTED_NAME [FILE EXPECTED_NAME]...
//   (pairs of arguments: JIT function names hold colons and spaces)
//   A FILE ending in .speedscope.json is validated against file-format-schema.json.
//   Every FILE is loaded with #profileURL=; the test switches to the Sandwich view,
//   whose function table is page text, and looks for EXPECTED_NAME there; it keeps a
//   screenshot of the flame graph (SHOTDIR/<file>.png). A warning from the app (its
//   importer's about slices it cannot pair, say) fails the file, and so does a Chrome
//   trace's function shown with its args as JSON in its name. Prints "ok"/"FAIL" lines.
import fs from 'node:fs'
import http from 'node:http'
import path from 'node:path'
import os from 'node:os'
import { fileURLToPath } from 'node:url'
import Ajv from 'ajv'
import { chromium } from 'playwright-core'

const here = path.dirname(fileURLToPath(import.meta.url))
const app = path.join(here, 'node_modules/speedscope/dist/release')
const [shotDir, ...rest] = process.argv.slice(2)
const cases = []
for (let i = 0; i + 1 < rest.length; i += 2) cases.push({ file: rest[i], want: rest[i + 1] })
let failed = 0
const ok = (m) => console.log(`ok   ${m}`)
const bad = (m) => { failed++; console.log(`FAIL ${m}`) }

// 1. The schema.
const schema = JSON.parse(fs.readFileSync(path.join(app, 'file-format-schema.json'), 'utf8'))
const validate = new Ajv({ allErrors: true, strict: false }).compile(schema)
for (const c of cases) {
  const file = c.file
  if (!file.endsWith('.speedscope.json')) continue
  const doc = JSON.parse(fs.readFileSync(file, 'utf8'))
  if (validate(doc)) ok(`schema: ${path.basename(file)} validates against speedscope's file-format-schema.json`)
  else bad(`schema: ${path.basename(file)}: ${JSON.stringify(validate.errors.slice(0, 3))}`)
}

// 2. The app, on loopback only; it serves the app's files and the profiles named.
const files = new Map(cases.map((c) => {
  const file = c.file
  return ['/profiles/' + path.basename(file), path.resolve(file)]
}))
// served by base name: two files of one name would both show the last
if (files.size !== new Set(cases.map((c) => c.file)).size) bad('usage: two files share a base name')
const types = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.json': 'application/json',
  '.wasm': 'application/wasm', '.png': 'image/png', '.woff2': 'font/woff2', '.ico': 'image/x-icon' }
const server = http.createServer((req, res) => {
  const url = decodeURIComponent(new URL(req.url, 'http://x').pathname)
  let file = files.get(url)
  if (!file) {
    const rel = path.normalize(url === '/' ? '/index.html' : url)
    file = path.join(app, rel)
    if (!file.startsWith(app + path.sep)) { res.writeHead(403); res.end(); return }
  }
  fs.readFile(file, (err, data) => {
    if (err) { res.writeHead(404); res.end(); return }
    res.writeHead(200, { 'content-type': types[path.extname(file)] || 'application/octet-stream' })
    res.end(data)
  })
})
await new Promise((r) => server.listen(0, '127.0.0.1', r))
const port = server.address().port

const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'perfconv-chromium-'))
const context = await chromium.launchPersistentContext(userDataDir, {
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  viewport: { width: 1400, height: 900 },
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
})
fs.mkdirSync(shotDir, { recursive: true })
try {
  for (const c of cases) {
    const file = c.file, want = c.want, base = path.basename(file)
    const page = await context.newPage()
    // Any warning or error from the app's scripts fails the file (the importer's
    // "Tried to end ..." and "... still open" among them); Chromium's own (software
    // WebGL, GPU stalls), attributed to the page, fail it only if they name one.
    const appWarnings = [], browserWarnings = []
    page.on('console', (m) => {
      if (m.type() !== 'warning' && m.type() !== 'error') return
      const fromApp = new URL(m.location().url || 'about:blank').pathname.endsWith('.js')
      ;(fromApp ? appWarnings : browserWarnings).push(m.text())
    })
    page.on('pageerror', (e) => appWarnings.push(String(e)))
    const started = Date.now()
    try {
      await page.goto(`http://127.0.0.1:${port}/index.html#profileURL=${encodeURIComponent(`http://127.0.0.1:${port}/profiles/${base}`)}`)
      // the toolbar's view tabs appear once a profile is loaded
      await page.getByText(/Sandwich$/).waitFor({ timeout: 30000 })
      await page.waitForSelector('canvas', { timeout: 10000 })
      // from navigation to a drawn flame graph: the app's own start-up included
      const loaded = Date.now() - started
      await page.waitForTimeout(300)
      const shot = path.join(shotDir, base.replace(/\.json$/, '') + '.png')
      await page.screenshot({ path: shot })
      await page.getByText(/Sandwich$/).click()
      await page.waitForTimeout(300)
      // sort the table by self time, so the hottest function is in the rows drawn
      const selfHeader = page.getByText('Self', { exact: true }).first()
      let text = ''
      for (let i = 0; i < 3 && !text.includes(want); i++) {
        if (i && await selfHeader.count()) { await selfHeader.click(); await page.waitForTimeout(200) }
        text = await page.locator('body').innerText()
      }
      const warned = [...appWarnings, ...browserWarnings.filter((w) => /Tried to end|still open|Could not|Error/i.test(w))]
      // a Chrome trace's frames are named by the function alone, not its args as JSON
      const argsInName = file.endsWith('.speedscope.json') ? null : text.match(/^.*\S \{".*$/m)
      if (!text.includes(want)) bad(`app: ${base}: "${want}" not in the Sandwich view (page text: ${text.slice(0, 300).replace(/\n/g, ' | ')})`)
      else if (argsInName) bad(`app: ${base}: a frame's name holds its args: ${argsInName[0].slice(0, 200)}`)
      else if (warned.length) bad(`app: ${base}: the app warned ${warned.length} times: ${warned.slice(0, 3).join(' / ')}`)
      else ok(`app: ${base} opens in speedscope in ${loaded} ms; Sandwich shows ${want}; screenshot ${shot}`)
    } catch (e) {
      const warnings = [...appWarnings, ...browserWarnings]
      bad(`app: ${base}: ${String(e).split('\n')[0]}${warnings.length ? ' (console: ' + warnings.slice(0, 3).join(' / ') + ')' : ''}`)
    }
    await page.close()
  }
} finally {
  await context.close()
  server.close()
  fs.rmSync(userDataDir, { recursive: true, force: true })
}
process.exit(failed ? 1 : 0)
