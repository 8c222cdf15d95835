/**
 * What pi's own code computes for one session file, as a plain object (the "oracle" JSON).
 *
 * Everything here calls pi's published functions (`api`, see loadPi in pi-oracle.mjs); the only
 * values computed on this side are bookkeeping: entry indexes next to ids, sums of pi's token
 * estimates, sha256 of pi's serialized text, and a placeholder compaction entry to see the context
 * right after a compaction. No LLM function of pi is ever called.
 *
 * The JSON shape ("pi-compaction-oracle/1") is the one tests/support/pi_compare.py and
 * `inspector oracle-json` use: entries are named by index (position in SessionManager.getEntries(),
 * header excluded) beside their ids, because pi gives migrated v1 entries random ids.
 */
import crypto from "node:crypto";

export const FORMAT = "pi-compaction-oracle/1";

const NOTE =
	"index: position of an entry in SessionManager.getEntries() (file order, no header); " +
	"pathIndex: position in getBranch(leaf), root first. Ids of migrated v1 entries are random " +
	"unless --deterministic-ids, so compare entries by index.";

/** Keep-recent budgets reported when --keep is not given. */
export const DEFAULT_KEEPS = [2000, 5000, 10000, 20000, 40000];

/** Budgets always tried for prepareBranchEntries: none (0), generateBranchSummary's default
 * (a 128k window minus the 16384 reserve), and a few small ones. */
const BRANCH_BUDGETS = [0, 128000 - 16384, 100, 500, 2000, 5000];

/** The compaction entry appended (in memory) to show the context after a compaction. Its summary
 * text is part of the format: its token estimate is in afterCompaction.sumEstimateTokens. */
const PLACEHOLDER = {
	type: "compaction",
	id: "__oracle_compaction__",
	timestamp: "2100-01-01T00:00:00.000Z",
	summary: "ORACLE PLACEHOLDER SUMMARY",
};

/** (contextTokens, contextWindow, settings overrides) triples asked of shouldCompact, after the
 * three that depend on the session (its estimate at 200k/128k/32k, its last usage at 200k). */
const FIXED_SHOULD_COMPACT = [
	[111616, 128000, {}],
	[111617, 128000, {}],
	[183616, 200000, {}],
	[183617, 200000, {}],
	[150000, 200000, { enabled: false }],
	[1000, 1000, { reserveTokens: 0 }],
	[1001, 1000, { reserveTokens: 0 }],
	[0, 0, {}],
	[-16383, 0, {}],
];

const sha256 = (text) => crypto.createHash("sha256").update(text, "utf8").digest("hex");
const jsSorted = (set) => [...set].sort();
const epochMs = (iso) => new Date(iso).getTime();

/**
 * A loaded session and the lookups every report needs.
 * `sm` is pi's SessionManager; `entries` its getEntries().
 */
export class Loaded {
	constructor(api, sm, meta) {
		this.api = api;
		this.sm = sm;
		this.meta = meta;
		this.entries = sm.getEntries();
		this.indexOf = new Map(this.entries.map((e, i) => [e.id, i]));
	}

	index(id) {
		if (id === null || id === undefined) return null;
		return this.indexOf.get(id) ?? null;
	}

	/** "leaf", "null", "@N" (entry index) or an entry id, to an id (or null). */
	ref(text) {
		if (text === "leaf") return this.sm.getLeafId();
		if (text === "null") return null;
		if (text.startsWith("@")) {
			const n = Number(text.slice(1));
			if (!Number.isInteger(n) || n < 0 || n >= this.entries.length) throw new Error(`no entry at index ${text}`);
			return this.entries[n].id;
		}
		if (!this.indexOf.has(text)) throw new Error(`no entry with id ${text}`);
		return text;
	}

	/** The entry each message came from: the same object for message entries; for messages pi
	 * rebuilds from an entry (custom, branchSummary, compactionSummary), the first unused entry
	 * carrying the fields pi copied. */
	sourcesOf(messages, candidates) {
		const taken = new Set();
		return messages.map((m) => {
			const hit = candidates.find((e) => !taken.has(e) && producedBy(m, e));
			if (!hit) return null;
			taken.add(hit);
			return hit;
		});
	}

	describeMessages(messages, candidates) {
		const { estimateTokens, calculateContextTokens } = this.api;
		const sources = this.sourcesOf(messages, candidates);
		return messages.map((m, i) => {
			const src = sources[i];
			const row = {
				i,
				role: m.role,
				entryIndex: src ? this.index(src.id) : null,
				entryId: src ? src.id : null,
				entryType: src ? src.type : null,
				tokens: estimateTokens(m),
			};
			return Object.assign(row, roleFacts(m, calculateContextTokens), listFacts(m));
		});
	}

