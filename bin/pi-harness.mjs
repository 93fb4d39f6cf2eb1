#!/usr/bin/env node
// The terminal client of pi-harness; see client/cli.mjs and `pi-harness --help`.
import { main } from "../client/cli.mjs";

process.exitCode = await main(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, env: process.env });
