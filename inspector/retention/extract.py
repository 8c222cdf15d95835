"""What one session entry says, as retention scoring reads it (pure; memoised per session).

Each entry of the branch becomes a :class:`Facts`: the files its tool calls touch, the paths and
identifiers its text mentions, the error lines it shows, the standing instructions a user message
gives, the shell commands it runs. Scoring (:mod:`inspector.retention.score`) then only compares
sets. Every heuristic here is ours (no agent scores retention); each says what it can miss in
``docs/retention.md``.

* **Files touched** — the read/write/edit tool calls with a string ``path``, exactly as pi's
  ``extractFileOpsFromMessage`` collects them for ``details.readFiles``/``modifiedFiles``
  (:func:`inspector.compaction.extract_file_ops`) — and the same tools of Claude Code and OpenCode
  (:data:`FILE_TOOLS`, :data:`PATH_KEYS`), the files of a Codex ``apply_patch`` —, plus file paths
  (a last component with an extension) named in a shell command, which pi does not collect.
* **Paths mentioned** — slash-separated tokens and bare file names with a known extension; a
  path matches another when one is a suffix of the other at a ``/`` (``src/a.py`` names
  ``/repo/src/a.py``), a bare file name included.
* **Identifiers** — code-shaped tokens: ``snake_case``, ``camelCase``, ``PascalCase`` with two
  humps or more, ``dotted.names`` (``self.``/``this.`` dropped), at least 4 characters, file names
  aside, and names any model knows without the session aside (:data:`KNOWN_NAMES`,
  :data:`KNOWN_MODULES`, :data:`KNOWN_METHODS`).
* **Errors** — the lines of a tool output that look like an error (``…Error:``, ``error:``,
  ``FAILED``, ``fatal:``, ``No such file or directory``, ``command not found``, …); a failed tool
  result with no such line gives its first line (not a line the agent's shell tool writes around
  every output, such as ``(no output)``). Outputs of file-reading and listing tools
  (:data:`QUIET_TOOLS`) are file content: only a failed call of theirs counts.
* **Instructions** — sentences of a user message that constrain later work (``don't``,
  ``never``, ``always``, ``must``, ``make sure``, ``avoid``, ``instead of``, ``prefer``, ``from
  now on``, ``we decided``, ``let's go with``, …).

Texts longer than :data:`MAX_CHARS` are read up to that many characters; a tool output up to
:data:`MAX_OUTPUT_CHARS` (a summarizer sees far less of it: pi cuts each tool result to 2,000
characters when it serialises the conversation for the summary).
"""

from __future__ import annotations

import builtins
import pathlib
import re
import sys
import weakref
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import Any

from ahocorasick_rs import BytesAhoCorasick

from ..gcpause import gc_paused
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
"""Characters of one message text scanned."""
MAX_OUTPUT_CHARS = 32_000
"""Characters of one tool output scanned."""
TEXT_CHARS = 20_000
"""Characters of one tool output kept for phrase look-ups (:attr:`Facts.text`)."""

MAX_ERROR_LINES = 200
"""Lines holding an error word examined per tool output."""
QUIET_TOOLS = frozenset({"read", "grep", "find", "ls", "glob", "write", "edit"})
"""Tools whose output is file content or a listing: error lines in it are code, not errors (unless
the call itself failed)."""

FILE_TOOLS = {"read": "read", "write": "write", "edit": "edit", "multiedit": "edit", "notebookedit": "edit"}
"""File tools (by lower-cased name) and the operation each records: pi's ``read``/``write``/``edit``,
Claude Code's ``Read``/``Write``/``Edit``/``MultiEdit``/``NotebookEdit``, OpenCode's."""
PATH_KEYS = ("path", "file_path", "filePath", "notebook_path")
"""Where a file tool's argument names its file: pi's ``path``, Claude Code's ``file_path``, OpenCode's
``filePath``."""
SHELL_TOOLS = frozenset({"bash", "shell", "exec_command", "local_shell"})
"""Shell tools (lower-cased): pi's and OpenCode's ``bash``, Claude Code's ``Bash``, Codex's ``shell`` /
``exec_command`` (their ``command`` or ``cmd``, a string or a list)."""
_PATCH_FILE = re.compile(r"^\*\*\* (Add|Update|Delete) File: (.+?)\s*$", re.M)
"""pi's file tools (``extractFileOpsFromMessage``) and the operation each records."""

EXTENSIONS = frozenset(
    "py pyi ts tsx js jsx mjs cjs json jsonl md rst txt toml yaml yml ini cfg conf sh bash zsh fish go rs "
    "java kt kts scala c h cc cpp hpp cs rb php swift m mm sql html htm css scss less vue svelte lock "
    "xml csv tsv env ipynb gradle proto graphql tf lua r pl ex exs erl hs ml clj dart nim zig dockerfile "
    "mk cmake properties gitignore".split()
)

