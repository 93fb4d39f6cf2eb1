#!/usr/bin/env node
// The terminal client of pi-harness; see client/cli.mjs and `pi-harness --help`.
import { main } from "../client/cli.mjs";

// A closed pipe (`pi-harness show s_x | head`) is a normal way to stop reading, not an error.
for (const stream of [process.stdout, process.stderr])
  stream.on("error", (err) => {
    if (/** @type {NodeJS.ErrnoException} */ (err).code === "EPIPE") process.exit(0);
    throw err;
  });
process.exitCode = await main(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, env: process.env });
