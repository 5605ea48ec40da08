// receiver: a stand-in for Datadog's agent or intake, Pyroscope or Parca on loopback,
// for the upload tests. It applies the backends' published acceptance rules
// (rules.mjs, docs/BACKENDS.md), answers 2xx only when they hold, and writes one
// JSON line per request to --log: what it accepted (samples, time, labels) or why
// it refused. It is not the backend: a rule not in rules.mjs is not checked.
//
//   node tests/receivers/receiver.mjs --backend datadog|pyroscope|parca|otlp --log FILE
//        [--port-file FILE [--port N] | --unix PATH] [--api-key-file FILE] [--faults LIST]
//        [--reject-older-than SECONDS] [--reject-newer-than SECONDS] [--save DIR]
//
// --faults: what the first requests get, in order, comma-separated: `reset` (the
// connection is reset, no answer), `503`, `500`, `429:N` (429 with Retry-After N),
// `hang` (no answer until the client gives up), `evil` (a 400 whose answer holds a
// terminal's escape sequences: ESC [, C1's CSI, a bidi override), `partial` (OTLP: a 200
// whose ExportProfilesServiceResponse has a partial success), `rpc500` (OTLP: a 500 with a
// google.rpc.Status); later requests are judged.
// --fail-samples N: a profile of N samples that would be accepted gets a 500 instead,
// every time (one chunk the backend cannot take, whatever the tries).
// --reject-older-than, --reject-newer-than: Pyroscope's ingestion window in seconds
// (-validation.reject-older-than, default 1h; -validation.reject-newer-than, 10m), its
// defaults unless given; 0 turns one off, as a test of a committed recording (older than
// an hour, which Pyroscope itself would refuse) must.
// --save: (pyroscope) each pprof accepted is also written to DIR/N.pb.gz (N: the
// request's number), for tests that compare what arrived with what perfconv writes.
// --port: the port to listen on (default: one the system chooses), for a test that stops
// the receiver and starts it again where its client already points (tests/booted.sh).
// Listens on 127.0.0.1 only (or a Unix socket). Stops on SIGTERM.
import { createServer } from 'node:http'
import { appendFileSync, readFileSync, writeFileSync, unlinkSync } from 'node:fs'
import { createHash } from 'node:crypto'
import { gunzipSync } from 'node:zlib'
import { pyroscope, parcaProfile, datadogProfile, LABEL_NAME, toJSON } from './rules.mjs'

const args = {}
for (let i = 2; i < process.argv.length; i += 2) args[process.argv[i].replace(/^--/, '')] = process.argv[i + 1]
const backend = args.backend
const faults = (args.faults ?? '').split(',').filter(Boolean)
const apiKey = args['api-key-file'] ? readFileSync(args['api-key-file'], 'utf8').split('\n')[0].trim() : null
let n = 0
// Datadog: each runtime-id's last profile_seq taken
const seqs = new Map()

const log = (rec) => appendFileSync(args.log, toJSON(rec) + '\n')
const sha = (b) => createHash('sha256').update(b).digest('hex')

// multipart/form-data parts: [{name, filename, type, data}]
function multipart (body, contentType) {
  const m = /boundary=(?:"([^"]+)"|([^;]+))/.exec(contentType ?? '')
  if (!m) throw new Error('no multipart boundary')
  const delim = Buffer.from('--' + (m[1] ?? m[2]))
  const parts = []
  let at = body.indexOf(delim)
  if (at < 0) throw new Error('no multipart part')
  for (;;) {
    at += delim.length
    if (body.subarray(at, at + 2).toString() === '--') break
    if (body.subarray(at, at + 2).toString() !== '\r\n') throw new Error('bad multipart delimiter')
    at += 2
    const headEnd = body.indexOf('\r\n\r\n', at)
    const next = body.indexOf(Buffer.concat([Buffer.from('\r\n'), delim]), headEnd)
    if (headEnd < 0 || next < 0) throw new Error('multipart part not closed')
    const head = body.subarray(at, headEnd).toString()
    const disp = /content-disposition:\s*form-data(.*)/i.exec(head)?.[1] ?? ''
    parts.push({
      name: /;\s*name="([^"]*)"/.exec(disp)?.[1],
      filename: /;\s*filename="([^"]*)"/.exec(disp)?.[1],
      type: /content-type:\s*([^\r\n;]+)/i.exec(head)?.[1]?.trim(),
      data: body.subarray(headEnd + 4, next),
    })
    at = next + 2
  }
  return parts
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/