_TOKEN = re.compile(r"[\w./~@+-]+\(?")
_IDENT_SPLIT = re.compile(r"[~@+-]+")
_HUMP = re.compile(r"[a-z][A-Z]")
_ERROR_LINE = re.compile(
    r"^(?:E\s+)?(?:[\w.]*(?:Error|Exception|Failure)\b[:(].*|(?:error|ERROR|Error|fatal|FATAL|FAIL|FAILED)"
    r"(?:\[[\w-]+\])?[: ].*|.*\b(?:No such file or directory|command not found|Permission denied|"
    r"Segmentation fault|not found: .+|cannot find module .+)\b.*)$",
    re.I | re.M,
)
_INSTRUCTION = re.compile(
    r"\b(?:don'?t|do not|never|always|must(?:n'?t| not)?|make sure|avoid|only (?:use|touch|change|edit)|"
    r"instead of|prefer|stick (?:to|with)|remember to|from now on|(?:we|i) (?:have )?decided|"
    r"let'?s (?:go with|use|keep))\b",
    re.I,
)
ERROR_WORDS = (
    "error",
    "exception",
    "fail",
    "fatal",
    "no such file",
    "not found",
    "permission denied",
    "segmentation fault",
)
"""Words one of which an error line holds (lower case)."""
_ERROR_WORDS_BYTES = tuple(w.encode("ascii") for w in ERROR_WORDS)
_ERROR_WORDS_SCAN = BytesAhoCorasick(list(_ERROR_WORDS_BYTES))
"""Every error word at once (an Aho-Corasick automaton: one pass over a text)."""
_ERROR_HINT = re.compile("|".join(ERROR_WORDS), re.I)
_PYTEST_E = re.compile(r"^E\s+")
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_'-]{2,}")
STOPWORDS = frozenset(
    "the and for with that this from into then than they them their there these those what when where which "
    "while will would should could have has had was were are been being not but all any can our out use "
    "using used you your it's its also just only make sure please don't do does did let's lets now one two "
    "some such very more most other each same here about after before again any".split()
)
BRANDS = frozenset(
    "JavaScript TypeScript GitHub GitLab OpenAI PyPI macOS iOS iPhone YouTube LinkedIn PostgreSQL MySQL SQLite "
    "FastAPI NumPy PyTorch OpenCode ClaudeCode DeepSeek OpenRouter LangChain WebSocket PowerShell VSCode "
    "DevOps README".split()
) | frozenset(
    # products of the software world any model knows by name: a later mention is no memory of the span
    "gRPC GraphQL OpenTelemetry OpenTracing MongoDB DynamoDB CosmosDB DuckDB MariaDB InfluxDB CouchDB "
    "RocksDB LevelDB CockroachDB TimescaleDB SurrealDB ClickHouse BigQuery CloudWatch CloudFormation "
    "CloudFront CloudTrail SageMaker WebAssembly WebSockets WebRTC WebGL WebGPU WebKit WebAuthn WebDriver "
    "TensorFlow TensorRT HuggingFace ChatGPT OpenSSL OpenSSH OpenAPI OpenID OpenGL OpenCV OpenShift "
    "OpenStack OpenSearch ElasticSearch RabbitMQ ZeroMQ NixOS JetBrains IntelliJ PyCharm WebStorm GoLand "
    "DataGrip RubyMine NeoVim SciPy SymPy JupyterLab PySpark LightGBM CatBoost PyQt DirectX iPad iPadOS "
    "iCloud iMessage iTunes watchOS tvOS visionOS MacBook FreeBSD OpenBSD NetBSD VirtualBox WordPress "
    "PayPal DigitalOcean CircleCI TravisCI BitBucket DataDog PagerDuty SwiftUI AppKit TestNG NuGet "
    "CocoaPods PostCSS TailwindCSS NestJS NextJS NodeJS VueJS AngularJS SvelteKit SolidJS RxJS LangGraph "
    "LlamaIndex LiteLLM vLLM cuDNN ProtoBuf FlatBuffers MessagePack MsgPack PlanetScale PocketBase "
    "SupaBase GitOps DevSecOps FinOps CoffeeScript ActionScript PureScript ReScript ClojureScript "
    "AssemblyScript MicroPython RaspberryPi AirPods AirDrop AirPlay FaceTime TikTok WhatsApp SonarQube "
    "ArgoCD HashiCorp MinIO CoreDNS KeyCloak MacPorts GitKraken SourceTree LaTeX KaTeX MathJax eBPF "
    "gVisor LangSmith DeepEval TruLens OpenInference AutoGen CrewAI OpenHands WandB".split()
)
"""Names of languages, products, services and tools shaped like identifiers (a hump: ``GitHub``,
``gRPC``, ``OpenTelemetry``): general knowledge, not the session's code (:func:`_ident_ok`)."""


def _public(*objs: object) -> frozenset[str]:
    return frozenset(n for o in objs for n in dir(o) if not n.startswith("_"))