	/** Counts, sources, tokens and pi's serialized text of a message list. */
	span(messages, candidates, maxText) {
		const { convertToLlm, serializeConversation } = this.api;
		const rows = this.describeMessages(messages, candidates);
		const llm = convertToLlm(messages);
		const text = serializeConversation(llm);
		return {
			count: messages.length,
			tokens: rows.reduce((sum, r) => sum + r.tokens, 0),
			entryIndexes: rows.map((r) => r.entryIndex),
			entryIds: rows.map((r) => r.entryId),
			roles: rows.map((r) => r.role),
			llmMessageCount: llm.length,
			serializedChars: text.length,
			serializedSha256: sha256(text),
			serialized: text.length <= maxText ? text : undefined,
		};
	}

	/** One entry; `index` is its position in getEntries(). */
	describeEntry(e, index, onPath) {
		const row = {
			index,
			id: e.id,
			parentId: e.parentId ?? null,
			parentIndex: this.index(e.parentId),
			type: e.type,
		};
		Object.assign(row, this.entryFacts(e));
		if (onPath) row.onPath = onPath.has(e.id);
		return row;
	}

	entryFacts(e) {
		const { estimateTokens, calculateContextTokens } = this.api;
		switch (e.type) {
			case "message":
				return { role: e.message.role, tokens: estimateTokens(e.message), ...roleFacts(e.message, calculateContextTokens) };
			case "compaction":
				return {
					firstKeptEntryId: e.firstKeptEntryId ?? null,
					firstKeptEntryIndex: this.index(e.firstKeptEntryId),
					tokensBefore: e.tokensBefore,
					summaryChars: (e.summary ?? "").length,
					details: e.details ?? null,
					...(e.fromHook ? { fromHook: true } : {}),
				};
			case "branch_summary":
				return {
					fromId: e.fromId,
					fromIndex: this.index(e.fromId),
					summaryChars: (e.summary ?? "").length,
					details: e.details ?? null,
					...(e.fromHook ? { fromHook: true } : {}),
				};
			case "custom_message":
				return { customType: e.customType, display: e.display };
			case "custom":
				return { customType: e.customType };
			case "label":
				return { targetId: e.targetId, targetIndex: this.index(e.targetId), label: e.label ?? null };
			case "model_change":
				return { provider: e.provider, modelId: e.modelId };
			case "thinking_level_change":
				return { thinkingLevel: e.thinkingLevel };
			default:
				return {};
		}
	}

	fileOps(ops) {
		return {
			read: jsSorted(ops.read),
			written: jsSorted(ops.written),
			edited: jsSorted(ops.edited),
			...this.api.computeFileLists(ops),
		};
	}

	/** The context pi would build with `leafId` as the leaf, in brief (branch mode). */
	contextAt(leafId) {
		const { buildSessionContext, estimateContextTokens, estimateTokens } = this.api;
		const messages = buildSessionContext(this.entries, leafId, undefined).messages;
		return {
			leafId,
			leafIndex: this.index(leafId),
			messageCount: messages.length,
			estimateContextTokens: estimateContextTokens(messages),
			sumEstimateTokens: messages.reduce((sum, m) => sum + estimateTokens(m), 0),
			pathLength: this.sm.getBranch(leafId).length,
		};
	}
}

/** Facts printed for a message of a given role, as an entry and in a message list. */
function roleFacts(m, calculateContextTokens) {
	const facts = {};
	if (m.role === "assistant") {
		facts.stopReason = m.stopReason;
		facts.usageContextTokens = m.usage ? calculateContextTokens(m.usage) : null;
	}
	if (m.role === "toolResult") facts.isError = !!m.isError;
	return facts;
}

/** Facts printed only in message lists (not for entries). */
function listFacts(m) {
	return m.role === "bashExecution" && m.excludeFromContext ? { excludeFromContext: true } : {};
}

function producedBy(m, e) {
	if (e.type === "message") return e.message === m;
	const sameTime = epochMs(e.timestamp) === m.timestamp;
	switch (m.role) {
		case "custom":
			return e.type === "custom_message" && e.customType === m.customType && e.content === m.content && sameTime;
		case "branchSummary":
			return e.type === "branch_summary" && e.summary === m.summary && e.fromId === m.fromId && sameTime;
		case "compactionSummary":
			return e.type === "compaction" && e.summary === m.summary && e.tokensBefore === m.tokensBefore && sameTime;
		default:
			return false;
	}
}

