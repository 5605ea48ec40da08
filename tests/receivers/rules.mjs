// rules: what Datadog, Pyroscope and Parca accept of a profile, as docs/BACKENDS.md
// reads it from their code (each check names the file it comes from). Used by
// receiver.mjs; as a command, it judges one pprof file:
//
//   node tests/receivers/rules.mjs pyroscope|parca|datadog FILE.pb.gz
//
// prints {"refusals": [...], "samples": N, "dropped": N, ...} and exits 0 when
// nothing is refused and nothing dropped, 1 otherwise.
import { gunzipSync } from 'node:zlib'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'

// Datadog's pprof decoder, from tests/browser's pinned npm packages (npm ci there)
const { Profile } = createRequire(new URL('../browser/package.json', import.meta.url))('pprof-format')

const num = (v) => Number(v ?? 0)
// An int64 as it was sent: ns since the epoch need 61 bits, more than a Number holds
// (the decoder gives a BigInt; a small value may come as a Number).
const exact = (v) => typeof v === 'bigint' ? v : BigInt(Math.trunc(Number(v ?? 0)))
// JSON with each BigInt written as its digits (a JSON number, read exactly by Python).
export function toJSON (v) {
  return JSON.stringify(v, (k, x) => typeof x === 'bigint' ? `\u0000big${x}` : x)
    .replace(/"\\u0000big(-?\d+)"/g, '$1')
}

// Prometheus's label name, in the strict form every version accepts.
export const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/
const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/

// Walk the top-level fields of a Profile message and check that every string_table
// entry (field 6) is well-formed UTF-8: proto3 strings must be, and pprof-format
// would replace bad bytes silently.
function badStrings (buf) {
  const dec = new TextDecoder('utf-8', { fatal: true })
  let i = 0
  let bad = 0
  const varint = () => {
    let v = 0n
    let s = 0n
    for (;;) {
      if (i >= buf.length) throw new Error('truncated varint')
      const b = buf[i++]
      v |= BigInt(b & 0x7f) << s
      if (!(b & 0x80)) return v
      s += 7n
    }
  }
  while (i < buf.length) {
    const key = Number(varint())
    const wire = key & 7
    if (wire === 0) varint()
    else if (wire === 1) i += 8
    else if (wire === 5) i += 4
    else if (wire === 2) {
      const len = Number(varint())
      if ((key >> 3) === 6) {
        try { dec.decode(buf.subarray(i, i + len)) } catch { bad++ }
      }
      i += len
    } else throw new Error(`wire type ${wire}`)
  }
  return bad
}

// Decode a (gzipped or plain) pprof: {prof, strings} or throws.
export function decodePprof (bytes) {
  let raw = Buffer.from(bytes)
  if (raw.length >= 2 && raw[0] === 0x1f && raw[1] === 0x8b) raw = gunzipSync(raw)
  const bad = badStrings(raw)
  const prof = Profile.decode(raw)
  const strings = prof.stringTable.strings
  return { prof, strings, badUtf8: bad }
}

const str = (strings, i) => strings[num(i)] ?? ''

// The sample types that count samples: `samples`, `*-samples`, `*_samples`, unit count.
function countColumns (prof, strings) {
  const cols = []
  prof.sampleType.forEach((t, i) => {
    const type = str(strings, t.type)
    if (str(strings, t.unit) === 'count' && /(^|[-_])samples$/.test(type)) cols.push(i)
  })
  return cols
}

function sampleCount (prof, strings, samples) {
  const cols = countColumns(prof, strings)
  let n = 0
  for (const s of samples) for (const c of cols) n += num(s.value[c])
  return n
}

// String labels of a sample, {key: value}.
function sampleLabels (strings, s) {
  const out = {}
  for (const l of s.label) if (num(l.str)) out[str(strings, l.key)] = str(strings, l.str)
  return out
}

// Checks every backend shares: proto3 strings are UTF-8.
function common (d, refusals) {
  if (d.badUtf8) refusals.push(`${d.badUtf8} strings are not UTF-8 (proto3)`)
}

// ---- Pyroscope ------------------------------------------------------------------

