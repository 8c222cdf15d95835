/**
 * Loading the pinned pi packages and running one report: the arguments of pi-oracle.mjs, the id
 * source pi's migration draws from, and pi's SessionManager on a private copy of the session.
 */
import crypto from "node:crypto";
import fs from "node:fs";
import { syncBuiltinESMExports } from "node:module";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

import { DEFAULT_KEEPS, Loaded, branchReport, describeMeta, mainReport } from "./report.mjs";

export const HERE = path.dirname(fileURLToPath(import.meta.url));
const MAIN_PACKAGE = "@mariozechner/pi-coding-agent";

export class UsageError extends Error {}

// --------------------------------------------------------------------------- ids pi draws
// pi's migration names v1 entries with crypto.randomUUID().slice(0, 8). The function is swapped,
// before pi is imported, for one that asks `drawId`, and the swap is pushed to ESM importers.
const randomUUID = crypto.randomUUID.bind(crypto);
let drawId = randomUUID;
crypto.randomUUID = (...args) => drawId(...args);
syncBuiltinESMExports();

/** Random ids (pi's own behaviour), or 00000001, 00000002, ... from a counter started anew. */
function useIds(deterministic) {
	if (!deterministic) {
		drawId = randomUUID;
		return;
	}
	let n = 0;
	drawId = () => {
		n += 1;
		return `${n.toString(16).padStart(8, "0")}-0000-4000-8000-000000000000`;
	};
}

// --------------------------------------------------------------------------- arguments
export function parseArgs(argv) {
	const o = {
		pi: undefined,
		modules: undefined,
		branch: false,
		batch: undefined,
		deterministicIds: false,
		leaf: undefined,
		keeps: DEFAULT_KEEPS,
		reserve: 16384,
		contextWindow: 200000,
		budgets: [],
		maxText: 100000,
		dumpMigrated: undefined,
		out: undefined,
		help: false,
		positional: [],
	};
	const number = (flag, text) => {
		const n = Number(text);
		if (text.trim() === "" || !Number.isFinite(n)) throw new UsageError(`${flag}: '${text}' is not a number`);
		return n;
	};
	const numbers = (flag, text) =>
		text
			.split(",")
			.filter((x) => x.trim() !== "")
			.map((x) => number(flag, x));
	const setters = {
		"--branch": () => (o.branch = true),
		"--deterministic-ids": () => (o.deterministicIds = true),
		"--help": () => (o.help = true),
		"-h": () => (o.help = true),
		"--pi": (v) => (o.pi = v),
		"--modules": (v) => (o.modules = v),
		"--batch": (v) => (o.batch = v),
		"--leaf": (v) => (o.leaf = v),
		"--keep": (v) => (o.keeps = numbers("--keep", v)),
		"--reserve": (v) => (o.reserve = number("--reserve", v)),
		"--context-window": (v) => (o.contextWindow = number("--context-window", v)),
		"--budgets": (v) => (o.budgets = numbers("--budgets", v)),
		"--max-text": (v) => (o.maxText = number("--max-text", v)),
		"--dump-migrated": (v) => (o.dumpMigrated = v),
		"--out": (v) => (o.out = v),
	};
	for (let i = 0; i < argv.length; i++) {
		const arg = argv[i];
		const set = setters[arg];
		if (set === undefined) {
			if (arg.startsWith("-")) throw new UsageError(`unknown option ${arg}`);
			o.positional.push(arg);
		} else if (set.length === 0) {
			set();
		} else {
			if (i + 1 >= argv.length) throw new UsageError(`${arg} needs a value`);
			i += 1;
			set(argv[i]);
		}
	}
	if (!o.help && !o.batch && o.positional.length !== (o.branch ? 3 : 1)) {
		throw new UsageError(o.branch ? "--branch needs SESSION FROM TO" : "one SESSION file is needed");
	}
	return o;
}

/** Where the pinned packages are: --modules, $PI_ORACLE_MODULES, or node_modules beside this file. */
export function modulesDir(o) {
	return path.resolve(o.modules ?? process.env.PI_ORACLE_MODULES ?? path.join(HERE, "node_modules"));
}

