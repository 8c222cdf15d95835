"""What one session entry says, as retention scoring reads it (pure; memoised per session).

Each entry of the branch becomes a :class:`Facts`: the files its tool calls touch, the paths and
identifiers its text mentions, the error lines it shows, the standing instructions a user message
gives, the shell commands it runs. Scoring (:mod:`inspector.retention.score`) then only compares
sets. Every heuristic here is ours (no agent scores retention); each says what it can miss in
``docs/retention.md``.

* **Files touched** — the read/write/edit tool calls with a string ``path``, exactly as pi's
  ``extractFileOpsFromMessage`` collects them for ``details.readFiles``/``modifiedFiles``
  (:func:`inspector.compaction.extract_file_ops`), plus file paths (a last component with an
  extension) named in a ``bash`` command, which pi does not collect.
* **Paths mentioned** — slash-separated tokens and bare file names with a known extension; a
  path matches another when one is a suffix of the other at a ``/`` (``src/a.py`` names
  ``/repo/src/a.py``), a bare file name included.
* **Identifiers** — code-shaped tokens: ``snake_case``, ``camelCase``, ``PascalCase`` with two
  humps or more, ``dotted.names`` and ``name(`` calls, at least 4 characters, file names aside.
* **Errors** — the lines of a tool output that look like an error (``…Error:``, ``error:``,
  ``FAILED``, ``fatal:``, ``No such file or directory``, ``command not found``, …); a failed tool
  result with no such line gives its first line.
* **Instructions** — sentences of a user message that constrain later work (``don't``,
  ``never``, ``always``, ``must``, ``make sure``, ``avoid``, ``instead of``, ``prefer``, ``from
  now on``, ``we decided``, ``let's go with``, …).

Texts longer than :data:`MAX_CHARS` are read up to that many characters.
"""

from __future__ import annotations

import re
import weakref
from dataclasses import dataclass
from typing import Any

from ..session.models import (
    AssistantMessage,
    BashExecutionMessage,
    MessageEntry,
    TextContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)

MAX_CHARS = 200_000
"""Characters of one text scanned (a huge tool output is read up to here)."""

FILE_TOOLS = {"read": "read", "write": "write", "edit": "edit"}
"""pi's file tools (``extractFileOpsFromMessage``) and the operation each records."""

EXTENSIONS = frozenset(
    "py pyi ts tsx js jsx mjs cjs json jsonl md rst txt toml yaml yml ini cfg conf sh bash zsh fish go rs "
    "java kt kts scala c h cc cpp hpp cs rb php swift m mm sql html htm css scss less vue svelte lock "
    "xml csv tsv env ipynb gradle proto graphql tf lua r pl ex exs erl hs ml clj dart nim zig dockerfile "
    "mk cmake properties gitignore".split())

_PATH = re.compile(r"(?<![\w:/.-])(?:~|\.{1,2})?(?:/?[\w.@+-]+)(?:/[\w.@+-]+)+/?|(?<![\w/.-])[\w@+-]+\.[A-Za-z]{1,10}\b")
_IDENT = re.compile(r"(?<![\w.])[A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)*(?:\(\))?(?:\()?")
_ERROR_LINE = re.compile(
    r"^(?:E\s+)?(?:[\w.]*(?:Error|Exception|Failure)\b[:(].*|(?:error|ERROR|Error|fatal|FATAL|FAIL|FAILED)"
    r"(?:\[[\w-]+\])?[: ].*|.*\b(?:No such file or directory|command not found|Permission denied|"
    r"Segmentation fault|not found: .+|cannot find module .+)\b.*)$", re.I | re.M)
_INSTRUCTION = re.compile(
    r"\b(?:don'?t|do not|never|always|must(?:n'?t| not)?|make sure|avoid|only (?:use|touch|change|edit)|"
    r"instead of|prefer|stick (?:to|with)|remember to|from now on|(?:we|i) (?:have )?decided|"
    r"let'?s (?:go with|use|keep))\b", re.I)
_PYTEST_E = re.compile(r"^E\s+")
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_'-]{2,}")
_WS = re.compile(r"\s+")
STOPWORDS = frozenset(
    "the and for with that this from into then than they them their there these those what when where which "
    "while will would should could have has had was were are been being not but all any can our out use "
    "using used you your it's its also just only make sure please don't do does did let's lets now one two "
    "some such very more most other each same here about after before again any".split())
