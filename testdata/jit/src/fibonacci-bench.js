'use strict';
// A recursive fibonacci: the hot JavaScript function of the recording.
function fibonacci(n) {
  if (n < 2) {
    return n;
  }
  return fibonacci(n - 1) + fibonacci(n - 2);
}

// Runs for argv[2] seconds of CPU time, not of the clock: a busy machine gives it a
// share of the clock only, and its recording would hold that many fewer samples.
let total = 0;
const budget = 1e6 * Number(process.argv[2] || 1);
const start = process.cpuUsage();
for (let used = process.cpuUsage(start); used.user + used.system < budget;
     used = process.cpuUsage(start)) {
  total += fibonacci(25);
}
console.log('total', total);
