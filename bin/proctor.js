#!/usr/bin/env node
// The `proctor` entry point. The TypeScript sources compile to dist/ and bundle to dist/bundle/
// on `npm ci` (prepare; scripts/bundle.ts says why the bin runs a bundle).
import { main } from '../dist/bundle/main.js';

// A stray rejection (a library's late socket error, say) is a bug to report, not a reason to
// kill a worker holding other jobs: say it on stderr and keep going.
process.on('unhandledRejection', (reason) => {
  process.stderr.write(
    `proctor: internal error (unhandled rejection): ${String(reason?.stack ?? reason)}\n`,
  );
});

// A reader that stops early (`proctor status | head`) closes the pipe: that is the end of the
// output, not an error to show with a stack trace.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error) => {
    if (error?.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw error;
  });
}

process.exitCode = await main(process.argv.slice(2));