TOOL_VALUES = frozenset({"files_with_matches", "in_progress"})
"""Option values of the agents' own tool schemas that look like identifiers: Claude Code's ``Grep``
``output_mode`` (``files_with_matches``) and the to-do status every agent's plan tool takes
(``in_progress``: Claude Code's ``TodoWrite``, OpenCode's ``todowrite``, Codex's ``update_plan``).
The model is given them with its tools; a summary need not carry them."""
REACT_HOOKS = frozenset(
    "useState useEffect useContext useReducer useCallback useMemo useRef useLayoutEffect useId "
    "useTransition useDeferredValue useSyncExternalStore useImperativeHandle".split()
)
"""React's built-in hooks (react.dev's API reference): a library's API, like a standard one."""
TEST_API = frozenset(
    "beforeEach afterEach beforeAll afterAll toBe toEqual toStrictEqual toBeDefined toBeUndefined toBeNull "
    "toBeTruthy toBeFalsy toBeNaN toContain toContainEqual toHaveLength toHaveProperty toMatch toMatchObject "
    "toMatchSnapshot toMatchInlineSnapshot toThrow toThrowError toHaveBeenCalled toHaveBeenCalledWith "
    "toHaveBeenCalledTimes toHaveBeenLastCalledWith toHaveReturned toBeGreaterThan toBeGreaterThanOrEqual "
    "toBeLessThan toBeLessThanOrEqual toBeCloseTo toBeInstanceOf mockReturnValue mockResolvedValue "
    "mockImplementation".split()
)
"""Jest's and Vitest's globals and matchers (``beforeEach``, ``expect(x).not.toBeNull``)."""
NODE_FS = frozenset(
    "readFileSync writeFileSync appendFileSync existsSync mkdirSync readdirSync statSync lstatSync "
    "unlinkSync rmSync renameSync copyFileSync mkdtempSync realpathSync".split()
)
"""Node's ``fs`` functions called bare (``import { readFileSync } from "fs"``)."""
KNOWN_NAMES = _public(builtins) | TOOL_VALUES | REACT_HOOKS | TEST_API | NODE_FS | {"node_modules"}
"""Python's builtins (``ImportError``, ``isinstance``, …), the agents' tool option values
(:data:`TOOL_VALUES`), React's hooks, Jest's and Vitest's test API, Node's ``fs`` functions and
npm's ``node_modules``: a model names them without the session. Python's special names
(``__init__``, ``__name__``) and the standard modules' own names (``child_process``,
:data:`KNOWN_MODULES`) are known too (:func:`_ident_ok`)."""
STDLIB_OTHER = frozenset(
    "fmt strconv strings errors bufio filepath ioutil "  # Go's standard library
    "assert fs child_process util crypto zlib "  # Node's core modules
    "require".split()  # Go's testify (``require.NoError``; its ``assert`` is Node's name too)
)
"""Go's and Node's standard modules a dotted name starts with (``fmt.Printf``, ``strconv.Itoa``,
``assert.equal``, ``fs.readFileSync``), and Go's testify. Only names a project rarely gives its own
objects: ``path``, ``events`` or ``http`` are left out (``path.join`` is known by its method)."""
KNOWN_MODULES = (
    frozenset(sys.stdlib_module_names)
    | STDLIB_OTHER
    | frozenset(
        "console JSON Object Array Promise Math Number String Date Buffer process window document expect".split()
    )
)
"""Python's, Go's and Node's standard library modules, JavaScript's globals and Jest's ``expect``:
``os.chmod``, ``asyncio.run``, ``tempfile.TemporaryDirectory``, ``fmt.Printf``, ``JSON.stringify``
are general knowledge, not something the session showed (a dotted name starting with one is not an
identifier)."""
JS_METHODS = frozenset(
    "push pop shift unshift slice splice concat includes indexOf lastIndexOf forEach map filter reduce "
    "reduceRight find findIndex findLast some every flat flatMap fill sort reverse at keys values entries "
    "has get set add delete clear size length then catch finally toString valueOf trim trimStart trimEnd "
    "padStart padEnd startsWith endsWith toLowerCase toUpperCase localeCompare charAt charCodeAt "
    "substring repeat replaceAll matchAll".split()
)
"""Methods and properties of JavaScript's Array, String, Map, Set and Promise (``messages.push``,
``seen.has``, ``items.length``)."""
DB_API = frozenset(
    "commit rollback execute executemany executescript fetchone fetchall fetchmany lastrowid rowcount".split()
)
"""The database API's methods and attributes (Python's PEP 249, as ``sqlite3`` has them:
``database.rollback``, ``cur.fetchone``)."""
KNOWN_METHODS = _public(str, bytes, list, dict, set, tuple, pathlib.Path) | JS_METHODS | TEST_API | DB_API
"""Methods of Python's builtin types and of ``pathlib.Path`` (``strip``, ``get``, ``read_text``), of
JavaScript's builtin types (:data:`JS_METHODS`), Jest's matchers (:data:`TEST_API`) and the database
API (:data:`DB_API`): ``line.strip``, ``result.get``, ``record.push``, ``expect(x).not.toBeNull`` or
``conn.commit`` names a general method, not the session's own code."""


@dataclass(frozen=True)
class Facts:
    """What one entry says (see the module docstring). What needs only a glance (role, file tool
    calls, commands, error lines, instructions) is read at once; the paths and identifiers of the
    whole text, and the normalised text, on first use (:attr:`paths`, :attr:`idents`, :attr:`text`):
    scoring asks a tool output for them only when a needed item may be in it (:meth:`has_ident`)."""

    role: str
    """user, assistant, toolResult, bash (a ``!`` command) or other."""
    touches: tuple[tuple[str, str], ...] = ()
    """(path, op) per file tool call or file named in a bash command; op read/write/edit/bash."""
    errors: tuple[str, ...] = ()
    """Error lines, normalised (:func:`norm`)."""
    instructions: tuple[str, ...] = ()
    commands: tuple[tuple[str, str], ...] = ()
    """(tool call id, normalised command) of each bash tool call."""
    failed: bool = False
    """A tool result marked as an error (or a ``!`` command with a non-zero exit)."""
    call_id: str = ""
    """A tool result's ``toolCallId``."""
    source: str = field(default="", repr=False, compare=False)
    """The text read (its first :data:`MAX_CHARS`, a tool output's first :data:`MAX_OUTPUT_CHARS`)."""
    source_limit: int = field(default=MAX_CHARS, repr=False, compare=False)
    """Characters of :attr:`source` kept in :attr:`text`."""

    @cached_property
    def paths(self) -> frozenset[str]:
        """Every ``/``-suffix of every path mentioned (``a/b/c.py``, ``b/c.py``, ``c.py``)."""
        return _scan(self.source)[0]

    @cached_property
    def idents(self) -> frozenset[str]:
        """The identifiers the text mentions (:func:`identifiers_in`)."""
        return _scan(self.source)[1]

    @cached_property
    def text(self) -> str:
        """The entry's text, normalised and lower-cased (for phrase look-ups)."""
        return norm_lower(self.source[: self.source_limit])

    def tokens(self) -> tuple[frozenset[str], frozenset[str]]:
        """:attr:`paths` and :attr:`idents` at once, read as those are (one pass, kept as them)."""
        d = self.__dict__
        if "paths" not in d or "idents" not in d:
            d["paths"], d["idents"] = _scan(self.source)
        return d["paths"], d["idents"]

    @property
    def deep(self) -> bool:
        """Have every token's paths and identifiers been read?"""
        return "idents" in self.__dict__ and "paths" in self.__dict__

    def has_ident(self, name: str) -> bool:
        """Is ``name`` one of :attr:`idents`? (Without reading every token: :func:`find_ident`.)"""
        if "idents" in self.__dict__:
            return name in self.idents
        return find_ident(self.source, name) >= 0


