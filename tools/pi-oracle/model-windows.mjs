#!/usr/bin/env node
/**
 * Prints the context window of every model in pi's model list — @mariozechner/pi-ai's MODELS
 * (models.generated.ts), the version the pinned pi-coding-agent installs — as JSON:
 * {"piAi": VERSION, "windows": {PROVIDER: {MODEL_ID: contextWindow}}}, keys sorted.
 * inspector/model_windows.json is this output; a test compares the two.
 *
 *   node model-windows.mjs [--modules DIR] > ../../inspector/model_windows.json
 *
 * --modules DIR: node_modules holding the pinned packages (default: $PI_ORACLE_MODULES, else
 * node_modules beside this file).
 */
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

import { modulesDir } from "./pi.mjs";

const args = process.argv.slice(2);
const at = args.indexOf("--modules");
const modules = modulesDir({ modules: at >= 0 ? args[at + 1] : undefined });
const dir = path.join(modules, "@mariozechner", "pi-ai");
const version = JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8")).version;
const { MODELS } = await import(pathToFileURL(path.join(dir, "dist", "models.generated.js")).href);
const windows = {};
for (const provider of Object.keys(MODELS).sort()) {
	windows[provider] = {};
	for (const id of Object.keys(MODELS[provider]).sort()) {
		windows[provider][id] = MODELS[provider][id].contextWindow;
	}
}
process.stdout.write(`${JSON.stringify({ piAi: version, windows }, null, 1)}\n`);
