// otlp_decode: decode a file holding one OTLP profiles ExportProfilesServiceRequest
// (opentelemetry.proto.collector.profiles.v1development, proto v1.10/v1.11 wire
// format) with protobufjs, check the MUST rules of profiles.proto, and print a JSON
// summary on stdout.
//
// usage: node otlp_decode.mjs [SCHEMA] [--compare-proto DIR] FILE|-
//        node otlp_decode.mjs [SCHEMA] --self-test
//   SCHEMA (where the message definitions come from; default --proto <repo>/formats/proto):
//     --proto DIR|FILE  .proto files: DIR/opentelemetry/proto/collector/profiles/
//                     v1development/profiles_service.proto (upstream layout), else
//                     DIR/otlp_profiles.proto (perfconv's flat copy; it imports the other
//                     otlp_*.proto), else every DIR/*.proto; or the one FILE and its imports
//     --official DIR  the official v1.10+ schema as compiled into Debian's
//                     libopentelemetry-proto-dev (forky: 1.11.0-1): the serialized
//                     FileDescriptorProtos in its opentelemetry/proto/**/*.pb.cc files.
//                     DIR is the unpacked .deb (or its usr/include); fetch_official_schema.sh
//                     beside this file makes one. No npm package ships these protos.
//   --compare-proto DIR  also load DIR's .proto files (as --proto does) and compare every
//                     message reachable from the request/response field by field with
//                     SCHEMA (name, number, label, type, oneof, reserved); differences are
//                     problems. Without FILE: only compare.
//   FILE may be gzip-compressed (detected by its magic bytes); "-" reads stdin.
// Needs protobufjs from tests/browser/node_modules (cd tests/browser && npm ci).
//
// Output: {"schema", "resources":[{attr: value}], "profiles":[{resource, scope,
//   sample_type:"type/unit", period_type, period, time_unix_nano, duration_nano (decimal
//   strings), samples, events, value_sum, by_thread{"pid/tid":{count, value_sum}},
//   stacks{"root;...;leaf": count}, timestamps_sorted_sha256, timestamps_out_of_window,
//   timestamps_count, timestamps_min, timestamps_rel_sha256 (of the sorted ts - min)}],
//   "problems":[...], "warnings":[...]}
//   events: per sample the sum of its values, or its number of timestamps when it has no
//   values (the same count goes to by_thread[].count and stacks[]); value_sum: sum of
//   values as a decimal string. pid comes from the sample's process.pid attribute, else
//   the profile's, else the resource's; tid from the sample's (else profile's) thread.id;
//   "?" when absent. A frame is the function name (else system name, else file name) of
//   each Line, the lines of a Location outermost first; a Location without lines is
//   "<mapping file basename>+0x<address>". An empty stack is the key "".
//   timestamps_sorted_sha256: sha256 hex of all timestamps of the profile, sorted
//   numerically, in decimal, joined by "\n".
// Exit: 0 no problems, 1 problems (or a decode failure), 2 usage/schema error.
// --self-test builds a valid request and broken variants in memory, prints ok/FAIL lines
// and a closing "N passed, N failed"; exit 0 when all pass.
import fs from 'node:fs'
import path from 'node:path'
import zlib from 'node:zlib'
import crypto from 'node:crypto'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'

const here = path.dirname(fileURLToPath(import.meta.url))
const repo = path.resolve(here, '../..')
const NS = 'opentelemetry.proto.'
const REQ = NS + 'collector.profiles.v1development.ExportProfilesServiceRequest'
const RESP = NS + 'collector.profiles.v1development.ExportProfilesServiceResponse'

function die(msg) { process.stderr.write(`otlp_decode: ${msg}\n`); process.exit(2) }

// protobufjs: from tests/browser/node_modules (pinned in its package.json), else from
// wherever node would find it for this file.
function loadProtobuf() {
	for (const base of [path.join(repo, 'tests/browser/package.json'), fileURLToPath(import.meta.url)]) {
		try {
			const req = createRequire(base)
			return { protobuf: req('protobufjs'), descriptor: req('protobufjs/ext/descriptor') }
		} catch { /* next */ }
	}
	die('protobufjs not found: run "npm ci" in tests/browser')
}
const { protobuf, descriptor } = loadProtobuf()

// ---------------------------------------------------------------- schema loading
function loadProtoDir(dir) {
	const upstream = path.join(dir, 'opentelemetry/proto/collector/profiles/v1development/profiles_service.proto')
	const flat = path.join(dir, 'otlp_profiles.proto')
	let files
	if (fs.existsSync(dir) && fs.statSync(dir).isFile()) { files = [dir]; dir = path.dirname(dir) }
	else if (fs.existsSync(upstream)) files = [upstream]
	else if (fs.existsSync(flat)) files = [flat] // imports bring the other otlp_*.proto
	else {
		let names
		try { names = fs.readdirSync(dir) } catch (e) { die(`--proto ${dir}: ${e.message}`) }
		files = names.filter((n) => n.endsWith('.proto')).sort().map((n) => path.join(dir, n))
		if (!files.length) die(`--proto ${dir}: no .proto files`)
	}
	const root = new protobuf.Root()
	// imports are relative to DIR (upstream layout) or to the importing file (flat copy)
	root.resolvePath = (origin, target) => {
		if (path.isAbsolute(target)) return target
		const inDir = path.join(dir, target)
		return fs.existsSync(inDir) ? inDir : path.resolve(path.dirname(origin), target)
	}
	try { root.loadSync(files, { keepCase: true }); root.resolveAll() } catch (e) { die(`--proto ${dir}: ${e.message}`) }
	return { root, name: `proto:${path.resolve(dir)} (${files.map((f) => path.relative(dir, f)).join(', ')})` }
}