def norm(text: str) -> str:
    return " ".join(text.split())


_SEPARATORS = re.compile("[\x1c-\x1f]")
"""ASCII characters ``str.split`` takes for whitespace and ``bytes.split`` does not."""


def norm_lower(text: str) -> str:
    """``norm(text).lower()``; an ASCII text through bytes (``str.lower`` is ten times as slow)."""
    if text.isascii() and _SEPARATORS.search(text) is None:
        return b" ".join(text.encode("ascii").lower().split()).decode("ascii")
    return norm(text).lower()


@lru_cache(maxsize=4096)
def words(text: str) -> frozenset[str]:
    """Content words, lower-cased, a final ``s`` dropped (the heuristics' bag of words)."""
    return _words(text)


def _words(text: str) -> frozenset[str]:
    out = set()
    for w in _words_raw(text):
        w = w.lower().strip("'-")
        if len(w) >= 3 and w not in STOPWORDS:
            out.add(w[:-1] if w.endswith("s") and len(w) > 3 else w)
    return frozenset(out)


_WORD_BYTES = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_'-")
_WORD_TABLE = bytes(c if c in _WORD_BYTES else 0x20 for c in range(256))


def _words_raw(text: str) -> set[str]:
    """The distinct :data:`_WORD` matches of ``text``, found without the pattern: the text's UTF-8
    is cut into runs of the pattern's (ASCII) characters by a byte table (C speed; every other
    character ends a run), and a run's match is the run from its first letter on, when that is 3
    characters or more (each run holds at most one)."""
    out = set()
    for run in set(text.encode("utf-8", "surrogatepass").translate(_WORD_TABLE).split()):
        w = run.lstrip(b"0123456789_'-")
        if len(w) >= 3:
            out.add(w.decode("ascii"))
    return out


@lru_cache(maxsize=1 << 16)
def _suffixes(path: str) -> frozenset[str]:
    p = path.strip().rstrip("/")
    parts = [x for x in p.split("/") if x and x != "."]
    return frozenset({"/".join(parts[i:]) for i in range(len(parts))} | ({p} if p else set()))


def path_suffixes(path: str) -> frozenset[str]:
    """``a/b/c.py`` → {``a/b/c.py``, ``b/c.py``, ``c.py``} (a leading ``./`` or ``/`` aside)."""
    return _suffixes(path)


def _is_file_like(token: str) -> bool:
    """A last component ``name.ext`` with a known extension and a name (``*.py`` is a pattern)."""
    stem, dot, ext = token.rstrip("/").rsplit("/", 1)[-1].rpartition(".")
    return bool(dot) and ext.lower() in EXTENSIONS and any(ch.isalnum() for ch in stem)


def _tokens(text: str) -> set[str]:
    """The distinct runs of path/identifier characters of ``text`` (one fast pass; the rules then
    look at each distinct token once, and each distinct token is judged once per process)."""
    return set(_TOKEN.findall(text))


@lru_cache(maxsize=1 << 17)
def _token_paths(raw: str) -> frozenset[str]:
    tok = raw.rstrip("(").rstrip(".,;:@+-~")
    if tok.startswith("//") or not tok or (("/" not in tok) and not _is_file_like(tok)):
        return frozenset()
    if "/" in tok and not any(c.isalnum() for c in tok.replace("/", "")):
        return frozenset()
    return _suffixes(tok)


def paths_in(text: str, tokens: set[str] | None = None) -> set[str]:
    """Every path mentioned in ``text``, each with its suffixes."""
    out: set[str] = set()
    for raw in _tokens(text) if tokens is None else tokens:
        if "/" in raw or "." in raw:
            out |= _token_paths(raw)
    return out


def _special(tok: str) -> bool:
    """Python's special names (``__init__``, ``__all__``): known to any model."""
    return tok.startswith("__") and tok.endswith("__")


def _known(tok: str) -> bool:
    """A name any model knows without the session (:data:`KNOWN_NAMES`, :data:`KNOWN_METHODS`,
    :data:`KNOWN_MODULES`, Python's special names)."""
    return tok in KNOWN_NAMES or tok in KNOWN_METHODS or tok in KNOWN_MODULES or _special(tok)


