'use strict';
// Runs a hand-assembled WebAssembly module whose recursive fib is the hot function.
function section(id, bytes) {
  return [id, bytes.length, ...bytes]; // every section here is under 128 bytes
}
function str(s) {
  return [s.length, ...Buffer.from(s)];
}
const body = [
  0x00, // no locals
  0x20, 0x00, 0x41, 0x02, 0x48, // n < 2
  0x04, 0x7f, 0x20, 0x00, // if (result i32) n
  0x05, // else fib(n - 1) + fib(n - 2)
  0x20, 0x00, 0x41, 0x01, 0x6b, 0x10, 0x00,
  0x20, 0x00, 0x41, 0x02, 0x6b, 0x10, 0x00, 0x6a,
  0x0b, 0x0b,
];
const bytes = Uint8Array.from([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
  ...section(1, [0x01, 0x60, 0x01, 0x7f, 0x01, 0x7f]), // (i32) -> i32
  ...section(3, [0x01, 0x00]),
  ...section(7, [0x01, ...str('wasm_fib'), 0x00, 0x00]),
  ...section(10, [0x01, body.length, ...body]),
  ...section(0, [...str('name'), 0x01, 0x0b, 0x01, 0x00, ...str('wasm_fib')]),
]);
const { wasm_fib } = new WebAssembly.Instance(new WebAssembly.Module(bytes)).exports;
let total = 0;
const until = Date.now() + 1000 * Number(process.argv[2] || 1);
while (Date.now() < until) {
  total += wasm_fib(25);
}
console.log('total', total);