// ------------------------------------------------------------------------------------ branch mode

/** What /tree navigation from `fromRef` to `toRef` would summarise (collectEntriesForBranchSummary
 * and prepareBranchEntries at several budgets). */
export function branchReport(s, fromRef, toRef, { budgets = [], maxText }) {
	const { collectEntriesForBranchSummary, prepareBranchEntries } = s.api;
	const fromId = s.ref(fromRef);
	const toId = s.ref(toRef);
	const collected = collectEntriesForBranchSummary(s.sm, fromId, toId);
	const prepared = [...new Set([...BRANCH_BUDGETS, ...budgets])].map((budget) => {
		const prep = prepareBranchEntries(collected.entries, budget);
		return {
			tokenBudget: budget,
			totalTokens: prep.totalTokens,
			messages: s.span(prep.messages, collected.entries, maxText),
			messageDetails: s.describeMessages(prep.messages, collected.entries),
			fileOps: s.fileOps(prep.fileOps),
		};
	});
	const target = s.sm.getEntry(toId);
	return {
		meta: { ...s.meta, mode: "branch" },
		from: { ref: fromRef, id: fromId, index: s.index(fromId) },
		to: {
			ref: toRef,
			id: toId,
			index: s.index(toId),
			type: target?.type ?? null,
			role: target?.type === "message" ? target.message.role : null,
		},
		commonAncestorId: collected.commonAncestorId,
		commonAncestorIndex: s.index(collected.commonAncestorId),
		entriesToSummarize: collected.entries.map((e) => s.describeEntry(e, s.index(e.id))),
		contextAtFrom: fromId ? s.contextAt(fromId) : null,
		contextAtTo: s.contextAt(toId),
		prepareBranchEntries: prepared,
	};
}

// ------------------------------------------------------------------------------------ main mode

/**
 * Where this pi's prepareCompaction starts summarising after an earlier compaction, found by
 * asking it: on [user, assistant, compaction(firstKept = that user), user, assistant] with a cut
 * at the second user, "kept" (0.73) re-summarises the first two messages, "legacy" (0.58) starts
 * right after the compaction and has nothing to summarise.
 */
export function boundaryRule(api) {
	const at = "2000-01-01T00:00:00.000Z";
	const msg = (id, parentId, role, text) => ({
		type: "message",
		id,
		parentId,
		timestamp: at,
		message:
			role === "user"
				? { role, content: text, timestamp: 0 }
				: { role, content: [{ type: "text", text }], stopReason: "stop", timestamp: 0 },
	});
	const path = [
		msg("q1", null, "user", "u".repeat(400)),
		msg("q2", "q1", "assistant", "v".repeat(400)),
		{ type: "compaction", id: "q3", parentId: "q2", timestamp: at, summary: "earlier", firstKeptEntryId: "q1", tokensBefore: 1 },
		msg("q4", "q3", "user", "w".repeat(4000)),
		msg("q5", "q4", "assistant", "x".repeat(4000)),
	];
	const prep = api.prepareCompaction(path, { enabled: true, reserveTokens: 16384, keepRecentTokens: 1500 });
	return prep && prep.messagesToSummarize.length > 0 ? "kept" : "legacy";
}

/** Where prepareCompaction's summarised range starts on this path (path index), per `rule`. */
function summaryBoundary(path, rule) {
	let prev = -1;
	for (let i = path.length - 1; i >= 0 && prev < 0; i--) if (path[i].type === "compaction") prev = i;
	if (prev < 0) return { rule, prevCompactionPathIndex: -1, boundaryStart: 0 };
	if (rule === "legacy") return { rule, prevCompactionPathIndex: prev, boundaryStart: prev + 1 };
	const kept = path.findIndex((e) => e.id === path[prev].firstKeptEntryId);
	return {
		rule,
		prevCompactionPathIndex: prev,
		boundaryStart: kept >= 0 ? kept : prev + 1,
		firstKeptFound: kept >= 0,
	};
}

/** A path position described as an entry. pi's findCutPoint can answer a position past the end
 * of the path (a path ending in a compaction whose kept entry is elsewhere); there is no entry
 * to describe then, and the report stops with that message. */
function pathPosition(s, path, at) {
	if (at === null || at === undefined || at < 0) {
		return { pathIndex: at ?? null, entryIndex: null, id: null, type: null, role: null };
	}
	const e = path[at];
	if (!e) throw new Error(`findCutPoint answered path index ${at}, past the end of the path (length ${path.length})`);
	return {
		pathIndex: at,
		entryIndex: s.index(e.id),
		id: e.id,
		type: e.type,
		role: e.type === "message" ? e.message.role : null,
	};
}