// api/model/labelset/labelset.go Parse, validate.go.
export function parsePyroscopeName (name) {
  const serviceRune = /^[A-Za-z0-9_.\-/]$/
  const keyRune = /^[A-Za-z0-9_.]$/
  const brace = name.indexOf('{')
  const service = (brace < 0 ? name : name.slice(0, brace)).trim()
  if (!service) throw new Error('service name is required')
  for (const r of service) if (!serviceRune.test(r)) throw new Error(`invalid service name: character is not allowed: '${r}'`)
  const labels = { __name__: service }
  if (brace < 0) return labels
  let rest = name.slice(brace + 1)
  const end = rest.indexOf('}')
  if (end >= 0) rest = rest.slice(0, end)
  if (!rest.trim()) return labels
  for (const pair of rest.split(',')) {
    const eq = pair.indexOf('=')
    if (eq < 0) continue // the parser keeps reading the key: nothing is set
    const k = pair.slice(0, eq).trim()
    const v = pair.slice(eq + 1).trim()
    if (k !== '__name__') {
      if (!k) throw new Error('label name is required')
      for (const r of k) if (!keyRune.test(r)) throw new Error(`invalid label name: ${k}: character is not allowed: '${r}'`)
    }
    labels[k] = v
  }
  return labels
}

// pkg/validation/validate.go ValidateLabels (default limits).
function validateSeriesLabels (ls, refusals) {
  const names = Object.keys(ls)
  if (!names.length) refusals.push('error at least one label pair is required per profile')
  if (names.length > 30) refusals.push(`profile series has ${names.length} label names; limit 30`)
  if (!METRIC_NAME.test(ls.__name__ ?? '')) refusals.push('invalid labels: invalid metric name')
  if (!ls.service_name) refusals.push('invalid labels: service name is not provided')
  for (const n of names) {
    if (n.length > 1024) refusals.push(`label name too long: '${n}'`)
    else if ((ls[n] ?? '').length > 2048) refusals.push(`label value too long: '${ls[n]}'`)
    else if (!LABEL_NAME.test(n)) refusals.push(`invalid labels: invalid label name '${n}'`)
  }
}

// pkg/validation/validate.go ValidateProfile: a profile whose time_nanos lies outside
// [now - reject-older-than, now + reject-newer-than] (limits.go: 1h and 10m by default)
// is refused as "outside of ingestion window". `window` {olderS, newerS} in seconds, 0
// for no limit.
function ingestionWindow (timeNanos, window, series, refusals) {
  const now = Date.now()
  const from = window.olderS ? now - window.olderS * 1000 : 0
  const to = window.newerS ? now + window.newerS * 1000 : 0
  const t = timeNanos / 1e6
  if ((!from || t > from) && (!to || t < to)) return
  const fmt = (ms) => new Date(ms).toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' +0000 UTC')
  const detail = !to ? `the ingestion window starts at ${fmt(from)}`
    : !from ? `the ingestion window ends at ${fmt(to)}`
      : `the ingestion window starts at ${fmt(from)} and ends at ${fmt(to)}`
  const ls = '{' + Object.keys(series).sort().map(k => `${k}="${series[k]}"`).join(', ') + '}'
  refusals.push(`profile with labels '${ls}' is outside of ingestion window (profile timestamp: ${fmt(t)}, ${detail})`)
}

// What Pyroscope makes of a pprof sent to /ingest with `query` (name, from, ...):
// refusals (the whole profile), samples kept and dropped, the series it files.
// `window`: the ingestion window's limits (ingestionWindow); none by default, as the
// committed recordings are older than Pyroscope's default hour.
// Pyroscope's default per-tenant limits (pkg/validation/limits.go; docs/BACKENDS.md "For
// issue 32"): the pprof's size uncompressed, its Sample count as sent, one sample's labels
// and its ingestion rate limiter's burst (ingestion_burst_size_mb, 2 MiB: dskit's limiter
// over x/time/rate never grants more than the burst at once, so a profile whose
// uncompressed bytes and label bytes pass it is always refused with 429; read from the
// code, distributor.go rateLimit)
export const PYROSCOPE_LIMITS = { profileBytes: 4194304, samples: 16000, sampleLabels: 100, burstBytes: 2097152 }

