#!/usr/bin/env node
// Entry point for the `command` runtime: runs the TypeScript reference runtime from any working directory.
require('tsx/cjs');
require('../src/runtime/reference.ts');
