// rec.js: a recursive script for `node --perf-prof --perf-prof-unwinding-info
// --interpreted-frames-native-stack` recordings. Usage: node rec.js [MILLISECONDS]
'use strict';
function leaf(x) {
  let s = 0;
  for (let i = 0; i < 200; i++) s = (s + x * i) % 1000003;
  return s;
}
function walk(depth, x) {
  if (depth === 0) return leaf(x);
  return walk(depth - 1, x + depth) + 1;
}
function outer(ms) {
  const end = Date.now() + ms;
  let acc = 0, n = 0;
  while (Date.now() < end) { acc = (acc + walk(10, n++)) % 1000003; }
  return acc;
}
console.log(outer(Number(process.argv[2] || 1000)));