def _ident_ok(tok: str) -> bool:
    if len(tok) < 4 or tok in BRANDS or tok[0].isdigit() or tok in KNOWN_NAMES or tok in KNOWN_MODULES:
        return False
    if "." in tok:
        parts = tok.split(".")
        if parts[-1].lower() in EXTENSIONS or any(len(p) < 2 or p[0].isdigit() for p in parts):
            return False
        return parts[0] not in KNOWN_MODULES and parts[-1] not in KNOWN_METHODS
    if _known(tok):
        return False
    if "_" in tok.strip("_"):
        return any(c.isalpha() for c in tok)
    return bool(_HUMP.search(tok)) and not tok.isupper()


@lru_cache(maxsize=1 << 17)
def _token_idents(raw: str) -> tuple[str, ...]:
    call = raw.endswith("(")
    out = []
    for part in _IDENT_SPLIT.split(raw.rstrip("(")):
        tok = part.strip(".").removesuffix("()")
        head, dot, rest = tok.partition(".")
        if dot and head in ("this", "self", "cls"):  # an attribute: its name, not the receiver
            tok = rest
        if _ident_ok(tok) or (
            call
            and len(tok) >= 4
            and tok.isidentifier()
            and not tok.istitle()
            and not tok.isalpha()
            and not _known(tok)
        ):
            out.append(tok)
        elif (recv := _receiver(tok)) is not None:
            out.append(recv)
    return tuple(out)


def _receiver(tok: str) -> str | None:
    """The object a general method is called on, when it is an identifier of its own:
    ``sidecar.activeSessions.has`` names ``sidecar.activeSessions``, ``seen_ids.add`` names
    ``seen_ids`` (``messages.push``, ``line.strip``, ``os.path.join``: none)."""
    recv, dot, method = tok.rpartition(".")
    return recv if dot and method in KNOWN_METHODS and _ident_ok(recv) else None


def identifiers_in(text: str, tokens: set[str] | None = None) -> set[str]:
    """Code-shaped tokens of ``text`` (see the module docstring)."""
    out: set[str] = set()
    for raw in _tokens(text) if tokens is None else tokens:
        if (
            "/" in raw
            or len(raw) < 4
            or (raw.isalpha() and (raw.islower() or raw.isupper() or raw.istitle()))
        ):
            continue  # a path, too short, or a plain word
        out.update(_token_idents(raw))
    return out


_TOKEN_ASCII = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./~@+-")


def _token_at(text: str, p: int) -> str:
    """The :data:`_TOKEN` match of ``text`` that holds the token character at ``p`` (the run of token
    characters around it, with the ``(`` that follows it): the token ``findall`` yields there."""
    a = p
    while a > 0 and ((c := text[a - 1]) in _TOKEN_ASCII or (c > "\x7f" and c.isalnum())):
        a -= 1
    m = _TOKEN.match(text, a)
    return m.group() if m is not None else ""


def _names_ident(raw: str, name: str) -> bool:
    """Does token ``raw`` give identifier ``name`` (:func:`identifiers_in` on that one token)?"""
    if "/" in raw or len(raw) < 4 or (raw.isalpha() and (raw.islower() or raw.isupper() or raw.istitle())):
        return False
    return name in _token_idents(raw)


def ident_at(text: str, p: int, name: str) -> bool:
    """Is the occurrence of ``name`` at ``p`` in ``text`` a mention of identifier ``name``, as
    :func:`identifiers_in` reads the token that holds it?"""
    return _names_ident(_token_at(text, p), name)


def path_at(text: str, p: int, names: frozenset[str] | set[str]) -> bool:
    """Does the token of ``text`` that holds position ``p`` mention one of the paths ``names`` (or
    their suffixes) as :func:`paths_in` reads it?"""
    raw = _token_at(text, p)
    return ("/" in raw or "." in raw) and not names.isdisjoint(_token_paths(raw))


def find_ident(text: str, name: str, start: int = 0, end: int | None = None) -> int:
    """Where ``text`` (between ``start`` and ``end``) first mentions identifier ``name`` as
    :func:`identifiers_in` reads it, or -1: only the tokens around the occurrences of ``name`` are
    looked at (an identifier is a part of one token), not every token of the text."""
    end = len(text) if end is None else end
    while (p := text.find(name, start, end)) >= 0:
        if _names_ident(_token_at(text, p), name):
            return p
        start = p + 1
    return -1


def rfind_ident(text: str, name: str, start: int = 0, end: int | None = None) -> int:
    """:func:`find_ident` from the end: where ``text`` last mentions identifier ``name``, or -1 (a
    name used now was most often shown shortly before)."""
    end = len(text) if end is None else end
    while (p := text.rfind(name, start, end)) >= 0:
        if _names_ident(_token_at(text, p), name):
            return p
        end = p + len(name) - 1
    return -1


def find_path(text: str, name: str, names: frozenset[str] | set[str] | None = None) -> int:
    """Where ``text`` first mentions ``name`` — or, given ``names`` (each holding ``name``), one of
    them — as one of the paths (or their suffixes) :func:`paths_in` reads, or -1 (the same shortcut
    as :func:`find_ident`)."""
    names = {name} if names is None else names
    start = 0
    while (p := text.find(name, start)) >= 0:
        if path_at(text, p, names):
            return p
        start = p + 1
    return -1


