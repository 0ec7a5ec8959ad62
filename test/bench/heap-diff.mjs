#!/usr/bin/env node
/**
 * `node test/bench/heap-diff.mjs A.heapsnapshot B.heapsnapshot [C…]`: what grew in the JS heap
 * between snapshots (the soak's BENCH_SOAK_HEAP_AT). Prints each snapshot's total self size, then
 * the 15 largest growths by constructor / node kind between the last two and between the first
 * and the last. Reads V8's .heapsnapshot format (snapshot.meta.node_fields, nodes, strings).
 */
import { readFileSync } from 'node:fs';

const NAMED = new Set(['object', 'closure', 'native', 'hidden', 'code', 'synthetic']);

function load(path) {
  const d = JSON.parse(readFileSync(path, 'utf8'));
  const fields = d.snapshot.meta.node_fields;
  const types = d.snapshot.meta.node_types[0];
  const [ti, ni, si, n] = [fields.indexOf('type'), fields.indexOf('name'), fields.indexOf('self_size'), fields.length];
  const agg = new Map();
  let total = 0;
  for (let i = 0; i < d.nodes.length; i += n) {
    const type = types[d.nodes[i + ti]];
    const raw = d.strings[d.nodes[i + ni]];
    const name = NAMED.has(type) && raw !== '' ? (type === 'closure' ? `closure ${raw}` : raw) : `(${type})`;
    const entry = agg.get(name) ?? [0, 0];
    entry[0] += 1;
    entry[1] += d.nodes[i + si];
    agg.set(name, entry);
    total += d.nodes[i + si];
  }
  return { path, agg, total };
}

const snaps = process.argv.slice(2).map(load);
if (snaps.length < 2) {
  console.error('usage: heap-diff.mjs A.heapsnapshot B.heapsnapshot [C…]');
  process.exit(2);
}
for (const s of snaps) console.log(`${s.path}: self size ${(s.total / 1_048_576).toFixed(2)} MB`);
for (const [label, a, b] of [
  ['second-last → last', snaps.at(-2), snaps.at(-1)],
  ['first → last', snaps[0], snaps.at(-1)],
]) {
  console.log(`== ${label}`);
  const keys = new Set([...a.agg.keys(), ...b.agg.keys()]);
  const diffs = [...keys].map((k) => {
    const [c0, s0] = a.agg.get(k) ?? [0, 0];
    const [c1, s1] = b.agg.get(k) ?? [0, 0];
    return { k, ds: s1 - s0, dc: c1 - c0 };
  });
  diffs.sort((x, y) => y.ds - x.ds);
  for (const d of diffs.slice(0, 15))
    console.log(`  ${(d.ds / 1024).toFixed(1).padStart(9)} KB ${String(d.dc).padStart(7)}  ${d.k.slice(0, 90)}`);
}