function compactionAt(s, ctx, keep, { reserve, maxText }) {
	const { DEFAULT_COMPACTION_SETTINGS, findCutPoint, prepareCompaction, estimateTokens, buildSessionContext } = s.api;
	const { path, boundary, leafId } = ctx;
	const settings = { ...DEFAULT_COMPACTION_SETTINGS, reserveTokens: reserve, keepRecentTokens: keep };
	const cut = findCutPoint(path, boundary.boundaryStart, path.length, keep);
	let keptTokens = 0;
	for (let i = cut.firstKeptEntryIndex; i < path.length; i++) {
		if (path[i].type === "message") keptTokens += estimateTokens(path[i].message);
	}
	const out = {
		keepRecentTokens: keep,
		settings,
		findCutPoint: {
			startIndex: boundary.boundaryStart,
			endIndex: path.length,
			firstKeptEntryIndex: cut.firstKeptEntryIndex,
			turnStartIndex: cut.turnStartIndex,
			isSplitTurn: cut.isSplitTurn,
			firstKept: pathPosition(s, path, cut.firstKeptEntryIndex),
			turnStart: pathPosition(s, path, cut.turnStartIndex),
			keptMessageEntryTokens: keptTokens,
		},
	};
	if (boundary.boundaryStart !== 0) {
		const whole = findCutPoint(path, 0, path.length, keep);
		out.findCutPointFrom0 = {
			firstKeptEntryIndex: whole.firstKeptEntryIndex,
			turnStartIndex: whole.turnStartIndex,
			isSplitTurn: whole.isSplitTurn,
			firstKept: pathPosition(s, path, whole.firstKeptEntryIndex),
		};
	}
	const prep = prepareCompaction(path, settings);
	if (!prep) {
		out.prepareCompaction = null;
		return out;
	}
	const keptAt = path.findIndex((e) => e.id === prep.firstKeptEntryId);
	out.prepareCompaction = {
		firstKeptEntryId: prep.firstKeptEntryId,
		firstKeptEntryIndex: s.index(prep.firstKeptEntryId),
		firstKeptPathIndex: keptAt,
		isSplitTurn: prep.isSplitTurn,
		tokensBefore: prep.tokensBefore,
		previousSummaryPresent: prep.previousSummary !== undefined,
		previousSummaryChars: prep.previousSummary?.length ?? null,
		messagesToSummarize: s.span(prep.messagesToSummarize, path, maxText),
		turnPrefixMessages: s.span(prep.turnPrefixMessages, path, maxText),
		fileOps: s.fileOps(prep.fileOps),
	};
	out.consistency = {
		firstKeptMatchesFindCutPoint: keptAt === cut.firstKeptEntryIndex,
		isSplitTurnMatches: prep.isSplitTurn === cut.isSplitTurn,
	};
	const placeholder = { ...PLACEHOLDER, parentId: leafId, firstKeptEntryId: prep.firstKeptEntryId, tokensBefore: prep.tokensBefore };
	const after = buildSessionContext([...s.entries, placeholder], placeholder.id, undefined).messages;
	const rows = s.describeMessages(after, [...path, placeholder]);
	out.afterCompaction = {
		messageCount: after.length,
		entryIndexes: rows.map((r) => (r.entryId === placeholder.id ? "compaction(new)" : r.entryIndex)),
		sumEstimateTokens: rows.reduce((sum, r) => sum + r.tokens, 0),
	};
	return out;
}

function treeFacts(s) {
	const roots = s.sm.getTree();
	let nodes = 0;
	let leaves = 0;
	let maxDepth = 0;
	const todo = roots.map((node) => ({ node, depth: 1 }));
	while (todo.length > 0) {
		const { node, depth } = todo.pop();
		nodes += 1;
		maxDepth = Math.max(maxDepth, depth);
		if (node.children.length === 0) leaves += 1;
		for (const child of node.children) todo.push({ node: child, depth: depth + 1 });
	}
	return {
		roots: roots.map((node) => s.index(node.entry.id)),
		nodes,
		leaves,
		maxDepth,
		branchPoints: s.entries.filter((e) => s.sm.getChildren(e.id).length > 1).map((e) => s.index(e.id)),
	};
}