def errors_in(text: str, failed: bool) -> tuple[str, ...]:
    """Up to three distinct error lines of a tool output (its first line when it failed without one,
    the agents' status lines aside: :data:`_STATUS`).
    Only the lines holding an error word are matched against the full pattern."""
    out: list[str] = []
    for hint in _hint_lines(text):
        if len(out) == 3:
            break
        m = _ERROR_LINE.match(hint)
        if m is None or m.end() != len(hint):
            continue
        line = _PYTEST_E.sub("", norm(m.group(0)))[:200]
        if line and line not in out and len(line) >= 8:
            out.append(line)
    if not out and failed:
        first = next((norm(x) for x in text[:4000].splitlines() if x.strip() and not _STATUS.match(x)), "")
        if first:
            out.append(first[:200])
    return tuple(out)


_STATUS = re.compile(
    r"\s*(?:\(no output\)|(?:Command|Process) exited with code -?\d+|Exit code: -?\d+|Chunk ID: \S+|"
    r"Wall time: [\d.]+ seconds|Original token count: \d+|Output:)\s*$"
)
"""Lines the agents' shell tools write around a command's output, which name no error: pi's and
OpenCode's ``(no output)``, pi's ``Command exited with code 1``, the header of Codex's
``exec_command`` output (``Chunk ID``, ``Wall time``, ``Process exited with code``, ``Original
token count``, ``Output:``). A failed call's first line other than these stands for its error (two
failures with no output are not one error seen again)."""


def _hint_lines(text: str) -> list[str]:
    """The first lines holding an error word, in order, found in the text's UTF-8 lower-cased as
    bytes (much faster than a case-insensitive alternation, or than ``str.lower``). Lower-casing
    only ASCII letters finds what ``str.lower`` would: the only other characters whose lower case
    holds an ASCII letter are the Kelvin sign (``k``, in no error word) and ``İ`` (``i̇``; a text
    with one goes through :func:`_lines_with`)."""
    if "\u0130" in text:
        return _lines_with(text)
    raw = text.encode("utf-8", "surrogatepass")
    low = raw.lower()
    lines = _hint_spans(low)[:MAX_ERROR_LINES]
    if len(raw) == len(text):  # ASCII: byte offsets are character offsets
        return [text[a:e] for a, e in lines]
    return [raw[a:e].decode("utf-8", "surrogatepass") for a, e in lines]


def _hint_spans(low: bytes) -> list[tuple[int, int]]:
    """(start, end) of the lines of ``low`` that hold an error word, in order: one scan for all the
    words (:data:`_ERROR_WORDS_SCAN`; a match holds no newline, so each such line holds one). Past
    ``4 * MAX_ERROR_LINES`` lines, those one ``bytes.find`` loop per word gathers before it stops
    there (:func:`_hint_spans_per_word`)."""
    found: list[tuple[int, int]] = []
    n, e = len(low), -1
    for _, i, _ in _ERROR_WORDS_SCAN.find_matches_as_indexes(low):
        if i < e:  # in the line just found
            continue
        e = low.find(b"\n", i)
        e = n if e < 0 else e
        found.append((low.rfind(b"\n", 0, i) + 1, e))
    return found if len(found) <= 4 * MAX_ERROR_LINES else _hint_spans_per_word(low)


def _hint_spans_per_word(low: bytes) -> list[tuple[int, int]]:
    """:func:`_hint_spans` word by word, up to ``4 * MAX_ERROR_LINES`` lines in all."""
    found: set[tuple[int, int]] = set()
    n = len(low)
    for word in _ERROR_WORDS_BYTES:
        i = low.find(word)
        while i >= 0 and len(found) < 4 * MAX_ERROR_LINES:
            a = low.rfind(b"\n", 0, i) + 1
            e = low.find(b"\n", i)
            e = n if e < 0 else e
            found.add((a, e))
            i = low.find(word, e)
    return sorted(found)


def _lines_with(text: str) -> list[str]:
    """:func:`_hint_lines` by a case-insensitive search (texts whose lower case changes length)."""
    out: list[str] = []
    pos = 0
    while len(out) < MAX_ERROR_LINES and (h := _ERROR_HINT.search(text, pos)) is not None:
        a = text.rfind("\n", 0, h.start()) + 1
        e = text.find("\n", h.end())
        e = len(text) if e < 0 else e
        out.append(text[a:e])
        pos = e + 1
    return out


_TELLING = re.compile(r"\b(?:don'?t|do not|never|always)\b", re.I)
"""The markers that are as often a statement about something ("the patterns don't cause false
negatives", "the cache never expires entries") as an instruction: they count only where they
tell someone (:func:`_tells`)."""
_CLAUSE = re.compile(r"[,;:()\u2013\u2014*]|\s-\s")
_LEAD_IN = frozenset(
    "please and but so then also just now again really should will would to shall can you i we let's lets "
    "us i'd we'd you'd i'll we'll you'll".split()
)
"""Words after which a marker tells someone (the word just before it, in its clause)."""
_PEOPLE = frozenset("i we you let's lets us".split())
"""A subject that makes a marker a choice someone makes ("we currently don't use Phoenix")."""


def _tells(sentence: str, m: re.Match[str]) -> bool:
    """Does the marker ``m`` open its clause, follow a lead-in word, or have a person for subject
    within the three words before it?"""
    clause = _CLAUSE.split(sentence[: m.start()])[-1].lower().split()
    before = [w for w in clause if any(c.isalnum() for c in w)]  # a bullet ("-", "1.") is no word
    return not before or before[-1] in _LEAD_IN or any(w in _PEOPLE for w in before[-3:])


def _instruction(sentence: str) -> bool:
    """A standing instruction or decision: a marker of :data:`_INSTRUCTION` other than
    :data:`_TELLING`'s, or one of those that tells someone."""
    for m in _INSTRUCTION.finditer(sentence):
        if _TELLING.fullmatch(m.group()) is None or _tells(sentence, m):
            return True
    return False


