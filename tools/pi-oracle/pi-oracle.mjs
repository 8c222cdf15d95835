#!/usr/bin/env node
/**
 * Context Inspector's pi oracle: runs pi's published code (@mariozechner/pi-coding-agent, the
 * versions pinned in package.json and package-lock.json beside this file) on a session file and
 * prints, as JSON, what pi computes for it. No LLM is called. See README.md beside this file.
 *
 *   node pi-oracle.mjs [options] SESSION.jsonl                   main mode
 *   node pi-oracle.mjs --branch [options] SESSION.jsonl FROM TO  /tree navigation from FROM to TO
 *   node pi-oracle.mjs --batch JOBS.json                         many runs in one Node process
 *
 * FROM, TO and --leaf take an entry id, "@N" (entry index: file order, header excluded) or "leaf".
 *
 * Options:
 *   --pi VERSION           which pinned pi runs (default: the @mariozechner/pi-coding-agent dependency)
 *   --modules DIR          node_modules holding the pinned packages (default: $PI_ORACLE_MODULES,
 *                          else node_modules beside this file)
 *   --deterministic-ids    pi's own v1 migration runs, but the ids it draws are 00000001, 00000002, ...
 *   --leaf REF             move the leaf before reporting (main mode)
 *   --keep a,b,...         keepRecentTokens values (default 2000,5000,10000,20000,40000)
 *   --reserve N            reserveTokens (default 16384)
 *   --context-window N     window given to AgentSession.getContextUsage (default 200000)
 *   --budgets a,b,...      more prepareBranchEntries budgets (branch mode)
 *   --max-text N           include serialized text up to N characters (default 100000)
 *   --dump-migrated FILE   also write the session file as pi rewrote it on load
 *   --out FILE             write the JSON there instead of stdout
 *
 * --batch JOBS.json: a JSON list of {"args": [...], "out": FILE}, each job's args those of one run
 * (pi is imported once per version, not once per job). A job's JSON goes to its "out" file; a job
 * that fails writes its error to "out" + ".err" instead.
 *
 * Exit status: 0 done, 1 pi or the session failed, 2 bad arguments, 3 some batch jobs failed.
 */
import fs from "node:fs";
import { fileURLToPath } from "node:url";

import { UsageError, modulesDir, parseArgs, runOnce } from "./pi.mjs";

async function runBatch(o) {
	const jobs = JSON.parse(fs.readFileSync(o.batch, "utf8"));
	let failed = 0;
	for (const job of jobs) {
		try {
			const run = parseArgs(job.args);
			run.modules ??= modulesDir(o);
			fs.writeFileSync(job.out, await runOnce(run));
		} catch (err) {
			failed += 1;
			fs.writeFileSync(`${job.out}.err`, err instanceof UsageError ? err.message : String(err?.stack ?? err));
		}
	}
	return failed === 0 ? 0 : 3;
}

function usage() {
	const text = fs.readFileSync(fileURLToPath(import.meta.url), "utf8");
	const doc = text.slice(text.indexOf("/**") + 3, text.indexOf("*/"));
	return `${doc.replace(/^ \* ?/gm, "").trim()}\n`;
}

async function main(argv) {
	try {
		const o = parseArgs(argv);
		if (o.help) {
			process.stdout.write(usage());
			return 0;
		}
		if (o.batch) return await runBatch(o);
		const text = await runOnce(o);
		if (o.out) fs.writeFileSync(o.out, text);
		else process.stdout.write(text);
		return 0;
	} catch (err) {
		const usageError = err instanceof UsageError;
		process.stderr.write(`pi-oracle: ${usageError ? `${err.message} (--help: usage)` : (err?.stack ?? err)}\n`);
		return usageError ? 2 : 1;
	}
}

process.exitCode = await main(process.argv.slice(2));