// The body of a C string literal concatenation ("..." "...") as bytes.
function cStringBytes(src) {
	const out = []
	const esc = { n: 10, r: 13, t: 9, '"': 34, "'": 39, '\\': 92, '?': 63, a: 7, b: 8, f: 12, v: 11 }
	for (let i = 0; i < src.length;) {
		if (src[i] !== '"') { i++; continue }
		for (i++; src[i] !== '"'; ) {
			if (i >= src.length) throw new Error('unterminated string literal')
			if (src[i] !== '\\') { out.push(src.charCodeAt(i++)); continue }
			const n = src[i + 1]
			if (/[0-7]/.test(n)) {
				let j = i + 1, v = 0
				while (j < i + 4 && /[0-7]/.test(src[j])) v = v * 8 + Number(src[j++])
				out.push(v); i = j
			} else if (n === 'x') {
				let j = i + 2, v = 0
				while (/[0-9a-fA-F]/.test(src[j])) v = v * 16 + parseInt(src[j++], 16)
				out.push(v & 255); i = j
			} else if (n in esc) { out.push(esc[n]); i += 2 } else throw new Error(`unknown escape \\${n}`)
		}
		i++
	}
	return Buffer.from(out)
}

function loadOfficial(dir) {
	let base = dir
	for (const sub of ['usr/include', 'include', '.']) {
		if (fs.existsSync(path.join(dir, sub, 'opentelemetry/proto/profiles/v1development/profiles.pb.cc'))) { base = path.join(dir, sub); break }
	}
	const want = ['common/v1/common', 'resource/v1/resource', 'profiles/v1development/profiles',
		'collector/profiles/v1development/profiles_service']
	const files = []
	for (const w of want) {
		const f = path.join(base, 'opentelemetry/proto', w + '.pb.cc')
		let text
		try { text = fs.readFileSync(f, 'latin1') } catch (e) { die(`--official ${dir}: ${e.message}`) }
		const m = text.match(/const char descriptor_table_protodef_(\w+)\[\][^=]*=\s*\{?((?:\s*"(?:[^"\\\n]|\\.)*")+)\s*\}?\s*;/)
		if (!m) die(`--official: no serialized descriptor in ${f}`)
		const bytes = cStringBytes(m[2])
		const len = text.match(new RegExp(`(\\d+),\\s*descriptor_table_protodef_${m[1]}\\b`))
		if (len && Number(len[1]) !== bytes.length) die(`--official: ${f}: descriptor is ${bytes.length} bytes, the file says ${len[1]}`)
		files.push(descriptor.FileDescriptorProto.decode(bytes))
	}
	let root
	try { root = protobuf.Root.fromDescriptor({ file: files }); root.resolveAll() } catch (e) { die(`--official ${dir}: ${e.message}`) }
	// the package version, from the unpacked .deb's changelog when there
	let version = ''
	const cl = path.join(dir, 'usr/share/doc/libopentelemetry-proto-dev/changelog.Debian.gz')
	try { version = ' ' + zlib.gunzipSync(fs.readFileSync(cl)).toString('utf8').split('\n')[0].match(/\(([^)]+)\)/)[1] } catch { /* not an unpacked .deb */ }
	return { root, name: `official:libopentelemetry-proto-dev${version} (${path.resolve(base)}/opentelemetry/proto/{${want.join(',')}}.pb.cc)` }
}

// The v1.10+ shape: refuse older schemas (v1.9 had Sample.values = 2, v1.7 repeated sample_type).
function checkShape(root) {
	const expect = [
		['profiles.v1development.Sample', [['stack_index', 1, 'int32', 0], ['attribute_indices', 2, 'int32', 1], ['link_index', 3, 'int32', 0], ['values', 4, 'int64', 1], ['timestamps_unix_nano', 5, 'fixed64', 1]]],
		['profiles.v1development.Profile', [['sample_type', 1, 'ValueType', 0], ['samples', 2, 'Sample', 1], ['time_unix_nano', 3, 'fixed64', 0], ['duration_nano', 4, 'uint64', 0], ['period_type', 5, 'ValueType', 0], ['period', 6, 'int64', 0], ['attribute_indices', 11, 'int32', 1]]],
		['profiles.v1development.ProfilesDictionary', [['mapping_table', 1, 'Mapping', 1], ['location_table', 2, 'Location', 1], ['function_table', 3, 'Function', 1], ['link_table', 4, 'Link', 1], ['string_table', 5, 'string', 1], ['attribute_table', 6, 'KeyValueAndUnit', 1], ['stack_table', 7, 'Stack', 1]]],
		['common.v1.KeyValue', [['key', 1, 'string', 0], ['value', 2, 'AnyValue', 0], ['key_strindex', 3, 'int32', 0]]],
		['common.v1.AnyValue', [['string_value_strindex', 8, 'int32', 0]]],
		['collector.profiles.v1development.ExportProfilesServiceRequest', [['resource_profiles', 1, 'ResourceProfiles', 1], ['dictionary', 2, 'ProfilesDictionary', 0]]],
	]
	for (const [t, fields] of expect) {
		let type
		try { type = root.lookupType(NS + t) } catch { throw new Error(`schema lacks ${NS + t}`) }
		for (const [name, id, tn, rep] of fields) {
			const f = type.fields[name]
			const got = f && (f.resolvedType ? f.resolvedType.name : f.type)
			if (!f || f.id !== id || got !== tn || f.repeated !== !!rep) {
				throw new Error(`schema is not the v1.10+ profiles shape: ${t}.${name} should be ${rep ? 'repeated ' : ''}${tn} = ${id}` +
					(f ? `, is ${f.repeated ? 'repeated ' : ''}${got} = ${f.id}` : ', is missing'))
			}
		}
	}
}

// Field-by-field comparison of the messages reachable from the request and response.
function compareSchemas(a, b) {
	const diffs = []
	const seen = new Set()
	const sig = (f) => `${f.repeated ? 'repeated ' : ''}${f.resolvedType ? f.resolvedType.fullName.replace(/^\./, '') : f.type} = ${f.id}${f.partOf ? ` (oneof ${f.partOf.name})` : ''}`
	const walk = (name) => {
		if (seen.has(name)) return
		seen.add(name)
		let ta, tb
		try { ta = a.lookupType(name) } catch { diffs.push(`${name}: missing in the first schema`); return }
		try { tb = b.lookupType(name) } catch { diffs.push(`${name}: missing in the second schema`); return }
		const names = new Set([...Object.keys(ta.fields), ...Object.keys(tb.fields)])
		for (const n of [...names].sort()) {
			const fa = ta.fields[n], fb = tb.fields[n]
			if (!fa || !fb) { diffs.push(`${name}.${n}: only in the ${fa ? 'first' : 'second'} schema`); continue }
			if (sig(fa) !== sig(fb)) diffs.push(`${name}.${n}: ${sig(fa)} vs ${sig(fb)}`)
			if (fa.resolvedType && fa.resolvedType instanceof protobuf.Type) walk(fa.resolvedType.fullName.replace(/^\./, ''))
		}
		const rr = (t) => JSON.stringify(t.reserved || [])
		if (rr(ta) !== rr(tb)) diffs.push(`${name}: reserved ${rr(ta)} vs ${rr(tb)}`)
	}
	walk(REQ); walk(RESP)
	return { diffs, messages: seen.size }
}

// ---------------------------------------------------------------- checks and summary
class Problems {
	constructor() { this.list = []; this.more = new Map(); this.perKey = new Map() }
	add(key, msg) {
		const n = (this.perKey.get(key) || 0) + 1
		this.perKey.set(key, n)
		if (n <= 10) this.list.push(msg); else this.more.set(key, n - 10)
	}
	out() { return [...this.list, ...[...this.more].map(([k, n]) => `... and ${n} more of kind ${k}`)] }
}

const big = (v) => (typeof v === 'bigint' ? v : BigInt(v || 0))
const num = (v) => { const b = big(v); return b >= BigInt(Number.MIN_SAFE_INTEGER) && b <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(b) : b.toString() }
const isEmptyVal = (v) => v === undefined || v === null || v === 0 || v === 0n || v === '' || v === false ||
	(Array.isArray(v) && v.length === 0) || (v instanceof Uint8Array && v.length === 0)
// proto3 zero value: every field unset or default; fields named in emptySub may hold a
// message with nothing set (profcheck accepts attribute_table[0].value = AnyValue{}).
const isZeroMsg = (o, emptySub = []) => Object.entries(o).every(([k, v]) => isEmptyVal(v) ||
	(emptySub.includes(k) && v && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 0))
const hex = (b) => Buffer.from(b).toString('hex')

// Count unknown fields kept by the reader (schema mismatch hint).
function countUnknown(msg) {
	if (!msg || typeof msg !== 'object') return 0
	let n = Array.isArray(msg.$unknowns) ? msg.$unknowns.length : 0
	for (const v of Object.values(msg)) {
		if (Array.isArray(v)) { for (const x of v) if (x && typeof x === 'object' && x.$type) n += countUnknown(x) } else if (v && typeof v === 'object' && v.$type) n += countUnknown(v)
	}
	return n
}

function analyze(req) {
	const P = new Problems(), W = new Problems()
	const d = req.dictionary
	if (!d) P.add('dictionary', 'request has no dictionary')
	const dict = d || {}
	const T = {}
	for (const t of ['mapping_table', 'location_table', 'function_table', 'link_table', 'string_table', 'attribute_table', 'stack_table']) {
		T[t] = dict[t] || []
		if (d && T[t].length === 0) P.add('table.empty', `${t} is empty (index 0 must hold the zero value)`)
	}
	const S = T.string_table
	if (S.length && S[0] !== '') P.add('table.zero', `string_table[0] is ${JSON.stringify(S[0])}, must be ""`)
	for (const t of ['mapping_table', 'location_table', 'function_table', 'stack_table']) {
		if (T[t].length && !isZeroMsg(T[t][0])) P.add('table.zero', `${t}[0] is not the zero value: ${JSON.stringify(T[t][0], jsonBig)}`)
	}
	if (T.attribute_table.length && !isZeroMsg(T.attribute_table[0], ['value'])) P.add('table.zero', `attribute_table[0] is not the zero value: ${JSON.stringify(T.attribute_table[0], jsonBig)}`)
	if (T.link_table.length) {
		const l = T.link_table[0]
		const allZero = (b) => !b || b.every((x) => x === 0)
		if (!isZeroMsg(l)) {
			if (allZero(l.trace_id) && allZero(l.span_id)) W.add('link0', 'link_table[0] holds zero-filled ids; profcheck expects an empty Link{}')
			else P.add('table.zero', `link_table[0] is not the zero value: trace_id=${hex(l.trace_id || [])} span_id=${hex(l.span_id || [])}`)
		}
	}

	const inRange = (idx, table, what, where) => {
		const i = idx || 0
		if (i < 0 || i >= T[table].length) { P.add('index', `${where}: ${what} ${i} out of range [0, ${T[table].length})`); return false }
		return true
	}
	const str = (i) => (i >= 0 && i < S.length ? S[i] : `<bad strindex ${i}>`)
	const anyValue = (v, where) => {
		if (!v) return null
		if (v.string_value !== undefined) return v.string_value
		if (v.string_value_strindex !== undefined) { inRange(v.string_value_strindex, 'string_table', 'string_value_strindex', where); return str(v.string_value_strindex) }
		if (v.int_value !== undefined) return num(v.int_value)
		if (v.bool_value !== undefined) return v.bool_value
		if (v.double_value !== undefined) return v.double_value
		if (v.bytes_value !== undefined) return hex(v.bytes_value)
		if (v.array_value !== undefined) return (v.array_value.values || []).map((x) => anyValue(x, where))
		if (v.kvlist_value !== undefined) return kvs(v.kvlist_value.values || [], where)
		return null
	}
	const kvs = (list, where) => {
		const o = {}, seen = new Set()
		for (const kv of list) {
			let key = kv.key || ''
			if (kv.key_strindex) {
				inRange(kv.key_strindex, 'string_table', 'key_strindex', where)
				if (key) W.add('kv.both', `${where}: KeyValue sets both key ${JSON.stringify(key)} and key_strindex ${kv.key_strindex}`)
				else key = str(kv.key_strindex)
			}
			if (seen.has(key)) P.add('attr.dup', `${where}: duplicate attribute key ${JSON.stringify(key)}`)
			seen.add(key)
			o[key] = anyValue(kv.value, where)
		}
		return o
	}
	// attribute_indices list -> {key: value}, with range and key-uniqueness checks
	const attrs = (list, where) => {
		const o = {}, seen = new Set()
		for (const i of list || []) {
			if (!inRange(i, 'attribute_table', 'attribute index', where)) continue
			const a = T.attribute_table[i]
			const key = str(a.key_strindex || 0)
			if (seen.has(key)) P.add('attr.dup', `${where}: duplicate attribute key ${JSON.stringify(key)} in attribute_indices`)
			seen.add(key)
			o[key] = anyValue(a.value, `${where} attribute_table[${i}]`)
		}
		return o
	}

	// dictionary entries
	T.mapping_table.forEach((m, i) => {
		const w = `mapping_table[${i}]`
		inRange(m.filename_strindex, 'string_table', 'filename_strindex', w)
		attrs(m.attribute_indices, w)
		if (big(m.memory_start) > big(m.memory_limit)) W.add('mapping.range', `${w}: memory_start > memory_limit`)
	})
	T.location_table.forEach((l, i) => {
		const w = `location_table[${i}]`
		inRange(l.mapping_index, 'mapping_table', 'mapping_index', w)
		attrs(l.attribute_indices, w)
		;(l.lines || []).forEach((ln, j) => inRange(ln.function_index, 'function_table', 'function_index', `${w}.lines[${j}]`))
	})
	T.function_table.forEach((f, i) => {
		const w = `function_table[${i}]`
		for (const k of ['name_strindex', 'system_name_strindex', 'filename_strindex']) inRange(f[k], 'string_table', k, w)
		if (i > 0 && !f.name_strindex && !f.system_name_strindex && !f.filename_strindex) P.add('function.name', `${w}: Function has none of name/system_name/filename set`)
	})
	T.link_table.forEach((l, i) => {
		if (i === 0) return
		const t = l.trace_id || [], s = l.span_id || []
		if (t.length !== 16 || s.length !== 8) P.add('link.size', `link_table[${i}]: trace_id must be 16 bytes and span_id 8, got ${t.length} and ${s.length}`)
	})
	T.attribute_table.forEach((a, i) => {
		const w = `attribute_table[${i}]`
		inRange(a.key_strindex, 'string_table', 'key_strindex', w)
		inRange(a.unit_strindex, 'string_table', 'unit_strindex', w)
	})
	T.stack_table.forEach((s, i) => (s.location_indices || []).forEach((li) => inRange(li, 'location_table', 'location index', `stack_table[${i}]`)))

	// frames
	const base = (p) => p.split('/').pop()
	const locFrames = (li) => {
		const l = T.location_table[li]
		if (!l) return [`<bad location ${li}>`]
		const lines = l.lines || []
		if (!lines.length) {
			const m = T.mapping_table[l.mapping_index || 0]
			const file = m && m.filename_strindex ? base(str(m.filename_strindex)) : ''
			return [`${file}+0x${big(l.address).toString(16)}`]
		}
		return lines.slice().reverse().map((ln) => {
			const f = T.function_table[ln.function_index || 0]
			if (!f) return `<bad function ${ln.function_index}>`
			return str(f.name_strindex || 0) || str(f.system_name_strindex || 0) || str(f.filename_strindex || 0) || '?'
		})
	}
	const stackCache = new Map()
	const stackKey = (si) => {
		if (!stackCache.has(si)) {
			const s = T.stack_table[si]
			stackCache.set(si, s ? (s.location_indices || []).slice().reverse().flatMap(locFrames).join(';') : `<bad stack ${si}>`)
		}
		return stackCache.get(si)
	}

	const resources = []
	const profiles = []
	;(req.resource_profiles || []).forEach((rp, ri) => {
		const rw = `resource_profiles[${ri}]`
		const res = kvs((rp.resource && rp.resource.attributes) || [], `${rw}.resource`)
		resources.push(res)
		;(rp.scope_profiles || []).forEach((sp, si) => {
			const sw = `${rw}.scope_profiles[${si}]`
			if (sp.scope) kvs(sp.scope.attributes || [], `${sw}.scope`)
			;(sp.profiles || []).forEach((p, pi) => {
				const pw = `${sw}.profiles[${pi}]`
				const vt = (v, what) => {
					if (!v) return ''
					inRange(v.type_strindex, 'string_table', `${what}.type_strindex`, pw)
					inRange(v.unit_strindex, 'string_table', `${what}.unit_strindex`, pw)
					return `${str(v.type_strindex || 0)}/${str(v.unit_strindex || 0)}`
				}
				const pattrs = attrs(p.attribute_indices, pw)
				const start = big(p.time_unix_nano), dur = big(p.duration_nano), end = start + dur
				const hasFmt = !!p.original_payload_format, hasPay = !!(p.original_payload && p.original_payload.length)
				if (hasFmt !== hasPay) P.add('payload', `${pw}: original_payload_format and original_payload must be set together`)
				if (p.profile_id && p.profile_id.length && (p.profile_id.length !== 16 || p.profile_id.every((x) => x === 0))) P.add('profile_id', `${pw}: profile_id must be 16 bytes, not all zero (got ${hex(p.profile_id)})`)
				if ((p.samples || []).length && !p.sample_type) W.add('sample_type', `${pw}: has samples but no sample_type`)
				const out = {
					resource: ri, scope: (sp.scope && sp.scope.name) || '',
					sample_type: vt(p.sample_type, 'sample_type'), period_type: vt(p.period_type, 'period_type'),
					period: num(p.period), time_unix_nano: start.toString(), duration_nano: dur.toString(),
					samples: (p.samples || []).length, events: 0n, value_sum: 0n, by_thread: {}, stacks: {},
					timestamps_sorted_sha256: '', timestamps_out_of_window: 0,
				}
				const ts = []
				const shapes = new Set()
				;(p.samples || []).forEach((s, k) => {
					const w = `${pw}.samples[${k}]`
					const vals = s.values || [], tss = s.timestamps_unix_nano || []
					if (!vals.length && !tss.length) P.add('sample.empty', `${w}: neither values nor timestamps_unix_nano set`)
					if (vals.length && tss.length && vals.length !== tss.length) P.add('sample.len', `${w}: values and timestamps_unix_nano lengths differ (${vals.length} vs ${tss.length})`)
					shapes.add(vals.length && tss.length ? 'both' : vals.length ? 'values' : 'timestamps')
					const stackOk = inRange(s.stack_index, 'stack_table', 'stack_index', w)
					if (s.link_index) inRange(s.link_index, 'link_table', 'link_index', w)
					const sa = attrs(s.attribute_indices, w)
					let vsum = 0n
					for (const v of vals) vsum += big(v)
					const ev = vals.length ? vsum : BigInt(tss.length)
					out.events += ev
					out.value_sum += vsum
					for (const t of tss) {
						const tb = big(t)
						ts.push(tb)
						if (tb < start || tb >= end) out.timestamps_out_of_window++
					}
					const pid = sa['process.pid'] ?? pattrs['process.pid'] ?? res['process.pid'] ?? '?'
					const tid = sa['thread.id'] ?? pattrs['thread.id'] ?? '?'
					const th = (out.by_thread[`${pid}/${tid}`] ||= { count: 0n, value_sum: 0n })
					th.count += ev
					th.value_sum += vsum
					const key = stackOk ? stackKey(s.stack_index || 0) : `<bad stack ${s.stack_index}>`
					out.stacks[key] = (out.stacks[key] || 0n) + ev
				})
				if (out.timestamps_out_of_window) P.add('ts.window', `${pw}: ${out.timestamps_out_of_window} timestamps outside [time_unix_nano, time_unix_nano + duration_nano) = [${start}, ${end})`)
				if (shapes.size > 1) W.add('shape', `${pw}: samples mix shapes (${[...shapes].sort().join(', ')})`)
				ts.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
				out.timestamps_sorted_sha256 = crypto.createHash('sha256').update(ts.map(String).join('\n')).digest('hex')
				// the same after the first: what a recording's own times give, whatever its
				// wall clock (sha256 of the sorted ts - min, one per line)
				out.timestamps_count = ts.length
				out.timestamps_min = ts.length ? ts[0].toString() : null
				out.timestamps_rel_sha256 = crypto.createHash('sha256').update(ts.map((t) => String(t - ts[0])).join('\n')).digest('hex')
				out.events = num(out.events)
				out.value_sum = out.value_sum.toString()
				out.by_thread = Object.fromEntries(Object.keys(out.by_thread).sort().map((k) => [k, { count: num(out.by_thread[k].count), value_sum: out.by_thread[k].value_sum.toString() }]))
				out.stacks = Object.fromEntries(Object.keys(out.stacks).sort().map((k) => [k, num(out.stacks[k])]))
				profiles.push(out)
			})
		})
	})
	return { resources, profiles, problems: P.out(), warnings: W.out() }
}

function jsonBig(k, v) {
	if (typeof v === 'bigint') return num(v)
	if (v instanceof Uint8Array) return hex(v)
	if (v && v.type === 'Buffer' && Array.isArray(v.data)) return hex(v.data)
	return v
}

function decodeAndAnalyze(reqType, bytes) {
	if (bytes.length >= 2 && bytes[0] === 0x1f && bytes[1] === 0x8b) bytes = zlib.gunzipSync(bytes)
	let msg
	try {
		const r = protobuf.Reader.create(bytes)
		r.discardUnknown = false
		msg = reqType.decode(r)
	} catch (e) {
		return { resources: [], profiles: [], problems: [`decode failed: ${e.message}`], warnings: [] }
	}
	const obj = reqType.toObject(msg, { longs: BigInt, arrays: true, oneofs: false })
	const result = analyze(obj)
	const unknown = countUnknown(msg)
	if (unknown) result.warnings.push(`${unknown} unknown fields on the wire (not in the schema)`)
	return result
}

// ---------------------------------------------------------------- self-test
function selfTest(reqType) {
	const t0 = 1780000000000000000n
	const valid = () => ({
		resource_profiles: [{
			resource: { attributes: [{ key: 'service.name', value: { string_value: 'app' } }, { key: 'process.pid', value: { int_value: 100 } }] },
			scope_profiles: [{
				scope: { name: 'perfconv', version: '0' },
				profiles: [{
					sample_type: { type_strindex: 1, unit_strindex: 2 }, period_type: { type_strindex: 3, unit_strindex: 4 }, period: 10000000,
					time_unix_nano: t0.toString(), duration_nano: '1000000000',
					samples: [
						{ stack_index: 1, attribute_indices: [1, 2], timestamps_unix_nano: [(t0 + 5n).toString(), (t0 + 1n).toString(), (t0 + 3n).toString()] },
						{ stack_index: 2, attribute_indices: [1, 3, 4], timestamps_unix_nano: [(t0 + 2n).toString(), (t0 + 4n).toString()] },
					],
				}, {
					sample_type: { type_strindex: 3, unit_strindex: 4 }, period_type: { type_strindex: 3, unit_strindex: 4 }, period: 1,
					time_unix_nano: t0.toString(), duration_nano: '1000000000',
					samples: [{ stack_index: 1, attribute_indices: [2], values: [1000, 2000], timestamps_unix_nano: [(t0 + 10n).toString(), (t0 + 20n).toString()] }],
				}],
			}],
		}],
		dictionary: {
			mapping_table: [{}, { memory_start: 0x400000, memory_limit: 0x500000, filename_strindex: 5 }],
			location_table: [{}, { mapping_index: 1, address: 0x401000, lines: [{ function_index: 1, line: 10 }] },
				{ mapping_index: 1, address: 0x402000, lines: [{ function_index: 3, line: 30 }, { function_index: 2, line: 20 }] },
				{ mapping_index: 1, address: 0x403000 }],
			function_table: [{}, { name_strindex: 6, filename_strindex: 9 }, { name_strindex: 7 }, { system_name_strindex: 8 }],
			link_table: [{}],
			string_table: ['', 'samples', 'count', 'cpu', 'nanoseconds', '/usr/bin/app', 'main', 'foo', 'inlined_bar', 'app.c', 'process.pid', 'thread.id', 'thread.name', 'worker'],
			attribute_table: [{}, { key_strindex: 10, value: { int_value: 100 } }, { key_strindex: 11, value: { int_value: 101 } },
				{ key_strindex: 11, value: { int_value: 102 } }, { key_strindex: 12, value: { string_value: 'worker' } }],
			stack_table: [{}, { location_indices: [2, 1] }, { location_indices: [3, 2, 1] }],
		},
	})
	const run = (obj) => decodeAndAnalyze(reqType, reqType.encode(reqType.fromObject(obj)).finish())
	let passed = 0, failed = 0
	const check = (name, cond, detail) => {
		if (cond) { passed++; console.log(`ok   ${name}`) } else { failed++; console.log(`FAIL ${name}${detail ? ': ' + detail : ''}`) }
	}
	const sha = (list) => crypto.createHash('sha256').update(list.map(String).join('\n')).digest('hex')

	const r = run(valid())
	check('valid request: no problems', r.problems.length === 0, JSON.stringify(r.problems))
	check('valid request: no warnings', r.warnings.length === 0, JSON.stringify(r.warnings))
	const p0 = r.profiles[0] || {}, p1 = r.profiles[1] || {}
	check('valid request: resources', JSON.stringify(r.resources) === '[{"service.name":"app","process.pid":100}]', JSON.stringify(r.resources))
	check('valid request: profile 0 header', p0.sample_type === 'samples/count' && p0.period_type === 'cpu/nanoseconds' && p0.period === 10000000 &&
		p0.time_unix_nano === t0.toString() && p0.duration_nano === '1000000000' && p0.samples === 2 && p0.scope === 'perfconv', JSON.stringify(p0))
	check('valid request: profile 0 counts', p0.events === 5 && p0.value_sum === '0', `${p0.events} ${p0.value_sum}`)
	check('valid request: profile 0 threads', JSON.stringify(p0.by_thread) === '{"100/101":{"count":3,"value_sum":"0"},"100/102":{"count":2,"value_sum":"0"}}', JSON.stringify(p0.by_thread))
	check('valid request: profile 0 stacks (root first, inlined callee last, address frame)',
		JSON.stringify(p0.stacks) === '{"main;foo;inlined_bar":3,"main;foo;inlined_bar;app+0x403000":2}', JSON.stringify(p0.stacks))
	check('valid request: profile 0 timestamps', p0.timestamps_sorted_sha256 === sha([1n, 2n, 3n, 4n, 5n].map((d) => t0 + d)) && p0.timestamps_out_of_window === 0, p0.timestamps_sorted_sha256)
	check('valid request: profile 1 values', p1.events === 3000 && p1.value_sum === '3000' && p1.samples === 1 &&
		JSON.stringify(p1.by_thread) === '{"100/101":{"count":3000,"value_sum":"3000"}}' && JSON.stringify(p1.stacks) === '{"main;foo;inlined_bar":3000}', JSON.stringify(p1))

	const broken = [
		['string_table[0] not empty', (o) => { o.dictionary.string_table[0] = 'x' }, /string_table\[0\] is "x"/],
		['mapping_table[0] not zero', (o) => { o.dictionary.mapping_table[0] = { memory_start: 1 } }, /mapping_table\[0\] is not the zero value/],
		['attribute_table[0] not zero', (o) => { o.dictionary.attribute_table[0] = { key_strindex: 10 } }, /attribute_table\[0\] is not the zero value/],
		['link_table[0] not zero', (o) => { o.dictionary.link_table[0] = { trace_id: Buffer.alloc(16, 1), span_id: Buffer.alloc(8, 1) } }, /link_table\[0\] is not the zero value/],
		['location_table empty', (o) => { o.dictionary.location_table = []; o.dictionary.stack_table = [{}] ; for (const p of o.resource_profiles[0].scope_profiles[0].profiles) for (const s of p.samples) s.stack_index = 0 }, /location_table is empty/],
		['stack_index out of range', (o) => { o.resource_profiles[0].scope_profiles[0].profiles[0].samples[0].stack_index = 9 }, /stack_index 9 out of range \[0, 3\)/],
		['negative attribute index', (o) => { o.resource_profiles[0].scope_profiles[0].profiles[0].samples[0].attribute_indices = [-1] }, /attribute index -1 out of range/],
		['location index out of range', (o) => { o.dictionary.stack_table[2].location_indices = [7] }, /stack_table\[2\]: location index 7 out of range/],
		['function_index out of range', (o) => { o.dictionary.location_table[1].lines[0].function_index = 4 }, /location_table\[1\]\.lines\[0\]: function_index 4 out of range/],
		['mapping_index out of range', (o) => { o.dictionary.location_table[3].mapping_index = 2 }, /mapping_index 2 out of range/],
		['strindex out of range', (o) => { o.dictionary.function_table[2].name_strindex = 99 }, /function_table\[2\]: name_strindex 99 out of range/],
		['sample_type strindex out of range', (o) => { o.resource_profiles[0].scope_profiles[0].profiles[0].sample_type.unit_strindex = 14 }, /sample_type\.unit_strindex 14 out of range/],
		['link_index out of range', (o) => { o.resource_profiles[0].scope_profiles[0].profiles[0].samples[0].link_index = 1 }, /link_index 1 out of range/],
		['values/timestamps lengths differ', (o) => { o.resource_profiles[0].scope_profiles[0].profiles[1].samples[0].values = [1, 2, 3] }, /lengths differ \(3 vs 2\)/],
		['sample with neither values nor timestamps', (o) => { o.resource_profiles[0].scope_profiles[0].profiles[0].samples[1].timestamps_unix_nano = [] }, /neither values nor timestamps/],
		['timestamp before the window', (o) => { o.resource_profiles[0].scope_profiles[0].profiles[0].samples[0].timestamps_unix_nano.push((t0 - 1n).toString()) }, /1 timestamps outside/],
		['timestamp at the window end', (o) => { o.resource_profiles[0].scope_profiles[0].profiles[0].samples[0].timestamps_unix_nano.push((t0 + 1000000000n).toString()) }, /1 timestamps outside/],
		['duplicate attribute key in a sample', (o) => { o.resource_profiles[0].scope_profiles[0].profiles[0].samples[1].attribute_indices = [1, 2, 3] }, /duplicate attribute key "thread\.id"/],
		['duplicate resource attribute key', (o) => { o.resource_profiles[0].resource.attributes.push({ key: 'service.name', value: { string_value: 'b' } }) }, /resource: duplicate attribute key "service\.name"/],
		['function without any name', (o) => { o.dictionary.function_table.push({ start_line: 3 }) }, /function_table\[4\]: Function has none of/],
		['link with short ids', (o) => { o.dictionary.link_table.push({ trace_id: Buffer.alloc(8, 1), span_id: Buffer.alloc(8, 1) }) }, /link_table\[1\]: trace_id must be 16 bytes/],
		['original_payload_format alone', (o) => { o.resource_profiles[0].scope_profiles[0].profiles[0].original_payload_format = 'linux_perf' }, /must be set together/],
		['no dictionary', (o) => { delete o.dictionary }, /request has no dictionary/],
	]
	for (const [name, mutate, re] of broken) {
		const o = valid()
		mutate(o)
		const b = run(o)
		check(`broken: ${name}`, b.problems.some((p) => re.test(p)), JSON.stringify(b.problems))
	}
	const trunc = reqType.encode(reqType.fromObject(valid())).finish().slice(0, 40)
	const tr = decodeAndAnalyze(reqType, trunc)
	check('broken: truncated file', tr.problems.some((p) => /^decode failed/.test(p)), JSON.stringify(tr.problems))
	const gz = decodeAndAnalyze(reqType, zlib.gzipSync(reqType.encode(reqType.fromObject(valid())).finish()))
	check('gzip input', gz.problems.length === 0 && JSON.stringify(gz.profiles) === JSON.stringify(r.profiles))
	const z = valid()
	z.dictionary.link_table[0] = { trace_id: Buffer.alloc(16), span_id: Buffer.alloc(8) }
	const zr = run(z)
	check('zero-filled link_table[0]: warning, no problem', zr.problems.length === 0 && zr.warnings.some((w) => /profcheck/.test(w)), JSON.stringify(zr))
	console.log(`${passed} passed, ${failed} failed`)
	return failed === 0
}

// ---------------------------------------------------------------- main
function main(argv) {
	let schema = null, compare = null, file = null, self = false
	for (let i = 0; i < argv.length; i++) {
		const a = argv[i]
		const val = () => { if (i + 1 >= argv.length) die(`${a} needs an argument`); return argv[++i] }
		if (a === '--proto') schema = { kind: 'proto', dir: val() }
		else if (a === '--official') schema = { kind: 'official', dir: val() }
		else if (a === '--compare-proto') compare = val()
		else if (a === '--self-test') self = true
		else if (a === '-h' || a === '--help') { process.stdout.write(fs.readFileSync(fileURLToPath(import.meta.url), 'utf8').split('\nimport ')[0].replace(/^\/\/ ?/gm, '') + '\n'); process.exit(0) }
		else if (a.startsWith('--')) die(`unknown option ${a}`)
		else if (file === null) file = a
		else die('one FILE only')
	}
	if (!self && file === null && !compare) die('usage: otlp_decode.mjs [--proto DIR | --official DIR] [--compare-proto DIR] FILE|- | --self-test')
	schema ||= { kind: 'proto', dir: path.join(repo, 'formats/proto') }
	const loaded = schema.kind === 'official' ? loadOfficial(schema.dir) : loadProtoDir(schema.dir)
	try { checkShape(loaded.root) } catch (e) { die(`${loaded.name}: ${e.message}`) }
	const reqType = loaded.root.lookupType(REQ)

	if (self) process.exit(selfTest(reqType) ? 0 : 1)

	let cmp = null
	if (compare) {
		const other = loadProtoDir(compare)
		const { diffs, messages } = compareSchemas(loaded.root, other.root)
		cmp = { against: other.name, messages_compared: messages, differences: diffs }
	}
	let result = { resources: [], profiles: [], problems: [], warnings: [] }
	if (file !== null) {
		let bytes
		try { bytes = file === '-' ? fs.readFileSync(0) : fs.readFileSync(file) } catch (e) { die(e.message) }
		result = decodeAndAnalyze(reqType, bytes)
	}
	const out = { schema: loaded.name, ...(cmp ? { schema_comparison: cmp } : {}), ...result }
	if (cmp) out.problems = [...out.problems, ...cmp.differences.map((d) => `schema difference: ${d}`)]
	fs.writeSync(1, JSON.stringify(out, jsonBig, 2) + "\n") // whole before exit, to a pipe too
	process.exit(out.problems.length ? 1 : 0)
}

// as a module (tests/receivers/receiver.mjs): the request's decoding and checks
export function otlpChecker (protoDir = path.join(repo, 'formats/proto')) {
	const loaded = loadProtoDir(protoDir)
	checkShape(loaded.root)
	const reqType = loaded.root.lookupType(REQ)
	const respType = loaded.root.lookupType(RESP)
	return {
		analyze: (bytes) => decodeAndAnalyze(reqType, bytes),
		response: (obj) => Buffer.from(respType.encode(respType.fromObject(obj)).finish()),
		status: (obj) => {
			const t = new protobuf.Root().loadSync(path.join(repo, 'formats/proto/rpc_status.proto'), { keepCase: true }).lookupType('google.rpc.Status')
			return Buffer.from(t.encode(t.fromObject(obj)).finish())
		},
		toJSON: (v) => JSON.parse(JSON.stringify(v, jsonBig)),
	}
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) main(process.argv.slice(2))