// libdatadog exporter/mod.rs build(), dd-trace-js event_serializer.js, datadog-agent
// pkg/trace/api/profiles.go (docs/BACKENDS.md)
function judgeDatadog (req, url, body) {
  const refusals = []
  const intake = url.pathname === '/api/v2/profile'
  if (!intake && url.pathname !== '/profiling/v1/input') return { status: 404, refusals: [`no such path ${url.pathname}`] }
  const key = req.headers['dd-api-key']
  if (intake && (!apiKey || key !== apiKey)) return { status: 403, refusals: ['DD-API-KEY missing or wrong'] }
  if (!intake && key) refusals.push('an agent gets no DD-API-KEY: it adds its own')
  if (apiKey && body.includes(Buffer.from(apiKey))) refusals.push('the API key is in the body')
  if (apiKey && url.search.includes(apiKey)) refusals.push('the API key is in the URL')
  if (!req.headers['dd-evp-origin']) refusals.push('no DD-EVP-ORIGIN header')
  const parts = multipart(body, req.headers['content-type'])
  const ev = parts.find(p => p.name === 'event')
  if (!ev) return { status: 400, refusals: ['no part named event'] }
  if (ev.filename !== 'event.json' || ev.type !== 'application/json') refusals.push('the event part is not event.json, application/json')
  const e = JSON.parse(ev.data.toString())
  if (!Array.isArray(e.attachments) || !e.attachments.length || e.attachments.some(a => typeof a !== 'string' || !a)) refusals.push('attachments: a list of file names')
  for (const f of ['start', 'end']) if (typeof e[f] !== 'string' || !RFC3339.test(e[f])) refusals.push(`${f}: not RFC 3339`)
  if (Date.parse(e.start) > Date.parse(e.end)) refusals.push('start after end')
  if (typeof e.family !== 'string' || !e.family) refusals.push('family: missing')
  if (e.version !== '4') refusals.push(`version: ${JSON.stringify(e.version)}, not "4"`)
  const tags = {}
  if (typeof e.tags_profiler !== 'string') refusals.push('tags_profiler: not a string')
  else {
    for (const t of e.tags_profiler.split(',')) {
      const c = t.indexOf(':')
      if (c <= 0) refusals.push(`tags_profiler: ${JSON.stringify(t)} is not key:value`)
      else tags[t.slice(0, c)] = t.slice(c + 1)
    }
    if (!tags.service) refusals.push('tags_profiler: no service:')
    // ddprof's (src/exporter/ddprof_exporter.cc) and libdatadog's (build_tags_string):
    // runtime-id a lower-case UUID v4, profile_seq from 0 up, runtime_platform last
    const rid = tags['runtime-id']
    if (!/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(rid ?? '')) refusals.push(`runtime-id: ${JSON.stringify(rid)} is not a lower-case UUID v4`)
    if (!/^(0|[1-9]\d*)$/.test(tags.profile_seq ?? '')) refusals.push(`profile_seq: ${JSON.stringify(tags.profile_seq)} is not a count from 0`)
    else if (rid && seqs.has(rid) && Number(tags.profile_seq) <= seqs.get(rid)) refusals.push(`profile_seq ${tags.profile_seq} after ${seqs.get(rid)} for runtime-id ${rid}: not increasing`)
    if (!/^[a-z0-9_]+-[a-z0-9_]+-[a-z0-9_]+(-[a-z0-9_]+)?$/.test(tags.runtime_platform ?? '')) refusals.push(`runtime_platform: ${JSON.stringify(tags.runtime_platform)} is not a target triple`)
    if (!e.tags_profiler.endsWith(`runtime_platform:${tags.runtime_platform}`)) refusals.push('runtime_platform is not the last tag')
  }
  let samples = 0
  const profiles = []
  const skipped = []
  for (const a of e.attachments ?? []) {
    const p = parts.find(x => x.name === a && x.filename === a)
    if (!p) { refusals.push(`attachment ${a}: no part`); continue }
    if (p.data[0] !== 0x1f || p.data[1] !== 0x8b) refusals.push(`attachment ${a}: not gzipped`)
    const r = datadogProfile(p.data)
    refusals.push(...r.refusals.map(x => `${a}: ${x}`))
    // the samples' times within the request's window too (start and end are RFC 3339 to
    // the nanosecond)
    const ns = (t) => { const m = /\.(\d+)/.exec(t); return BigInt(Date.parse(t.replace(/\.\d+/, ''))) * 1000000n + BigInt(((m?.[1] ?? '') + '000000000').slice(0, 9)) }
    if (r.timed && typeof e.start === 'string' && typeof e.end === 'string' && RFC3339.test(e.start) && RFC3339.test(e.end)) {
      if (r.first_timestamp_ns < ns(e.start) || r.last_timestamp_ns > ns(e.end)) refusals.push(`${a}: end_timestamp_ns ${r.first_timestamp_ns}..${r.last_timestamp_ns} outside the event's window ${e.start}..${e.end}`)
    }
    if (r.skipped) skipped.push(`${a}: ${r.skipped}`)
    samples += r.samples
    profiles.push({ ...r, sha256: sha(p.data) })
  }
  if (!refusals.length && tags['runtime-id']) seqs.set(tags['runtime-id'], Number(tags.profile_seq))
  return {
    status: refusals.length ? 400 : 200,
    refusals,
    // taken (2xx), as the backend takes it, and then not kept: logged as skipped
    skipped: skipped.length ? skipped : undefined,
    accepted: { samples, start: e.start, end: e.end, family: e.family, tags, info: e.info, intake, profiles, sha256: profiles[0]?.sha256, runtime_id: tags['runtime-id'], profile_seq: tags.profile_seq === undefined ? undefined : Number(tags.profile_seq) },
  }
}