export function pyroscope (bytes, query = {}, window = {}) {
  const refusals = []
  let base
  try {
    base = parsePyroscopeName(query.name ?? 'perfconv')
  } catch (e) {
    return { refusals: [`name: ${e.message}`], status: 400 }
  }
  // pkg/pprof/pprof.go RawFromBytesWithLimit, while it inflates: 422 on /ingest
  const gz = bytes.length >= 2 && bytes[0] === 0x1f && bytes[1] === 0x8b
  if ((gz ? gunzipSync(bytes).length : bytes.length) > PYROSCOPE_LIMITS.profileBytes) {
    return { refusals: [`decompressed size exceeds maximum allowed size of ${PYROSCOPE_LIMITS.profileBytes} bytes`], status: 422 }
  }
  const d = decodePprof(bytes)
  const { prof, strings } = d
  common(d, refusals)
  const rawBytes = gz ? gunzipSync(bytes).length : bytes.length
  const labelBytes = Object.entries(base).reduce((a, [k, v]) => a + k.length + String(v).length, 0)
  if (rawBytes + labelBytes > PYROSCOPE_LIMITS.burstBytes) {
    return { refusals: [`push rate limit (4.0 MiB) exceeded while adding ${rawBytes + labelBytes} bytes`], status: 429 }
  }
  // pkg/validation/validate.go ValidateProfile
  for (const l of prof.location) if (!num(l.id)) refusals.push('location id is 0')
  for (const f of prof.function) if (!num(f.id)) refusals.push('function id is 0')
  for (const t of prof.sampleType) {
    if (str(strings, t.type).includes('-')) refusals.push(`sample type contains -: ${str(strings, t.type)}`)
  }
  // pkg/og/convert/pprof/profile.go fixTime, metricName, createLabels
  let timeNanos = num(prof.timeNanos)
  const from = Number(query.from ?? 0)
  if (!timeNanos || new Date(timeNanos / 1e6).getUTCFullYear() === 1970) timeNanos = from * 1e9
  let metric = ''
  const types = prof.sampleType.map(t => str(strings, t.type))
  if (types.includes('wall')) metric = 'wall'
  for (const st of types) {
    if (metric) break
    if (st.includes('cpu')) metric = 'process_cpu'
    else if (/alloc_|inuse_/.test(st) || st === 'space' || st === 'objects') metric = 'memory'
  }
  if (!metric) metric = types[types.length - 1] ?? ''
  const series = { __name__: metric, __delta__: 'false', service_name: base.__name__, pyroscope_spy: query.spyName ?? 'unknown' }
  for (const [k, v] of Object.entries(base)) if (k !== '__name__' && !k.startsWith('__')) series[k] = v
  ingestionWindow(timeNanos, window, series, refusals)
  // pkg/validation/validate.go ValidateProfile: before Normalize, on the samples as sent
  const seriesText = '{' + Object.keys(series).sort().map(k => `${k}="${series[k]}"`).join(', ') + '}'
  if (prof.sample.length > PYROSCOPE_LIMITS.samples) {
    refusals.push(`the profile with labels '${seriesText}' exceeds the samples count limit (max_profile_stacktrace_samples, actual: ${prof.sample.length}, limit: ${PYROSCOPE_LIMITS.samples})`)
  }
  const mostLabels = prof.sample.reduce((m, s) => Math.max(m, s.label.length), 0)
  if (mostLabels > PYROSCOPE_LIMITS.sampleLabels) {
    refusals.push(`the profile with labels '${seriesText}' exceeds the sample labels limit (max_profile_stacktrace_sample_labels, actual: ${mostLabels}, limit: ${PYROSCOPE_LIMITS.sampleLabels})`)
  }

  // pkg/pprof/pprof.go Normalize, sanitizeProfile: a location with no line and
  // address 0 is removed, and every sample that holds it
  const empty = new Set()
  for (const l of prof.location) if (!l.line.length && !num(l.address)) empty.add(num(l.id))
  const kept = []
  const dropped = []
  for (const s of prof.sample) {
    if (s.value.length !== prof.sampleType.length) { dropped.push(s); continue }
    if (s.locationId.some(id => empty.has(num(id)))) { dropped.push(s); continue }
    if (s.value.every(v => !num(v))) continue
    kept.push(s)
  }
  // pkg/distributor/distributor.go extractSampleSeries: each set of sample labels
  // becomes a series; the request's labels win
  const seen = new Map()
  for (const s of kept) {
    const ls = { ...series }
    for (const [k, v] of Object.entries(sampleLabels(strings, s))) if (!(k in ls) || ls[k] === '') ls[k] = v
    const key = JSON.stringify(Object.entries(ls).sort())
    if (!seen.has(key)) seen.set(key, ls)
  }
  if (!seen.size) seen.set('', series)
  for (const ls of seen.values()) validateSeriesLabels(ls, refusals)
  return {
    refusals: [...new Set(refusals)],
    status: refusals.length ? 400 : 200,
    samples: sampleCount(prof, strings, kept),
    dropped: sampleCount(prof, strings, dropped),
    time_nanos: num(prof.timeNanos) === timeNanos ? exact(prof.timeNanos) : exact(timeNanos),
    time_nanos_sent: exact(prof.timeNanos),
    duration_nanos: exact(prof.durationNanos),
    labels: series,
    series: seen.size,
    sample_label_keys: [...new Set(kept.flatMap(s => Object.keys(sampleLabels(strings, s))))].sort(),
    sample_types: types,
  }
}

