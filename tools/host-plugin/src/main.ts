import { run } from './cli';
import { processIO } from './io';

run(process.argv.slice(2), processIO()).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`host-plugin failed unexpectedly: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = 1;
  },
);
