#!/usr/bin/env node
/**
 * Regenerates pi's expected outputs in tests/fixtures/oracle/ from the sessions in tests/fixtures/,
 * one run per line of tests/fixtures/oracle/runs.json, with the pinned pi of this folder.
 *
 *   cd tools/pi-oracle && npm ci && node regenerate.mjs [--modules DIR] [--out DIR]
 *
 * --out DIR writes the outputs there instead (to compare them with the committed ones).
 * Each run: {"expected": FILE, "session": FILE, "args": [...], "refs": [FROM, TO]?, "migrated": FILE?}
 * (expected and migrated relative to oracle/, session relative to tests/fixtures/).
 */
import fs from "node:fs";
import path from "node:path";

import { HERE, UsageError, parseArgs, runOnce } from "./pi.mjs";

const FIXTURES = path.resolve(HERE, "..", "..", "tests", "fixtures");

function options(argv) {
	const o = { modules: undefined, out: path.join(FIXTURES, "oracle") };
	for (let i = 0; i < argv.length; i += 2) {
		if (argv[i] === "--modules" && i + 1 < argv.length) o.modules = path.resolve(argv[i + 1]);
		else if (argv[i] === "--out" && i + 1 < argv.length) o.out = path.resolve(argv[i + 1]);
		else throw new UsageError(`usage: node regenerate.mjs [--modules DIR] [--out DIR] (not ${argv[i]})`);
	}
	return o;
}

async function main(argv) {
	const o = options(argv);
	const runs = JSON.parse(fs.readFileSync(path.join(FIXTURES, "oracle", "runs.json"), "utf8"));
	process.chdir(FIXTURES); // sessions are named relative to tests/fixtures in the outputs' meta
	for (const run of runs) {
		const target = path.join(o.out, run.expected);
		fs.mkdirSync(path.dirname(target), { recursive: true });
		const args = [...run.args, run.session, ...(run.refs ?? [])];
		if (run.migrated) args.push("--dump-migrated", path.join(o.out, run.migrated));
		const parsed = parseArgs(args);
		parsed.modules = o.modules;
		fs.writeFileSync(target, await runOnce(parsed));
		process.stdout.write(`wrote ${target}${run.migrated ? ` and ${run.migrated}` : ""}\n`);
	}
}

try {
	await main(process.argv.slice(2));
} catch (err) {
	process.stderr.write(`regenerate: ${err instanceof UsageError ? err.message : (err?.stack ?? err)}\n`);
	process.exitCode = 1;
}