// ---- Parca ----------------------------------------------------------------------

// pkg/normalizer/validate.go ValidatePprofProfile.
function validateParcaPprof (prof, strings, refusals) {
  const nstr = strings.length
  if (nstr > 0 && strings[0] !== '') refusals.push('first item in string table is expected to be empty string')
  prof.mapping.forEach((m, i) => {
    if (num(m.id) !== i + 1) refusals.push('mapping id is not sequential')
    if (num(m.filename) > nstr || num(m.buildId) > nstr) refusals.push(`mapping (id: ${num(m.id)}) has invalid string index`)
  })
  prof.function.forEach((f, i) => {
    if (num(f.id) !== i + 1) refusals.push('function id is not sequential')
    if (num(f.name) > nstr || num(f.systemName) > nstr || num(f.filename) > nstr) refusals.push(`function (id: ${num(f.id)}) has invalid string index`)
  })
  prof.location.forEach((l, i) => {
    if (num(l.id) !== i + 1) refusals.push('location id is not sequential')
    if (num(l.mappingId) > prof.mapping.length) refusals.push(`location has invalid mapping id: ${num(l.mappingId)}`)
    for (const ln of l.line) if (num(ln.functionId) > prof.function.length) refusals.push(`location ${num(l.id)} has invalid function id`)
  })
  if (!prof.sampleType.length && prof.sample.length) refusals.push('missing sample type information')
  prof.sample.forEach((s, i) => {
    if (s.value.length !== prof.sampleType.length) refusals.push(`mismatch: sample has ${s.value.length} values vs. ${prof.sampleType.length} types`)
    for (const id of s.locationId) {
      if (!num(id)) refusals.push('location ids of stacktraces must be non-zero')
      else if (num(id) > prof.location.length) refusals.push(`sample ${i} location is out of range`)
    }
    for (const l of s.label) if (!num(l.key)) refusals.push(`sample ${i} label has no key`)
  })
}

// prometheus/util/strutil SanitizeLabelName.
const sanitize = (k) => k.replace(/[^a-zA-Z0-9_]/g, '_')

// What Parca's NormalizeWriteRawRequest makes of one raw profile with series labels.
export function parcaProfile (bytes, seriesLabels) {
  const refusals = []
  const d = decodePprof(bytes)
  const { prof, strings } = d
  common(d, refusals)
  validateParcaPprof(prof, strings, refusals)
  // pkg/normalizer/normalizer.go NormalizePprof, MetaFromPprof, LabelsFromSample
  const profiles = prof.sampleType.map((t) => ({
    name: seriesLabels.__name__,
    sample_type: str(strings, t.type),
    sample_unit: str(strings, t.unit),
    period_type: prof.periodType ? str(strings, prof.periodType.type) : '',
    period_unit: prof.periodType ? str(strings, prof.periodType.unit) : '',
    timestamp_ms: Math.trunc(num(prof.timeNanos) / 1e6),
    duration_nanos: exact(prof.durationNanos),
    stored: 0,
  }))
  const keys = new Set()
  for (const s of prof.sample) {
    s.value.forEach((v, j) => { if (num(v) && profiles[j]) profiles[j].stored++ })
    for (const k of Object.keys(sampleLabels(strings, s))) {
      const sk = sanitize(k)
      keys.add(sk in seriesLabels ? 'exported_' + sk : sk)
    }
  }
  const cols = countColumns(prof, strings)
  let samples = 0
  for (const s of prof.sample) for (const c of cols) samples += num(s.value[c])
  return {
    refusals: [...new Set(refusals)],
    samples,
    time_nanos: exact(prof.timeNanos),
    timestamp_ms: Math.trunc(num(prof.timeNanos) / 1e6),
    duration_nanos: exact(prof.durationNanos),
    profiles,
    sample_label_keys: [...keys].sort(),
  }
}

