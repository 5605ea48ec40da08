// query: what reached the receiver in tests/booted.sh's container, from its log and the
// profiles it saved (tests/receivers/receiver.mjs --log, --save); one line of JSON.
//
//   node query.mjs [--sh] profiles LOG [SINCE]  the requests logged, those accepted whose chunk
//                                         began at SINCE (Unix seconds) or later: how many,
//                                         with samples or without, their samples in all,
//                                         and whether any profile was accepted twice
//   node query.mjs [--sh] kernel DIR [SINCE_N]  the kernel frames of the profiles saved in DIR
//                                         (N.pb.gz, N from SINCE_N), weighted by samples:
//                                         named, or left as an address in [kernel.kallsyms]
// --sh: each field as a shell assignment (KEY='VALUE'), and the line as json='...'
import { readFileSync, readdirSync } from 'node:fs'
import { gunzipSync } from 'node:zlib'
import { createRequire } from 'node:module'

const { Profile } = createRequire(new URL('../browser/package.json', import.meta.url))('pprof-format')
const argv = process.argv.slice(2)
const sh = argv[0] === '--sh' && argv.shift()
const [what, arg, since] = argv
const quote = (v) => `'${String(v).replaceAll("'", "'\\''")}'`
const out = (v) => {
  const line = JSON.stringify(v)
  if (!sh) return console.log(line)
  for (const [k, x] of Object.entries(v)) console.log(`${k}=${quote(typeof x === 'object' && x !== null ? JSON.stringify(x) : x ?? '')}`)
  console.log(`json=${quote(line)}`)
}

if (what === 'profiles') {
  let recs = []
  try {
    recs = readFileSync(arg, 'utf8').split('\n').filter(Boolean).map(l => JSON.parse(l))
  } catch (e) {
    if (e.code !== 'ENOENT') throw e
  }
  const from = Number(since ?? 0)
  const acc = recs.filter(r => r.outcome === 'accepted' && Number(r.from) >= from)
  const shas = recs.filter(r => r.outcome === 'accepted').map(r => r.sha256)
  out({
    requests: recs.length,
    accepted: acc.length,
    with_samples: acc.filter(r => Number(r.samples) > 0).length,
    empty: acc.filter(r => !(Number(r.samples) > 0)).length,
    samples: acc.reduce((a, r) => a + Number(r.samples ?? 0), 0),
    dropped: acc.reduce((a, r) => a + Number(r.dropped ?? 0), 0),
    refused: recs.filter(r => r.outcome === 'refused').length,
    refusals: [...new Set(recs.flatMap(r => r.refusals ?? []))].slice(0, 3),
    twice: shas.length - new Set(shas).size,
    first_from: acc.length ? Math.min(...acc.map(r => Number(r.from))) : null,
    last_until: acc.length ? Math.max(...acc.map(r => Number(r.until))) : null,
  })
} else if (what === 'kernel') {
  const from = Number(since ?? 0)
  let named = 0
  let unnamed = 0
  let profiles = 0
  const names = new Map()
  for (const f of readdirSync(arg)) {
    const m = /^(\d+)\.pb\.gz$/.exec(f)
    if (!m || Number(m[1]) < from) continue
    profiles++
    const p = Profile.decode(gunzipSync(readFileSync(`${arg}/${f}`)))
    const str = (i) => p.stringTable.strings[Number(i)] ?? ''
    const kernel = new Set(p.mapping.filter(m => /^\[(kernel\.kallsyms|guest\.kernel)/.test(str(m.filename))).map(m => Number(m.id)))
    const fname = new Map(p.function.map(fn => [Number(fn.id), str(fn.name)]))
    const locs = new Map(p.location.map(l => [Number(l.id), l]))
    // the samples' count: the sample type whose unit is count (perfconv writes it first)
    const vi = Math.max(0, p.sampleType.findIndex(t => str(t.unit) === 'count'))
    for (const s of p.sample) {
      const w = Number(s.value[vi] ?? 0)
      for (const id of s.locationId) {
        const l = locs.get(Number(id))
        const name = l?.line?.length ? fname.get(Number(l.line[0].functionId)) ?? '' : ''
        const inKernel = l && (kernel.has(Number(l.mappingId)) || name.startsWith('[kernel.kallsyms]'))
        if (!inKernel) continue
        if (name && !name.startsWith('[')) {
          named += w
          names.set(name, (names.get(name) ?? 0) + w)
        } else unnamed += w
      }
    }
  }
  out({ profiles, named, unnamed, top: [...names].sort((a, b) => b[1] - a[1]).slice(0, 3).map(([n]) => n) })
} else {
  console.error(`query: unknown question ${what}`)
  process.exit(2)
}
