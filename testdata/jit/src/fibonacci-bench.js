'use strict';
// A recursive fibonacci: the hot JavaScript function of the recording.
function fibonacci(n) {
  if (n < 2) {
    return n;
  }
  return fibonacci(n - 1) + fibonacci(n - 2);
}

let total = 0;
const until = Date.now() + 1000 * Number(process.argv[2] || 1);
while (Date.now() < until) {
  total += fibonacci(25);
}
console.log('total', total);