// pkg/ingester/pyroscope/ingest_handler.go and rules.mjs pyroscope()
function judgePyroscope (req, url, body) {
  if (url.pathname !== '/ingest') return { status: 404, refusals: [`no such path ${url.pathname}`] }
  const q = Object.fromEntries(url.searchParams)
  if (q.format !== 'pprof') return { status: 400, refusals: [`format ${q.format}: this receiver checks pprof only`] }
  for (const f of ['from', 'until']) if (q[f] !== undefined && !/^\d+$/.test(q[f])) return { status: 400, refusals: [`${f}: not Unix seconds`] }
  const r = pyroscope(body, q, { olderS: Number(args['reject-older-than'] ?? 3600), newerS: Number(args['reject-newer-than'] ?? 600) })
  if (r.status !== 200) return { status: r.status === 429 ? 429 : r.status === 400 && r.refusals[0]?.startsWith('name:') ? 400 : 422, refusals: r.refusals }
  return {
    status: 200,
    refusals: [],
    accepted: { ...r, from: Number(q.from), until: Number(q.until), tenant: req.headers['x-scope-orgid'] ?? null, sha256: sha(body) },
    pprof: body,
  }
}

// proto profilestore.proto's HTTP rule and pkg/normalizer (rules.mjs parcaProfile)
function judgeParca (req, url, body) {
  if (url.pathname !== '/profiles/writeraw') return { status: 404, refusals: [`no such path ${url.pathname}`] }
  const refusals = []
  const j = JSON.parse(body.toString())
  if (!Array.isArray(j.series) || !j.series.length) return { status: 400, refusals: ['no series'] }
  const accepted = []
  for (const s of j.series) {
    const ls = {}
    for (const l of s.labels?.labels ?? []) {
      if (l.name === '__name__') { ls.__name__ = l.value; continue }
      if (!LABEL_NAME.test(l.name ?? '')) refusals.push(`invalid label name: ${l.name}`)
      if (l.name in ls) refusals.push(`duplicate label name: ${l.name}`)
      ls[l.name] = l.value
    }
    if (!ls.__name__) refusals.push('missing __name__ label')
    for (const sm of s.samples ?? []) {
      const b64 = sm.raw_profile ?? sm.rawProfile
      if (typeof b64 !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(b64) || b64.length % 4) {
        refusals.push('raw_profile: not base64')
        continue
      }
      const raw = Buffer.from(b64, 'base64')
      const r = parcaProfile(raw, ls)
      refusals.push(...r.refusals)
      accepted.push({ ...r, labels: ls, normalized: !!j.normalized, sha256: sha(raw) })
    }
  }
  if (refusals.length) return { status: 400, refusals }
  return {
    status: 200,
    refusals: [],
    accepted: { samples: accepted.reduce((a, x) => a + x.samples, 0), time_nanos: accepted[0]?.time_nanos, labels: accepted[0]?.labels, profiles: accepted, sha256: accepted[0]?.sha256 },
  }
}