function shouldCompactTable(api, estimate, lastUsage) {
	const { shouldCompact, calculateContextTokens, DEFAULT_COMPACTION_SETTINGS: D } = api;
	const asked = [
		[estimate, 200000, D],
		[estimate, 128000, D],
		[estimate, 32000, D],
		[lastUsage ? calculateContextTokens(lastUsage) : 0, 200000, D],
		...FIXED_SHOULD_COMPACT.map(([tokens, window, over]) => [tokens, window, Object.keys(over).length ? { ...D, ...over } : D]),
	];
	return asked.map(([contextTokens, contextWindow, settings]) => ({
		contextTokens,
		contextWindow,
		settings,
		result: shouldCompact(contextTokens, contextWindow, settings),
	}));
}

/** pi's AgentSession.getContextUsage, called on a stand-in holding only what it reads. */
function contextUsage(s, messages, contextWindow) {
	try {
		return s.api.AgentSession.prototype.getContextUsage.call({ model: { contextWindow }, sessionManager: s.sm, messages });
	} catch (err) {
		return { error: String(err) };
	}
}

/** Everything pi computes at the leaf (moved to `leaf` first when given). */
export function mainReport(s, { leaf, keeps = DEFAULT_KEEPS, reserve = 16384, contextWindow = 200000, maxText }) {
	const api = s.api;
	if (leaf !== undefined) {
		const target = s.ref(leaf);
		if (target === null) s.sm.resetLeaf();
		else s.sm.branch(target);
	}
	const leafId = s.sm.getLeafId();
	const path = s.sm.getBranch();
	const onPath = new Set(path.map((e) => e.id));
	const context = s.sm.buildSessionContext();
	const messages = s.describeMessages(context.messages, path);
	const estimate = api.estimateContextTokens(context.messages);
	const lastUsage = api.getLastAssistantUsage(path);
	const rule = boundaryRule(api);
	const boundary = summaryBoundary(path, rule);
	const ctx = { path, boundary, leafId };
	const first10 = api.convertToLlm(context.messages.slice(0, 10));
	const whole = api.serializeConversation(api.convertToLlm(context.messages));
	return {
		meta: { ...s.meta, mode: "main", prepareCompactionBoundaryRule: rule },
		defaults: api.DEFAULT_COMPACTION_SETTINGS,
		leafId,
		leafIndex: s.index(leafId),
		entries: s.entries.map((e, i) => s.describeEntry(e, i, onPath)),
		tree: treeFacts(s),
		path: {
			length: path.length,
			entryIndexes: path.map((e) => s.index(e.id)),
			boundary,
			findTurnStartIndexFromBoundary: path.map((_, i) => api.findTurnStartIndex(path, i, boundary.boundaryStart)),
		},
		context: {
			thinkingLevel: context.thinkingLevel,
			model: context.model,
			messageCount: context.messages.length,
			sumEstimateTokens: messages.reduce((sum, r) => sum + r.tokens, 0),
			messages,
		},
		contextTokens: {
			estimateContextTokens: {
				...estimate,
				lastUsageEntryIndex: estimate.lastUsageIndex === null ? null : messages[estimate.lastUsageIndex].entryIndex,
			},
			getLastAssistantUsageOnPath: lastUsage
				? { usage: lastUsage, calculateContextTokens: api.calculateContextTokens(lastUsage) }
				: null,
			agentSessionGetContextUsage: contextUsage(s, context.messages, contextWindow),
		},
		compaction: keeps.map((keep) => compactionAt(s, ctx, keep, { reserve, maxText })),
		shouldCompact: shouldCompactTable(api, estimate.tokens, lastUsage),
		serializeFirst10: { llmRoles: first10.map((m) => m.role), text: api.serializeConversation(first10) },
		serializeWholeContext: { chars: whole.length, sha256: sha256(whole) },
	};
}

export function describeMeta(api, { sessionArg, originalText, migratedText, sm, idMode }) {
	const header = firstHeader(originalText);
	return {
		oracle: FORMAT,
		piPackage: `${api.packageName}@${api.packageVersion}`,
		node: process.version,
		sessionFile: sessionArg,
		originalHeaderVersion: header && header.type === "session" ? (header.version ?? 1) : null,
		headerVersionAfterLoad: sm.getHeader()?.version ?? null,
		migrated: migratedText !== originalText,
		sessionId: sm.getSessionId(),
		idMode,
		entryCount: sm.getEntries().length,
		note: NOTE,
	};
}

/** The first non-blank line of the file, parsed (null when it is not JSON). */
function firstHeader(text) {
	const line = text.split("\n").find((l) => l.trim() !== "");
	if (line === undefined) return null;
	try {
		return JSON.parse(line);
	} catch {
		return null;
	}
}
