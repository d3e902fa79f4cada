// Preloaded into the host by `qqbot-bench.ts --cpu-prof <dir>` (NODE_OPTIONS=--require): records a V8 CPU
// profile from start to exit and writes it to HOST_BENCH_CPU_PROFILE_DIR (node refuses --cpu-prof in NODE_OPTIONS).
'use strict';
const { Session } = require('node:inspector');
const { writeFileSync } = require('node:fs');
const { join } = require('node:path');

const dir = process.env.HOST_BENCH_CPU_PROFILE_DIR;
if (dir) {
  const session = new Session();
  session.connect();
  session.post('Profiler.enable');
  session.post('Profiler.setSamplingInterval', { interval: 200 });
  session.post('Profiler.start');
  process.once('exit', () => {
    // A same-thread inspector session answers synchronously, so this runs to the end inside 'exit'.
    session.post('Profiler.stop', (err, result) => {
      if (!err) writeFileSync(join(dir, `host-${process.pid}.cpuprofile`), JSON.stringify(result.profile));
    });
  });
}