// OTLP/HTTP (opentelemetry-proto's specification) as an OpenTelemetry Collector or
// Pyroscope's OTLP ingest takes it (pkg/ingester/otlp/ingest_handler.go, convert.go;
// docs/BACKENDS.md "OTLP"): the request decoded with formats/proto/otlp_*.proto and the .proto's
// MUST rules applied (tests/otlp/otlp_decode.mjs); Pyroscope's: its content types only
// (else 415), gzip by Content-Encoding, no '-' in a sample type, a profile that has a
// name (its period type, or process_cpu, off_cpu), its time within the ingestion window.
// the OTLP schema's decoder (protobufjs), loaded only for an OTLP receiver
const { otlpChecker } = args.backend === 'otlp' ? await import('../otlp/otlp_decode.mjs') : {}
let otlp = null
function judgeOtlp (req, url, body) {
  if (url.pathname !== '/v1development/profiles') return { status: 404, refusals: [`no such path ${url.pathname}`] }
  const ct = req.headers['content-type']
  if (ct !== 'application/x-protobuf' && ct !== 'application/protobuf') return { status: 415, refusals: [`unsupported content type: ${ct}`] }
  const enc = (req.headers['content-encoding'] ?? '').toLowerCase()
  let raw = body
  if (enc === 'gzip') {
    try { raw = gunzipSync(body) } catch (e) { return { status: 400, refusals: [`gzip: ${e.message}`] } }
  } else if (enc) return { status: 400, refusals: [`content encoding ${enc}`] }
  otlp ??= otlpChecker()
  const r = otlp.toJSON(otlp.analyze(raw))
  const refusals = [...r.problems]
  const olderS = Number(args['reject-older-than'] ?? 3600)
  const newerS = Number(args['reject-newer-than'] ?? 600)
  let samples = 0
  for (const p of r.profiles) {
    const [type, unit] = p.sample_type.split('/')
    if (type.includes('-')) refusals.push(`sample type contains -: ${type}`)
    const key = `${type}:${unit}:${p.period && p.period_type ? p.period_type.replace('/', ':') : ':'}`
    const name = key === 'samples:count:cpu:nanoseconds' ? 'process_cpu'
      : key === 'off_cpu:nanoseconds::' ? 'off_cpu' : key.split(':')[2]
    if (p.samples && !name) refusals.push(`profile ${p.sample_type}: no name (its period type and period are not set)`)
    const t = Number(BigInt(p.time_unix_nano) / 1000000n)
    if (p.time_unix_nano !== '0' && ((olderS && t < Date.now() - olderS * 1000) || (newerS && t > Date.now() + newerS * 1000))) {
      refusals.push(`profile ${p.sample_type} is outside of ingestion window (profile timestamp: ${new Date(t).toISOString()})`)
    }
    if (unit === 'count') samples += Number(p.events)
  }
  if (refusals.length) return { status: 400, refusals: [...new Set(refusals)] }
  return {
    status: 200,
    refusals: [],
    accepted: { samples, profiles: r.profiles.map(p => ({ sample_type: p.sample_type, events: p.events, value_sum: p.value_sum, time_unix_nano: p.time_unix_nano, duration_nano: p.duration_nano, timestamps_count: p.timestamps_count })), resources: r.resources, headers: Object.fromEntries(Object.entries(req.headers).filter(([k]) => !['host', 'content-length', 'accept'].includes(k))), sha256: sha(body) },
    response: otlp.response({}),
  }
}