// --------------------------------------------------------------------------- loading pi
/** The installed pinned pi packages by version ({ "0.73.1": dir, ... }) and the main one's version. */
function installedPis(modules) {
	const manifest = JSON.parse(fs.readFileSync(path.join(HERE, "package.json"), "utf8"));
	const found = {};
	let main;
	for (const folder of Object.keys(manifest.dependencies)) {
		const dir = path.join(modules, folder);
		const pkgFile = path.join(dir, "package.json");
		if (!fs.existsSync(pkgFile)) {
			throw new UsageError(`${folder} is not installed in ${modules} (npm ci in ${HERE}, or --modules DIR)`);
		}
		const pkg = JSON.parse(fs.readFileSync(pkgFile, "utf8"));
		if (pkg.name !== MAIN_PACKAGE) throw new UsageError(`${dir} holds ${pkg.name}, not ${MAIN_PACKAGE}`);
		found[pkg.version] = dir;
		if (folder === MAIN_PACKAGE) main = pkg.version;
	}
	return { found, main };
}

const imported = new Map();

/** pi's functions of one version: the package root and its compaction module (whose
 * prepareCompaction, estimateContextTokens and computeFileLists the root does not export). */
async function loadPi(modules, version) {
	const { found, main } = installedPis(modules);
	const dir = found[version ?? main];
	if (!dir) throw new UsageError(`pi ${version} is not pinned here (pinned: ${Object.keys(found).join(", ")})`);
	if (!imported.has(dir)) {
		const pkg = JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8"));
		const entry = pathToFileURL(path.join(dir, pkg.exports?.["."]?.import ?? pkg.main));
		const root = await import(entry.href);
		const compaction = await import(new URL("./core/compaction/index.js", entry).href);
		imported.set(dir, { ...root, ...compaction, packageName: pkg.name, packageVersion: pkg.version });
	}
	return imported.get(dir);
}

// --------------------------------------------------------------------------- one run
/** Opens a private copy of the session with pi's SessionManager (which rewrites a migrated file
 * in place) and reads back what pi wrote. The original file is never touched. */
function openSession(api, sessionArg, deterministicIds) {
	const originalText = fs.readFileSync(path.resolve(sessionArg), "utf8");
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pi-oracle-"));
	const copy = path.join(dir, "session.jsonl");
	fs.writeFileSync(copy, originalText);
	let sm;
	let migratedText;
	try {
		useIds(deterministicIds);
		sm = api.SessionManager.open(copy, dir, "/pi-oracle-cwd");
		migratedText = fs.readFileSync(copy, "utf8");
	} finally {
		useIds(false);
		fs.rmSync(dir, { recursive: true, force: true });
	}
	if (sm.getEntries().length === 0 && originalText.trim().split("\n").length > 1) {
		throw new Error("pi loaded no entry from a file of several lines (is the first line a session header?)");
	}
	const idMode = deterministicIds ? "deterministic-counter" : "pi-random";
	const meta = describeMeta(api, { sessionArg, originalText, migratedText, sm, idMode });
	return { loaded: new Loaded(api, sm, meta), migratedText };
}

/** One report as JSON text (JSON.stringify with one space of indent, and a newline). */
export async function runOnce(o) {
	const api = await loadPi(modulesDir(o), o.pi);
	const [sessionArg, from, to] = o.positional;
	const { loaded, migratedText } = openSession(api, sessionArg, o.deterministicIds);
	if (o.dumpMigrated) fs.writeFileSync(o.dumpMigrated, migratedText);
	const settings = { leaf: o.leaf, keeps: o.keeps, reserve: o.reserve, contextWindow: o.contextWindow, maxText: o.maxText };
	const report = o.branch
		? branchReport(loaded, from, to, { budgets: o.budgets, maxText: o.maxText })
		: mainReport(loaded, settings);
	return `${JSON.stringify(report, null, 1)}\n`;
}