def instructions_in(text: str) -> tuple[str, ...]:
    """The sentences of a user message that give a standing instruction or decision; a question
    ("We don't have a staging backend?") gives none, nor a statement about something ("the
    trivial patterns don't cause false negatives": :func:`_tells`)."""
    out = []
    for s in _SENTENCE.split(text):
        s = norm(s)
        if 8 <= len(s) <= 400 and not s.endswith("?") and _instruction(s) and len(words(s)) >= 2:
            out.append(s[:240])
    return tuple(out)


def _text(content: Any, limit: int = MAX_CHARS) -> str:
    if isinstance(content, str):
        return content[:limit]
    if isinstance(content, list):
        out, n = [], 0
        for b in content:
            if isinstance(b, TextContent):
                out.append(b.text[: limit - n])
                n += len(out[-1]) + 1
                if n >= limit:
                    break
        return "\n".join(out)[:limit]
    return ""


_SCALARS = (str, int, float)


def _assistant(m: AssistantMessage) -> Facts:
    texts = [b.text for b in m.content if isinstance(b, TextContent)]
    touches: list[tuple[str, str]] = []
    commands: list[tuple[str, str]] = []
    for b in m.content:
        if not isinstance(b, ToolCall):
            continue
        args = b.arguments
        if isinstance(args, dict):
            texts.append("\n".join([str(v) for v in args.values() if isinstance(v, _SCALARS)])[:MAX_CHARS])
        else:
            texts.append(str(args)[:MAX_CHARS] if args is not None else "")
            args = {}
        name = b.name.lower()
        op = FILE_TOOLS.get(name)
        if op is not None:  # the file tools, apply_patch and the shell tools are apart
            for k in PATH_KEYS:
                if isinstance(p := args.get(k), str) and p:
                    touches.append((p, op))
                    break
        elif name == "apply_patch":
            if isinstance(patch := args.get("input"), str):
                touches.extend(
                    (f, "write" if op == "Add" else "edit")
                    for op, f in _PATCH_FILE.findall(patch[:MAX_CHARS])
                )
        elif name in SHELL_TOOLS:
            cmd = args.get("command", args.get("cmd"))
            cmd = " ".join(map(str, cmd)) if isinstance(cmd, list) else cmd
            if isinstance(cmd, str) and cmd.strip():
                commands.append((b.id, norm(cmd)))
                touches.extend((t, "bash") for t in _command_files(cmd))
    text = "\n".join(texts)[:MAX_CHARS]
    return Facts("assistant", tuple(touches), commands=tuple(commands), source=text)


def _command_files(cmd: str) -> list[str]:
    out = []
    for raw in _TOKEN.findall(cmd[:MAX_CHARS]):
        tok = raw.rstrip("(").rstrip(".,;:@+-~")
        if _is_file_like(tok) and not tok.startswith("//") and tok not in out:
            out.append(tok)
    return out