BRANDS = frozenset(
    "JavaScript TypeScript GitHub GitLab OpenAI PyPI macOS iOS iPhone YouTube LinkedIn PostgreSQL MySQL SQLite "
    "FastAPI NumPy PyTorch OpenCode ClaudeCode DeepSeek OpenRouter LangChain WebSocket PowerShell VSCode "
    "DevOps README".split())


@dataclass(frozen=True)
class Facts:
    """What one entry says (see the module docstring)."""

    role: str
    """user, assistant, toolResult, bash (a ``!`` command) or other."""
    touches: tuple[tuple[str, str], ...] = ()
    """(path, op) per file tool call or file named in a bash command; op read/write/edit/bash."""
    paths: frozenset[str] = frozenset()
    """Every ``/``-suffix of every path mentioned (``a/b/c.py``, ``b/c.py``, ``c.py``)."""
    idents: frozenset[str] = frozenset()
    errors: tuple[str, ...] = ()
    """Error lines, normalised (:func:`norm`)."""
    instructions: tuple[str, ...] = ()
    commands: tuple[tuple[str, str], ...] = ()
    """(tool call id, normalised command) of each bash tool call."""
    failed: bool = False
    """A tool result marked as an error (or a ``!`` command with a non-zero exit)."""
    call_id: str = ""
    """A tool result's ``toolCallId``."""
    text: str = ""
    """The entry's text, normalised and lower-cased (for phrase look-ups)."""


def norm(text: str) -> str:
    return _WS.sub(" ", text).strip()


def words(text: str) -> set[str]:
    """Content words, lower-cased, a final ``s`` dropped (the heuristics' bag of words)."""
    out = set()
    for w in _WORD.findall(text):
        w = w.lower().strip("'-")
        if len(w) >= 3 and w not in STOPWORDS:
            out.add(w[:-1] if w.endswith("s") and len(w) > 3 else w)
    return out


def path_suffixes(path: str) -> set[str]:
    """``a/b/c.py`` → {``a/b/c.py``, ``b/c.py``, ``c.py``} (a leading ``./`` or ``/`` aside)."""
    p = path.strip().rstrip("/")
    parts = [x for x in p.split("/") if x and x != "."]
    return {"/".join(parts[i:]) for i in range(len(parts))} | ({p} if p else set())


def _is_file_like(token: str) -> bool:
    last = token.rstrip("/").rsplit("/", 1)[-1]
    return "." in last and last.rsplit(".", 1)[-1].lower() in EXTENSIONS


def paths_in(text: str) -> set[str]:
    """Every path mentioned in ``text``, each with its suffixes."""
    out: set[str] = set()
    for m in _PATH.finditer(text):
        tok = m.group(0).rstrip(".,;:)'\"`")
        if tok.startswith("//") or (("/" not in tok) and not _is_file_like(tok)):
            continue
        out |= path_suffixes(tok)
    return out


def _ident_ok(tok: str) -> bool:
    if len(tok) < 4 or tok in BRANDS:
        return False
    if "." in tok:
        parts = tok.split(".")
        if parts[-1].lower() in EXTENSIONS or any(len(p) < 2 for p in parts):
            return False
        return True
    if "_" in tok.strip("_"):
        return any(c.isalpha() for c in tok)
    if tok.startswith("__") and tok.endswith("__"):
        return True
    return bool(re.search(r"[a-z][A-Z]", tok)) and not tok.isupper()


def identifiers_in(text: str) -> set[str]:
    """Code-shaped tokens of ``text`` (see the module docstring)."""
    out = set()
    for m in _IDENT.finditer(text):
        raw = m.group(0)
        call = raw.endswith("(")
        tok = raw.rstrip("(").removesuffix("()")
        head, dot, rest = tok.partition(".")
        if dot and head in ("this", "self", "cls"):  # an attribute: its name, not the receiver
            tok = rest
        if _ident_ok(tok) or (call and len(tok) >= 4 and tok.isidentifier() and not tok.istitle()):
            out.add(tok)
    return out


