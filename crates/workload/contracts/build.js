#!/usr/bin/env node
// Compiles every *.sol in this folder with the pinned solc-js (see package.json) and
// writes, for every contract that has bytecode (interfaces are skipped):
//   out/<Name>.bin          creation bytecode, hex, no 0x prefix, newline-terminated
//   out/<Name>.bin-runtime  deployed (runtime) bytecode, same format
//   out/<Name>.abi.json     ABI
// plus
//   out/selectors.txt       "<Contract>\t<signature>\t<selector>" per public function
//   out/build-info.json     compiler version and settings used
//
// Usage: node build.js            compile and (re)write out/
//        node build.js --check    compile and fail if out/ differs (CI drift check)
'use strict';

const fs = require('fs');
const path = require('path');
const solc = require('solc');

const ROOT = __dirname;
const OUT = path.join(ROOT, 'out');
const CHECK = process.argv.includes('--check');

const SETTINGS = {
  optimizer: { enabled: true, runs: 200 },
  evmVersion: 'cancun',
  outputSelection: {
    '*': {
      '*': ['abi', 'evm.bytecode.object', 'evm.deployedBytecode.object', 'evm.methodIdentifiers'],
    },
  },
};

function main() {
  const files = fs.readdirSync(ROOT).filter((f) => f.endsWith('.sol')).sort();
  if (files.length === 0) throw new Error('no .sol files found in ' + ROOT);

  const sources = {};
  for (const f of files) sources[f] = { content: fs.readFileSync(path.join(ROOT, f), 'utf8') };

  const input = { language: 'Solidity', sources, settings: SETTINGS };
  const output = JSON.parse(solc.compile(JSON.stringify(input)));

  let fatal = false;
  for (const e of output.errors || []) {
    process.stderr.write((e.formattedMessage || e.message) + '\n');
    if (e.severity === 'error') fatal = true;
  }
  if (fatal) throw new Error('compilation failed');

  const artifacts = new Map(); // file name (relative to out/) -> content
  const selectorLines = [];
  const contractNames = [];

  for (const file of files) {
    const contracts = (output.contracts && output.contracts[file]) || {};
    for (const name of Object.keys(contracts).sort()) {
      const c = contracts[name];
      const bin = c.evm.bytecode.object;
      const runtime = c.evm.deployedBytecode.object;
      if (!bin) continue; // interface / abstract contract
      if (contractNames.includes(name)) throw new Error('duplicate contract name ' + name);
      for (const [what, hex] of [['bin', bin], ['bin-runtime', runtime]]) {
        if (!/^([0-9a-f]{2})+$/.test(hex)) throw new Error(`${name}.${what} is not non-empty hex`);
        if (hex.includes('__$')) throw new Error(`${name}.${what} has unlinked library references`);
      }
      contractNames.push(name);
      artifacts.set(`${name}.bin`, bin + '\n');
      artifacts.set(`${name}.bin-runtime`, runtime + '\n');
      artifacts.set(`${name}.abi.json`, JSON.stringify(c.abi, null, 2) + '\n');
      const ids = c.evm.methodIdentifiers;
      for (const sig of Object.keys(ids).sort()) selectorLines.push(`${name}\t${sig}\t${ids[sig]}`);
    }
  }

  artifacts.set('selectors.txt', selectorLines.join('\n') + '\n');
  artifacts.set(
    'build-info.json',
    JSON.stringify(
      {
        compiler: 'solc-js ' + solc.version(),
        settings: { optimizer: SETTINGS.optimizer, evmVersion: SETTINGS.evmVersion },
        sources: files,
        contracts: contractNames,
      },
      null,
      2,
    ) + '\n',
  );

  if (CHECK) {
    const stale = [];
    for (const [f, content] of artifacts) {
      const p = path.join(OUT, f);
      if (!fs.existsSync(p) || fs.readFileSync(p, 'utf8') !== content) stale.push(f);
    }
    const existing = fs.existsSync(OUT) ? fs.readdirSync(OUT) : [];
    for (const f of existing) if (!artifacts.has(f)) stale.push(f + ' (not produced by build)');
    if (stale.length) {
      process.stderr.write('out/ is stale; run `node build.js`. Differences:\n  ' + stale.join('\n  ') + '\n');
      process.exit(1);
    }
    console.log(`out/ is up to date (${contractNames.length} contracts, solc ${solc.version()})`);
    return;
  }

  fs.rmSync(OUT, { recursive: true, force: true });
  fs.mkdirSync(OUT, { recursive: true });
  for (const [f, content] of artifacts) fs.writeFileSync(path.join(OUT, f), content);
  console.log(`wrote ${artifacts.size} files to out/ for ${contractNames.join(', ')} (solc ${solc.version()})`);
}

try {
  main();
} catch (e) {
  process.stderr.write('build.js: ' + e.message + '\n');
  process.exit(1);
}
