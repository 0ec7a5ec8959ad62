/**
 * Preloaded into the soak's service (`NODE_OPTIONS=--require …/memory-probe.cjs`) with
 * `BENCH_MEMORY_PROBE_DIR` set: once a second it writes what the process knows of its own memory
 * to `<dir>/memory-<pid>.json`, so the bench can split RSS into the JS heap, external memory,
 * array buffers and what lies outside V8's heap, plus the JS heap in use just after the latest
 * full (mark-compact) collection, which is what a leak raises: between two such collections the
 * heap also holds garbage. Sizes are bytes (`process.memoryUsage()` and
 * `v8.getHeapSpaceStatistics()`). Written to a temporary file and renamed, so a reader never sees
 * half a file. Inert in every other process that inherits NODE_OPTIONS (the fake codex runs,
 * git): it acts only in `baton.js start`.
 */
'use strict';
const { renameSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');
const { constants, PerformanceObserver } = require('node:perf_hooks');
const v8 = require('node:v8');

const dir = process.env.BENCH_MEMORY_PROBE_DIR;
const isService = (process.argv[1] ?? '').endsWith('baton.js') && process.argv.includes('start');
if (dir && isService) {
  const file = join(dir, `memory-${process.pid}.json`);
  /** The JS heap in use as the latest full collection's entry was delivered (a few ms after it). */
  let afterMajorGc;
  let majorGcs = 0;
  new PerformanceObserver((list) => {
    if (!list.getEntries().some((e) => e.detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR)) return;
    majorGcs += 1;
    afterMajorGc = { atMs: Date.now(), heapUsed: process.memoryUsage().heapUsed, count: majorGcs };
  }).observe({ entryTypes: ['gc'] });
  const write = () => {
    const usage = process.memoryUsage();
    const spaces = {};
    for (const s of v8.getHeapSpaceStatistics()) spaces[s.space_name] = { size: s.space_size, used: s.space_used_size };
    writeFileSync(`${file}.tmp`, JSON.stringify({ atMs: Date.now(), ...usage, spaces, afterMajorGc }));
    renameSync(`${file}.tmp`, file);
  };
  // Unref'd: the probe must never keep the service alive or change when it exits.
  setInterval(write, 1_000).unref();
}
