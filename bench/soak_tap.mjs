// soak_tap: what bench/soak.sh's watcher sent, kept and read for its JIT frames.
//
//   node bench/soak_tap.mjs proxy --to PORT --dir DIR --port-file FILE
//   node bench/soak_tap.mjs names --backend pyroscope|parca|datadog --dir DIR
//
// proxy: listens on 127.0.0.1, passes each request to the receiver on PORT
// (tests/receivers/receiver.mjs, which judges and logs it) and its answer back, and
// keeps the request in DIR (N.body, N.json: url, content type, the receiver's status).
// The receivers log samples, not frames: this is where the frames are read.
//
// names: one JSON line per kept request the receiver accepted, in order: the sha256 of
// the profile (as the receiver logs it), its samples, and its JIT samples (a frame in
// a jitdump, a perf map or anonymous memory) with how many of them have every such
// frame named (not `[unknown]`, `module+0x...`, a bare address or a frame with no
// function), and the samples whose leaf is a JavaScript function (V8's `JS:` names).
import { createServer, request } from 'node:http'
import { createHash } from 'node:crypto'
import { readFileSync, readdirSync, writeFileSync } from 'node:fs'
import { decodePprof } from '../tests/receivers/rules.mjs'

const args = {}
for (let i = 3; i < process.argv.length; i += 2) args[process.argv[i].replace(/^--/, '')] = process.argv[i + 1]
const sha = (b) => createHash('sha256').update(b).digest('hex')

function proxy () {
  let n = 0
  const server = createServer((req, res) => {
    const chunks = []
    req.on('data', c => chunks.push(c))
    req.on('end', () => {
      const seq = ++n
      const body = Buffer.concat(chunks)
      const up = request({ host: '127.0.0.1', port: Number(args.to), method: req.method, path: req.url, headers: req.headers }, (r) => {
        const back = []
        r.on('data', c => back.push(c))
        r.on('end', () => {
          writeFileSync(`${args.dir}/${seq}.body`, body)
          writeFileSync(`${args.dir}/${seq}.json`, JSON.stringify({ n: seq, url: req.url, type: req.headers['content-type'] ?? '', status: r.statusCode }))
          res.writeHead(r.statusCode, r.headers)
          res.end(Buffer.concat(back))
        })
      })
      up.on('error', (e) => { res.writeHead(502); res.end(`soak_tap: ${e.message}\n`) })
      up.end(body)
    })
  })
  process.on('SIGTERM', () => { server.close(); process.exit(0) })
  server.listen(0, '127.0.0.1', () => writeFileSync(args['port-file'], String(server.address().port)))
}

// The pprof files in a request's body, as each backend's receiver reads them.
function profilesOf (backend, body, type) {
  if (backend === 'pyroscope') return [body]
  if (backend === 'parca') {
    const out = []
    for (const s of JSON.parse(body.toString()).series ?? []) {
      for (const sm of s.samples ?? []) out.push(Buffer.from(sm.raw_profile ?? sm.rawProfile, 'base64'))
    }
    return out
  }
  // datadog: the multipart parts that are gzipped (the pprof attachments)
  const m = /boundary=(?:"([^"]+)"|([^;]+))/.exec(type)
  const delim = Buffer.from('\r\n--' + (m[1] ?? m[2]))
  const out = []
  let at = 0
  while ((at = body.indexOf('\r\n\r\n', at)) >= 0) {
    const end = body.indexOf(delim, at)
    const data = body.subarray(at + 4, end < 0 ? body.length : end)
    if (data[0] === 0x1f && data[1] === 0x8b) out.push(data)
    if (end < 0) break
    at = end + delim.length
  }
  return out
}

const JIT_MODULE = /(^|\/)(jit-\d+\.dump(\.gz)?|perf-\d+\.map)$|^\/\/anon|^\[anon/
const UNNAMED = /^$|^\[unknown\]$|\+0x[0-9a-f]+$|^0x[0-9a-f]+$/i

function names (bytes) {
  const { prof, strings } = decodePprof(bytes)
  const str = (i) => strings[Number(i)] ?? ''
  const counts = []
  prof.sampleType.forEach((t, i) => {
    if (str(t.unit) === 'count' && /(^|[-_])samples$/.test(str(t.type))) counts.push(i)
  })
  const fname = new Map(prof.function.map(f => [Number(f.id), str(f.name)]))
  const module = new Map(prof.mapping.map(m => [Number(m.id), str(m.filename)]))
  const loc = new Map()
  for (const l of prof.location) {
    const names = l.line.map(x => fname.get(Number(x.functionId)) ?? '')
    loc.set(Number(l.id), {
      jit: JIT_MODULE.test(module.get(Number(l.mappingId)) ?? ''),
      named: names.length > 0 && names.every(s => !UNNAMED.test(s)),
      leafJS: names.length > 0 && names[0].startsWith('JS:'),
      what: `${module.get(Number(l.mappingId)) ?? '(no mapping)'} 0x${Number(l.address).toString(16)} ${names[0] ?? '(no function)'}`,
    })
  }
  const r = { samples: 0, jit: 0, jit_named: 0, leaf_js: 0, unnamed: {} }
  for (const s of prof.sample) {
    let n = 0
    for (const c of counts) n += Number(s.value[c] ?? 0)
    const ls = s.locationId.map(id => loc.get(Number(id)))
    const jit = ls.filter(l => l?.jit)
    r.samples += n
    if (ls[0]?.leafJS) r.leaf_js += n
    if (!jit.length) continue
    r.jit += n
    const bad = jit.filter(l => !l.named)
    if (!bad.length) r.jit_named += n
    for (const l of bad) r.unnamed[l.what] = (r.unnamed[l.what] ?? 0) + n
  }
  return r
}

function namesAll () {
  const kept = readdirSync(args.dir).filter(f => f.endsWith('.json')).map(f => JSON.parse(readFileSync(`${args.dir}/${f}`, 'utf8')))
  kept.sort((a, b) => a.n - b.n)
  for (const k of kept) {
    if (k.status >= 300) continue
    const body = readFileSync(`${args.dir}/${k.n}.body`)
    const r = { n: k.n, sha256: null, samples: 0, jit: 0, jit_named: 0, leaf_js: 0, unnamed: {} }
    for (const p of profilesOf(args.backend, body, k.type)) {
      const x = names(p)
      r.sha256 ??= sha(p)
      for (const f of ['samples', 'jit', 'jit_named', 'leaf_js']) r[f] += x[f]
      for (const [w, c] of Object.entries(x.unnamed)) r.unnamed[w] = (r.unnamed[w] ?? 0) + c
    }
    console.log(JSON.stringify(r))
  }
}

if (process.argv[2] === 'proxy') proxy()
else if (process.argv[2] === 'names') namesAll()
else {
  console.error('usage: soak_tap.mjs proxy --to PORT --dir DIR --port-file FILE | names --backend B --dir DIR')
  process.exit(2)
}
