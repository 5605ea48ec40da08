// soak_service: a node service whose jitdump grows steadily while its live code stays
// bounded, for bench/soak.sh.
//
//   node --perf-prof --interpreted-frames-native-stack bench/soak_service.js
//
// It serves made-up requests: serve() -> route() -> one of POOL handlers, JavaScript
// functions made by `new Function` from a body of their own (handler_N, named
// handlers/hN.js by a sourceURL comment) and called until V8's tiers have compiled
// them (Ignition's trampoline copy, Sparkplug, TurboFan: each a code load, with its
// bytes and lines, in ./jit-PID.dump). Handlers are replaced, oldest first, as often
// as keeps the dump growing by SOAK_RATE MB (2^20 bytes) a minute; a replaced handler
// is dropped, so V8 frees its code and puts later code at its addresses, and the live
// code stays what POOL handlers and the service need.
//
// SOAK_RATE    MB of jitdump a minute (default 10)
// SOAK_BUSY    the share of a core it works, in 100 ms ticks (default 0.5)
// SOAK_STATUS  a file it adds a line to every 10 s: seconds, handlers made, dump
//              bytes, RSS bytes, V8's code space in use (bytes)
// SOAK_PIDFILE a file it writes its pid to
'use strict'
const fs = require('fs')
const v8 = require('v8')

const RATE = Number(process.env.SOAK_RATE ?? 10) * 1048576 / 60 // bytes a second
const BUSY = Math.min(1, Math.max(0.05, Number(process.env.SOAK_BUSY ?? 0.5)))
const POOL = 32
const TICK_MS = 100
const DUMP = `jit-${process.pid}.dump`

let made = 0
let sink = 0
const pool = []

function dumpSize () {
  try { return fs.statSync(DUMP).size } catch { return 0 }
}

// A handler of a shape picked by n, with constants of its own: no two bodies alike.
function makeHandler (n) {
  const k = (Math.imul(n, 2654435761) >>> 0) % 65521
  const shapes = [
    `let a = ${k}, b = ${n}; for (let j = 0; j < x; j++) { a = (a * 31 + j ^ b) | 0; b = (b + (a >>> ${1 + n % 7})) | 0 } return a ^ b`,
    `let s = ${k}; for (let j = 0; j < x; j++) s = (s + ((j * ${k | 1}) ^ (s >>> ${1 + n % 5}))) | 0; return s`,
    `const t = [${k % 97}, ${n % 89}, ${k % 83}]; let s = 0; for (let j = 0; j < x; j++) s = (s * 33 + t[j % 3] + j) | 0; return s`,
    `let f = ${k / 65521}; for (let j = 0; j < x; j++) f = f * 0.999 + Math.sqrt(j + ${n % 13}); return f | 0`,
  ]
  const src = `return function handler_${n} (x) { ${shapes[n % shapes.length]} }\n//# sourceURL=handlers/h${n}.js`
  return new Function(src)() // eslint-disable-line no-new-func
}

// Made hot enough for TurboFan (a loop of 100 called 300 times optimizes it here).
function warm (h) {
  for (let i = 0; i < 300; i++) sink ^= h(100)
}

function route (req) {
  return pool[req % pool.length](40 + (req & 31))
}

function serve (req) {
  const key = 'req-' + req
  let h = 0
  for (let i = 0; i < key.length; i++) h = (h * 31 + key.charCodeAt(i)) | 0
  return route(req) ^ h
}

const t0 = Date.now()
const base = dumpSize()
let perHandler = 4096 // dump bytes a handler adds, learnt as it goes
let req = 0
let lastStatus = 0

function replaceSome () {
  const size = dumpSize()
  if (made > 50 && size > base) perHandler = (size - base) / made
  const want = base + RATE * (Date.now() - t0) / 1000
  const n = Math.min(200, Math.max(0, Math.ceil((want - size) / perHandler)))
  for (let i = 0; i < n; i++) {
    const h = makeHandler(made++)
    warm(h)
    if (pool.length < POOL) pool.push(h)
    else pool[made % POOL] = h
  }
}

function status () {
  const code = v8.getHeapSpaceStatistics().find(s => s.space_name === 'code_space')
  const line = [((Date.now() - t0) / 1000).toFixed(1), made, dumpSize(), process.memoryUsage.rss(),
    code ? code.space_used_size : 0].join(' ')
  fs.appendFileSync(process.env.SOAK_STATUS, line + '\n')
}

function tick () {
  const start = Date.now()
  replaceSome()
  while (Date.now() - start < TICK_MS * BUSY) {
    for (let i = 0; i < 64; i++) sink ^= serve(req++)
  }
  if (process.env.SOAK_STATUS && start - lastStatus >= 10000) {
    lastStatus = start
    status()
  }
  setTimeout(tick, Math.max(0, TICK_MS - (Date.now() - start)))
}

for (let i = 0; i < POOL; i++) {
  const h = makeHandler(made++)
  warm(h)
  pool.push(h)
}
if (process.env.SOAK_PIDFILE) fs.writeFileSync(process.env.SOAK_PIDFILE, `${process.pid}\n`)
process.on('SIGTERM', () => process.exit(0))
process.on('SIGINT', () => process.exit(0))
tick()