// ---- Datadog --------------------------------------------------------------------

// libdatadog's profile (internal/profile/mod.rs, docs/BACKENDS.md "For issue 32"): what
// its backend skips, "a profile larger than 10 MiB" (gzipped or not is unstated: the
// larger, not gzipped, is held to it here)
export const DATADOG_LIMITS = { profileBytes: 10 * 1048576 }

// ddprof's names (docs/BACKENDS.md): CPU time as cpu-samples and cpu-time, the thread
// as `thread id`; the Timeline's `end_timestamp_ns`, a number (ns since the epoch) on
// every sample, within the profile's window [time_nanos, time_nanos + duration_nanos].
export function datadogProfile (bytes) {
  const refusals = []
  const d = decodePprof(bytes)
  const { prof, strings } = d
  common(d, refusals)
  const raw = bytes[0] === 0x1f && bytes[1] === 0x8b ? gunzipSync(bytes).length : bytes.length
  const skipped = raw > DATADOG_LIMITS.profileBytes
    ? `a profile larger than 10 MiB is skipped (${raw} bytes)` : null
  const t0 = exact(prof.timeNanos)
  const t1 = t0 + exact(prof.durationNanos)
  let timed = 0
  let first = null
  let last = null
  prof.sample.forEach((s, i) => {
    const ts = s.label.filter(l => str(strings, l.key) === 'end_timestamp_ns')
    if (!ts.length) return
    timed++
    if (ts.length > 1) refusals.push(`sample ${i}: end_timestamp_ns twice`)
    const l = ts[0]
    if (num(l.str) || num(l.numUnit)) refusals.push(`sample ${i}: end_timestamp_ns is not a plain number (str ${num(l.str)}, num_unit ${num(l.numUnit)})`)
    const v = exact(l.num)
    if (v < t0 || v > t1) refusals.push(`sample ${i}: end_timestamp_ns ${v} outside the profile's window [${t0}, ${t1}]`)
    if (first === null || v < first) first = v
    if (last === null || v > last) last = v
  })
  if (timed && timed !== prof.sample.length) refusals.push(`${prof.sample.length - timed} of ${prof.sample.length} samples have no end_timestamp_ns`)
  const types = prof.sampleType.map(t => `${str(strings, t.type)}/${str(strings, t.unit)}`)
  if (!types.length) refusals.push('no sample types')
  if (types.some(t => t.endsWith('/nanoseconds')) && !(types.includes('cpu-samples/count') && types.includes('cpu-time/nanoseconds'))) {
    refusals.push(`CPU time must be cpu-samples/count and cpu-time/nanoseconds, not ${types.join(', ')}`)
  }
  prof.sample.forEach((s) => {
    if (s.value.length !== prof.sampleType.length) refusals.push('a sample has not one value per sample type')
  })
  const keys = new Set()
  for (const s of prof.sample) for (const k of Object.keys(sampleLabels(strings, s))) keys.add(k)
  if (keys.has('thread_id')) refusals.push("the thread label is `thread id` (Datadog's backend reads that name)")
  return {
    refusals: [...new Set(refusals)],
    skipped,
    bytes: raw,
    samples: sampleCount(prof, strings, prof.sample),
    pprof_samples: prof.sample.length,
    timed,
    first_timestamp_ns: first,
    last_timestamp_ns: last,
    process_ids: [...new Set(prof.sample.map(s => sampleLabels(strings, s).process_id).filter(Boolean))].map(Number).sort((a, b) => a - b),
    time_nanos: exact(prof.timeNanos),
    duration_nanos: exact(prof.durationNanos),
    sample_types: types,
    sample_label_keys: [...keys].sort(),
  }
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').pop())) {
  const [backend, file] = process.argv.slice(2)
  const bytes = readFileSync(file)
  const r = backend === 'pyroscope'
    ? pyroscope(bytes, { name: 'perfconv', from: String(Math.floor(Date.now() / 1000)) })
    : backend === 'parca' ? parcaProfile(bytes, { __name__: 'process_cpu' }) : datadogProfile(bytes)
  console.log(toJSON(r))
  process.exit(r.refusals.length || r.dropped ? 1 : 0)
}
