#!/usr/bin/env node
// Entry point of the `claude` runtime kind: one agent as a Claude Agent SDK session (src/runtime/claude).
require('tsx/cjs');
require('../src/runtime/claude/main.ts');
