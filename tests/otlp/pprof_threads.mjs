// pprof_threads: a pprof's sample types in order, each with its total and its sums by
// thread ("pid/tid" from the process_id and thread id labels), as JSON; for comparing
// another output's counts with the pprof's (tests/e2e_otlp.sh).
//
//   node tests/otlp/pprof_threads.mjs FILE.pb.gz
import { readFileSync } from 'node:fs'
import { gunzipSync } from 'node:zlib'
import { createRequire } from 'node:module'

const { Profile } = createRequire(new URL('../browser/package.json', import.meta.url))('pprof-format')
const raw = readFileSync(process.argv[2])
const prof = Profile.decode(raw[0] === 0x1f && raw[1] === 0x8b ? gunzipSync(raw) : raw)
const str = (i) => prof.stringTable.strings[Number(i)] ?? ''
const cols = prof.sampleType.map((t) => ({ sample_type: `${str(t.type)}/${str(t.unit)}`, total: 0n, by_thread: {} }))
for (const s of prof.sample) {
  const l = {}
  for (const x of s.label) l[str(x.key)] = str(x.str)
  const th = `${l.process_id ?? '?'}/${l['thread id'] ?? l.thread_id ?? '?'}`
  s.value.forEach((v, i) => {
    cols[i].total += BigInt(v)
    cols[i].by_thread[th] = (cols[i].by_thread[th] ?? 0n) + BigInt(v)
  })
}
console.log(JSON.stringify(cols, (k, v) => typeof v === 'bigint' ? v.toString() : v))