def errors_in(text: str, failed: bool) -> tuple[str, ...]:
    """Up to three distinct error lines of a tool output (its first line when it failed without one)."""
    out: list[str] = []
    for m in _ERROR_LINE.finditer(text):
        line = _PYTEST_E.sub("", norm(m.group(0)))[:200]
        if line and line not in out and len(line) >= 8:
            out.append(line)
        if len(out) == 3:
            break
    if not out and failed:
        first = next((norm(x) for x in text.splitlines() if x.strip()), "")
        if first:
            out.append(first[:200])
    return tuple(out)


def instructions_in(text: str) -> tuple[str, ...]:
    """The sentences of a user message that give a standing instruction or decision."""
    out = []
    for s in _SENTENCE.split(text):
        s = norm(s)
        if 8 <= len(s) <= 400 and _INSTRUCTION.search(s) and len(words(s)) >= 2:
            out.append(s[:240])
    return tuple(out)


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content[:MAX_CHARS]
    if isinstance(content, list):
        return "\n".join(b.text for b in content if isinstance(b, TextContent))[:MAX_CHARS]
    return ""


def _call_text(tc: ToolCall) -> str:
    args = tc.arguments
    if isinstance(args, dict):
        return "\n".join(str(v) for v in args.values() if isinstance(v, str | int | float))[:MAX_CHARS]
    return str(args)[:MAX_CHARS] if args is not None else ""


def _assistant(m: AssistantMessage) -> Facts:
    texts = [b.text for b in m.content if isinstance(b, TextContent)]
    touches: list[tuple[str, str]] = []
    commands: list[tuple[str, str]] = []
    for b in m.content:
        if not isinstance(b, ToolCall):
            continue
        texts.append(_call_text(b))
        args = b.arguments if isinstance(b.arguments, dict) else {}
        p = args.get("path")
        if b.name in FILE_TOOLS and isinstance(p, str) and p:
            touches.append((p, FILE_TOOLS[b.name]))
        cmd = args.get("command")
        if b.name == "bash" and isinstance(cmd, str) and cmd.strip():
            commands.append((b.id, norm(cmd)))
            touches.extend((t, "bash") for t in _command_files(cmd))
    text = "\n".join(texts)[:MAX_CHARS]
    return Facts("assistant", tuple(touches), frozenset(paths_in(text)), frozenset(identifiers_in(text)),
                 commands=tuple(commands), text=norm(text).lower())


def _command_files(cmd: str) -> list[str]:
    out = []
    for m in _PATH.finditer(cmd[:MAX_CHARS]):
        tok = m.group(0).rstrip(".,;:)'\"`")
        if _is_file_like(tok) and not tok.startswith("//") and tok not in out:
            out.append(tok)
    return out


def facts_of(message: Any) -> Facts:
    """The :class:`Facts` of one message."""
    if isinstance(message, AssistantMessage):
        return _assistant(message)
    if isinstance(message, UserMessage):
        text = _text(message.content)
        return Facts("user", (), frozenset(paths_in(text)), frozenset(identifiers_in(text)),
                     instructions=instructions_in(text), text=norm(text).lower())
    if isinstance(message, ToolResultMessage):
        text = _text(message.content)
        return Facts("toolResult", (), frozenset(paths_in(text)), frozenset(identifiers_in(text)),
                     errors_in(text, message.isError), failed=message.isError, call_id=message.toolCallId,
                     text=norm(text[:20_000]).lower())
    if isinstance(message, BashExecutionMessage):
        text = f"{message.command}\n{message.output}"[:MAX_CHARS]
        failed = message.exitCode not in (0, None)
        return Facts("bash", (), frozenset(paths_in(text)), frozenset(identifiers_in(text)),
                     errors_in(message.output[:MAX_CHARS], failed), failed=failed, text=norm(text[:20_000]).lower())
    content = getattr(message, "content", None)
    text = _text(content)
    return Facts("other", (), frozenset(paths_in(text)), frozenset(identifiers_in(text)), text=norm(text).lower())


_MEMO: weakref.WeakKeyDictionary[Any, dict[int, Facts]] = weakref.WeakKeyDictionary()
_EMPTY = Facts("other")


def entry_facts(session: Any, index: int) -> Facts:
    """The :class:`Facts` of session entry ``index`` (memoised per session object)."""
    memo = _MEMO.get(session)
    if memo is None:
        memo = {}
        _MEMO[session] = memo
    f = memo.get(index)
    if f is None:
        e = session.entries[index]
        f = facts_of(e.message) if isinstance(e, MessageEntry) else _EMPTY
        memo[index] = f
    return f
