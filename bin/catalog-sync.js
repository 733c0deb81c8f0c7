#!/usr/bin/env node
// The compiled CLI (npm ci builds it through the prepare script).
import { main } from '../dist/lambda/cli.js';

process.exit(await main(process.argv));