_CHUNK_BYTES = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./~@+-(")
_CHUNK_TABLE = bytes(c if c in _CHUNK_BYTES or c >= 0x80 else 0x20 for c in range(256))
"""Every ASCII byte that no token holds (nor the ``(`` a call ends with) becomes a space; every
other byte stays, those of non-ASCII characters included."""
_PLAIN: set[bytes] = set()
"""Chunks known to name no path and no identifier (most words of a text)."""
_FOUND: dict[bytes, tuple[frozenset[str], tuple[str, ...]]] = {}
"""Chunks known to name paths or identifiers, and those."""
CHUNK_MEMO = 1 << 19
"""Distinct chunks remembered per process (both memos are emptied beyond that)."""


def _chunks(text: str) -> set[bytes]:
    """The distinct runs of ``text`` between characters that no token holds: three C-level passes
    (encode, translate, split) instead of a regular expression over the whole text. Every token of
    :data:`_TOKEN` lies inside one chunk, so the tokens of the chunks are the tokens of ``text``."""
    return set(text.encode("utf-8", "surrogatepass").translate(_CHUNK_TABLE).split())


def _chunk_tokens(chunk: bytes) -> set[str]:
    """The :data:`_TOKEN` matches of one chunk: an ASCII chunk is runs of token characters joined by
    ``(``, each run before a ``(`` keeping it; any other goes through the pattern."""
    if not chunk.isascii():
        return _tokens(chunk.decode("utf-8", "surrogatepass"))
    *calls, last = chunk.decode("ascii").split("(")
    out = {c + "(" for c in calls if c}
    if last:
        out.add(last)
    return out


def _chunk_facts(chunk: bytes) -> tuple[frozenset[str], tuple[str, ...]]:
    """Paths and identifiers one chunk names (judged once per process; see :data:`_PLAIN`)."""
    hit = _FOUND.get(chunk)
    if hit is not None:
        return hit
    tokens = _chunk_tokens(chunk)
    found = (frozenset(paths_in("", tokens)), tuple(identifiers_in("", tokens)))
    if len(_PLAIN) + len(_FOUND) > CHUNK_MEMO:
        _PLAIN.clear()
        _FOUND.clear()
    if found[0] or found[1]:
        _FOUND[chunk] = found
    else:
        _PLAIN.add(chunk)
    return found


@lru_cache(maxsize=2048)
def _scan(text: str) -> tuple[frozenset[str], frozenset[str]]:
    """Paths and identifiers of ``text`` — exactly :func:`paths_in` and :func:`identifiers_in` —,
    from its distinct chunks (:func:`_chunks`: C-level passes over the whole text) less those known
    to name nothing, each chunk judged once per process. Memoised: the same output often comes
    again."""
    return _read(text)


def _read(text: str) -> tuple[frozenset[str], frozenset[str]]:
    paths: set[str] = set()
    idents: set[str] = set()
    for chunk in _chunks(text) - _PLAIN:
        p, ids = _FOUND.get(chunk) or _chunk_facts(chunk)
        if p:
            paths |= p
        if ids:
            idents.update(ids)
    return frozenset(paths), frozenset(idents)


def scan(text: str) -> tuple[frozenset[str], frozenset[str]]:
    """The paths (with their suffixes) and the identifiers ``text`` mentions: :func:`paths_in` and
    :func:`identifiers_in` at once, each run of token characters judged once per
    process (memoised)."""
    return _scan(text)


@lru_cache(maxsize=1 << 13)
def _line(line: str) -> tuple[str, frozenset[str], frozenset[str], frozenset[str]]:
    return norm_lower(line), *_read(line), _words(line)


def read_prose(text: str) -> tuple[str, frozenset[str], frozenset[str], frozenset[str]]:
    """``norm_lower(text)``, ``scan(text)`` and ``words(text)`` at once, read line by line, each
    distinct line once per process (memoised): a summary repeats most of the one before it. No
    token, word or run of whitespace spans a newline, so the lines' answers make the text's."""
    lines = text.split("\n")
    got = {x: _line(x) for x in dict.fromkeys(lines)}
    low = " ".join([n for n in (got[x][0] for x in lines) if n])
    parts = got.values()
    return (
        low,
        frozenset().union(*(g[1] for g in parts)),
        frozenset().union(*(g[2] for g in parts)),
        frozenset().union(*(g[3] for g in parts)),
    )


def facts_of(message: Any) -> Facts:
    """The :class:`Facts` of one message."""
    if isinstance(message, AssistantMessage):
        return _assistant(message)
    if isinstance(message, UserMessage):
        text = _text(message.content)
        return Facts("user", (), instructions=instructions_in(text), source=text)
    if isinstance(message, ToolResultMessage):
        text = _text(message.content, MAX_OUTPUT_CHARS)
        return Facts(
            "toolResult",
            (),
            errors_in(text, message.isError)
            if message.isError or message.toolName.lower() not in QUIET_TOOLS
            else (),
            failed=message.isError,
            call_id=message.toolCallId,
            source=text,
            source_limit=TEXT_CHARS,
        )
    if isinstance(message, BashExecutionMessage):
        text = f"{message.command}\n{message.output}"[:MAX_OUTPUT_CHARS]
        failed = message.exitCode not in (0, None)
        return Facts(
            "bash",
            (),
            errors_in(message.output[:MAX_CHARS], failed),
            failed=failed,
            source=text,
            source_limit=TEXT_CHARS,
        )
    content = getattr(message, "content", None)
    text = _text(content)
    return Facts("other", source=text)


_MEMO: weakref.WeakKeyDictionary[Any, list[Facts | None]] = weakref.WeakKeyDictionary()
_EMPTY = Facts("other")


def facts_for(session: Any, indexes: Iterable[int] | None = None, deep: bool = False) -> list[Facts]:
    """The :class:`Facts` of every entry of ``session``, indexed by entry: read for ``indexes``
    (default: every entry) if not yet, memoised per session object. One pass; the entries not
    read yet hold a placeholder (read them through this function or :func:`entry_facts`).
    ``deep``: read every token of those entries too (their :attr:`Facts.paths` and
    :attr:`Facts.idents`; the app does it in the background), so that scoring compares sets instead
    of searching texts."""
    memo = _MEMO.get(session)
    if memo is None:
        memo = [None] * len(session.entries)
        _MEMO[session] = memo
    entries = session.entries
    with gc_paused():  # many small acyclic objects (:mod:`inspector.gcpause`)
        for i in range(len(entries)) if indexes is None else indexes:
            f = memo[i]
            if f is None:
                e = entries[i]
                f = memo[i] = facts_of(e.message) if isinstance(e, MessageEntry) else _EMPTY
            if deep and not f.deep:
                f.tokens()
    return memo  # type: ignore[return-value]  # the entries asked for are read


def entry_facts(session: Any, index: int) -> Facts:
    """The :class:`Facts` of session entry ``index`` (memoised per session object)."""
    return facts_for(session, (index,))[index]


def facts_ready(session: Any) -> bool:
    """Has every entry of ``session`` been read, every token included (``facts_for(session,
    deep=True)``: scoring is then quick)?"""
    memo = _MEMO.get(session)
    return memo is not None and all(f is not None and f.deep for f in memo)


def forget() -> None:
    """Empty the per-process memos (texts, chunks and tokens already judged): benchmarks
    measure a cold start with it; the per-session facts go with their session."""
    for memo in (_PLAIN, _FOUND):
        memo.clear()
    for fn in (_scan, _token_paths, _token_idents, _suffixes, words, _line, *_OTHER_MEMOS):
        fn.cache_clear()


_OTHER_MEMOS: list[Any] = []
"""Other modules' per-process memos (``lru_cache`` functions) that :func:`forget` empties too."""


def per_process(fn: Any) -> Any:
    """Register ``fn`` (an ``lru_cache`` function of another module of this package) with :func:`forget`."""
    _OTHER_MEMOS.append(fn)
    return fn
