#!/usr/bin/env node
// The `proctor` entry point. The TypeScript sources compile to dist/ on `npm ci` (prepare).
import { main } from '../dist/cli/main.js';

process.exitCode = await main(process.argv.slice(2));