const judges = { datadog: judgeDatadog, pyroscope: judgePyroscope, parca: judgeParca, otlp: judgeOtlp }

const server = createServer((req, res) => {
  const chunks = []
  req.on('data', c => chunks.push(c))
  req.on('end', () => {
    const seq = ++n
    const fault = faults[seq - 1]
    const body = Buffer.concat(chunks)
    if (fault === 'reset') {
      log({ n: seq, outcome: 'fault', fault })
      req.socket.resetAndDestroy()
      return
    }
    if (fault === 'hang') {
      log({ n: seq, outcome: 'fault', fault })
      return
    }
    if (fault === 'partial' || fault === 'rpc500') {
      otlp ??= otlpChecker()
      log({ n: seq, outcome: 'fault', fault })
      res.writeHead(fault === 'partial' ? 200 : 500, { 'Content-Type': 'application/x-protobuf' })
      res.end(fault === 'partial'
        ? otlp.response({ partial_success: { rejected_profiles: 1, error_message: 'one profile had no samples the backend takes' } })
        : otlp.status({ code: 13, message: 'the exporter behind the collector failed' }))
      return
    }
    if (fault === 'evil') {
      log({ n: seq, outcome: 'fault', fault })
      res.writeHead(400, { 'Content-Type': 'text/plain' })
      res.end('bad request\x1b[2J\x1b]0;owned\x07 \u009b31m red \u202egnp.exe\nperfconv: fake line\n')
      return
    }
    if (fault) {
      const [code, after] = fault.split(':')
      log({ n: seq, outcome: 'fault', fault })
      res.writeHead(Number(code), after ? { 'Retry-After': after } : {})
      res.end(`fault ${fault}\n`)
      return
    }
    let v
    try {
      if (req.method !== 'POST') v = { status: 405, refusals: ['POST only'] }
      else v = judges[backend](req, new URL(req.url, 'http://127.0.0.1'), body)
    } catch (e) {
      v = { status: 400, refusals: [`cannot read the request: ${e.message}`] }
    }
    if (args['fail-samples'] && v.status < 300 && v.accepted?.samples === Number(args['fail-samples'])) {
      log({ n: seq, outcome: 'fault', fault: 'fail-samples', samples: v.accepted.samples })
      res.writeHead(500)
      res.end('fault fail-samples\n')
      return
    }
    log({ n: seq, outcome: v.status >= 300 ? 'refused' : v.skipped ? 'skipped' : 'accepted', status: v.status, refusals: v.refusals, skipped: v.skipped, ...v.accepted })
    if (args.save && v.status < 300 && v.pprof) writeFileSync(`${args.save}/${seq}.pb.gz`, v.pprof)
    if (v.response) {
      res.writeHead(v.status, { 'Content-Type': 'application/x-protobuf' })
      res.end(v.response)
      return
    }
    // Pyroscope's OTLP errors are plain text (http.Error)
    res.writeHead(v.status, { 'Content-Type': backend === 'otlp' ? 'text/plain' : 'application/json' })
    res.end(v.status < 300 ? (backend === 'parca' ? '{}' : '') : backend === 'otlp' ? v.refusals.join('; ') + '\n' : JSON.stringify({ error: v.refusals.join('; ') }) + '\n')
  })
})

process.on('SIGTERM', () => { server.close(); process.exit(0) })
if (args.unix) {
  try { unlinkSync(args.unix) } catch {}
  server.listen(args.unix, () => { if (args['port-file']) writeFileSync(args['port-file'], args.unix) })
} else {
  server.listen(Number(args.port ?? 0), '127.0.0.1', () => writeFileSync(args['port-file'], String(server.address().port)))
}
