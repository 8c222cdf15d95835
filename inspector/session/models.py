"""Pydantic models of pi's session format (JSONL, version 3).

The models mirror pi's own TypeScript interfaces (``SessionHeader``, ``SessionEntry`` and
``AgentMessage`` in ``@mariozechner/pi-coding-agent``/``pi-ai``) field for field, with pi's
camelCase names, so a model dumps back to the JSON pi wrote. Every model is frozen and keeps
unknown fields (``extra="allow"``): nothing in a session is dropped on the way through.

Anything we do not recognise stays too: an entry ``type`` we don't know becomes an
:class:`OpaqueEntry`, a message ``role`` an :class:`OpaqueMessage`, a content block ``type`` an
:class:`OpaqueBlock`, each with all of its raw fields.

Defaults are lenient where pi's code is lenient (a missing ``usage`` counts as no usage, a
missing ``isError`` is false); a value of the wrong JSON type fails validation and the loader
keeps that entry as an :class:`OpaqueEntry` with a located load issue.
"""

from __future__ import annotations

from collections.abc import Callable
from operator import attrgetter
from typing import Annotated, Any, Literal, get_args

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    SerializerFunctionWrapHandler,
    Tag,
    model_serializer,
)
from pydantic_core import PydanticSerializationError

_DISCRIMINATORS = ("type", "role")


_FIELD_SETS: dict[frozenset[str], set[str]] = {}
_NO_EXTRA: dict[str, Any] = {}
_STRINGS: dict[str, str] = {}
_REPEATED_NAMES = frozenset(
    {
        "api",
        "provider",
        "model",
        "stopReason",
        "toolName",
        "name",
        "customType",
        "thinkingLevel",
        "modelId",
        "cwd",
        "mimeType",
    }
)
_REPEATED: dict[type, tuple[str, ...]] = {}


def _repeated_fields(cls: type) -> tuple[str, ...]:
    """The fields of ``cls`` whose values repeat across a session (shared, not copied); an
    empty result is cached as ``("",)`` so the lookup above stays one dict access."""
    names = tuple(k for k in cls.model_fields if k in _REPEATED_NAMES) or ("",)  # type: ignore[attr-defined]
    _REPEATED[cls] = names
    return names


class _Model(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)

    def model_post_init(self, context: Any, /) -> None:
        # Frozen models never change their set of given fields, and a session holds tens of
        # thousands of models with a handful of distinct sets: share one set object per shape
        # (~15% of a loaded session's memory). ``model_copy`` makes a new set, as before.
        fs = self.__pydantic_fields_set__
        key = frozenset(fs)
        shared = _FIELD_SETS.get(key)
        if shared is None:
            if len(_FIELD_SETS) < 10_000:
                _FIELD_SETS[key] = fs
        else:
            object.__setattr__(self, "__pydantic_fields_set__", shared)
        # No extra fields (the usual case): one shared empty dict instead of one per model (a
        # frozen model never adds extras; model_copy copies the dict). Names that repeat on
        # every line (provider, model, tool name, …) share one string object.
        if not self.__pydantic_extra__ and self.__pydantic_extra__ is not None:
            object.__setattr__(self, "__pydantic_extra__", _NO_EXTRA)
        d = self.__dict__
        for k in _REPEATED.get(type(self)) or _repeated_fields(type(self)):
            v = d.get(k)
            if type(v) is str and len(v) <= 64:
                d[k] = _STRINGS.setdefault(v, v) if len(_STRINGS) < 100_000 else v

    @model_serializer(mode="wrap")
    def _keep_discriminator(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # A discriminator left at its default (a message built in memory) still belongs in
        # the JSON, even when dumping with ``exclude_unset``.
        d = handler(self)
        fields = type(self).model_fields
        for k in _DISCRIMINATORS:
            if k in fields and k not in d:
                d = {k: getattr(self, k), **d}
        return d

    def raw(self, *, fresh: bool = False) -> dict[str, Any]:
        """The JSON object this model stands for (fields as pi names them, unset ones left out).
        ``fresh``: the model came straight from validation (never stored compactly), so pydantic
        may read it as it is, without a throwaway twin."""
        try:
            return (self if fresh else _twin(self)).model_dump(mode="json", exclude_unset=True, by_alias=True)
        except (PydanticSerializationError, RecursionError):
            # pydantic's serializer stops at a fixed depth; values nested deeper (tool arguments
            # thousands of levels deep, which pi reads and writes) are plain JSON data already.
            return _raw_deep(self)


def _twin(m: _Model) -> _Model:
    """A throwaway copy of ``m`` (and the models in it) for pydantic's serializer, which reads
    ``__dict__``: reading it from a loaded model would give that model a dictionary for good
    (:mod:`inspector.session.compact` stores loaded models without one)."""
    cls = type(m)
    names, get, nested = _TWIN.get(cls) or _twin_plan(cls)
    d = dict(zip(names, get(m), strict=True))
    for k in nested:
        v = d[k]
        if isinstance(v, _Model):
            d[k] = _twin(v)
        elif type(v) is list and v and isinstance(v[0], _Model):
            d[k] = [_twin(x) if isinstance(x, _Model) else x for x in v]
    t = object.__new__(cls)
    object.__setattr__(t, "__dict__", d)
    object.__setattr__(t, "__pydantic_fields_set__", m.__pydantic_fields_set__)
    object.__setattr__(t, "__pydantic_extra__", m.__pydantic_extra__)
    object.__setattr__(t, "__pydantic_private__", m.__pydantic_private__)
    return t


_TWIN: dict[type, tuple[tuple[str, ...], Callable[[Any], tuple[Any, ...]], tuple[str, ...]]] = {}


def _twin_plan(
    cls: type[_Model],
) -> tuple[tuple[str, ...], Callable[[Any], tuple[Any, ...]], tuple[str, ...]]:
    """Per model class: its field names, one getter for all of them, and the fields whose declared
    type holds models (``message``, ``content``, ``usage``)."""
    names = tuple(cls.model_fields)
    getter = attrgetter(*names)
    get = getter if len(names) > 1 else (lambda o: (getter(o),))
    nested = tuple(k for k, f in cls.model_fields.items() if _holds_model(f.annotation))
    plan = (names, get, nested)
    _TWIN[cls] = plan
    return plan


def _holds_model(annotation: Any) -> bool:
    if isinstance(annotation, type) and issubclass(annotation, _Model):
        return True
    return any(_holds_model(a) for a in get_args(annotation))


def _raw_deep(m: _Model) -> dict[str, Any]:
    fields = type(m).model_fields
    d: dict[str, Any] = {}
    for k in _DISCRIMINATORS:
        if k in fields and k not in m.model_fields_set:
            d[k] = getattr(m, k)
    for name, f in fields.items():  # declaration order, then extras: model_dump's order
        if name in m.model_fields_set:
            d[f.alias or name] = _plain(getattr(m, name))
    for k, v in (m.__pydantic_extra__ or {}).items():
        d[k] = _plain(v)
    return d


def _plain(v: Any) -> Any:
    if isinstance(v, _Model):
        return v.raw()
    if isinstance(v, (list, tuple)) and any(isinstance(x, _Model) for x in v):
        return [_plain(x) for x in v]
    return v


# ---------------------------------------------------------------------------------------------
# Content blocks (pi-ai: TextContent, ThinkingContent, ImageContent, ToolCall)
# ---------------------------------------------------------------------------------------------


class TextContent(_Model):
    type: Literal["text"] = "text"
    text: str = ""


class ThinkingContent(_Model):
    type: Literal["thinking"] = "thinking"
    thinking: str = ""


class ImageContent(_Model):
    type: Literal["image"] = "image"
    data: str = ""
    mimeType: str = ""


class ToolCall(_Model):
    type: Literal["toolCall"] = "toolCall"
    id: str = ""
    name: str = ""
    # Kept exactly as parsed (key order, ints vs floats): pi measures JSON.stringify(arguments).
    arguments: Any = Field(default_factory=dict)


class OpaqueBlock(_Model):
    """A content block of a type pi's estimators ignore (kept with all its fields)."""

    type: Any = None


_BLOCK_TAGS = {"text", "thinking", "image", "toolCall"}


def _block_tag(v: Any) -> str:
    t = v.get("type") if isinstance(v, dict) else getattr(v, "type", None)
    return t if isinstance(t, str) and t in _BLOCK_TAGS else "opaque"


ContentBlock = Annotated[
    Annotated[TextContent, Tag("text")]
    | Annotated[ThinkingContent, Tag("thinking")]
    | Annotated[ImageContent, Tag("image")]
    | Annotated[ToolCall, Tag("toolCall")]
    | Annotated[OpaqueBlock, Tag("opaque")],
    Discriminator(_block_tag),
]

# ---------------------------------------------------------------------------------------------
# Messages (AgentMessage: pi-ai Message + coding-agent's own roles)
# ---------------------------------------------------------------------------------------------


class Usage(_Model):
    input: int | float = 0
    output: int | float = 0
    cacheRead: int | float = 0
    cacheWrite: int | float = 0
    totalTokens: int | float = 0
    cost: dict[str, Any] | None = None


class UserMessage(_Model):
    role: Literal["user"] = "user"
    content: str | list[ContentBlock] = ""
    timestamp: Any = None


class AssistantMessage(_Model):
    role: Literal["assistant"] = "assistant"
    content: list[ContentBlock] = Field(default_factory=list)
    api: str | None = None
    provider: str | None = None
    model: str | None = None
    usage: Usage | None = None
    stopReason: str | None = None
    errorMessage: str | None = None
    timestamp: Any = None


class ToolResultMessage(_Model):
    role: Literal["toolResult"] = "toolResult"
    toolCallId: str = ""
    toolName: str = ""
    content: str | list[ContentBlock] = Field(default_factory=list)
    details: Any = None
    isError: bool = False
    timestamp: Any = None


class BashExecutionMessage(_Model):
    role: Literal["bashExecution"] = "bashExecution"
    command: str = ""
    output: str = ""
    exitCode: int | None = None
    cancelled: bool = False
    truncated: bool = False
    fullOutputPath: str | None = None
    excludeFromContext: bool = False
    timestamp: Any = None


class CustomMessage(_Model):
    role: Literal["custom"] = "custom"
    customType: str = ""
    content: str | list[ContentBlock] = ""
    display: bool = True
    details: Any = None
    timestamp: Any = None


class BranchSummaryMessage(_Model):
    role: Literal["branchSummary"] = "branchSummary"
    summary: str = ""
    fromId: str | None = None
    timestamp: Any = None


class CompactionSummaryMessage(_Model):
    role: Literal["compactionSummary"] = "compactionSummary"
    summary: str = ""
    tokensBefore: int | float = 0
    timestamp: Any = None


class OpaqueMessage(_Model):
    """A message role pi does not send to the model (``convertToLlm`` drops it; 0 tokens)."""

    role: Any = None


_ROLE_TAGS = {
    "user",
    "assistant",
    "toolResult",
    "bashExecution",
    "custom",
    "branchSummary",
    "compactionSummary",
}


def _role_tag(v: Any) -> str:
    r = v.get("role") if isinstance(v, dict) else getattr(v, "role", None)
    return r if isinstance(r, str) and r in _ROLE_TAGS else "opaque"


Message = Annotated[
    Annotated[UserMessage, Tag("user")]
    | Annotated[AssistantMessage, Tag("assistant")]
    | Annotated[ToolResultMessage, Tag("toolResult")]
    | Annotated[BashExecutionMessage, Tag("bashExecution")]
    | Annotated[CustomMessage, Tag("custom")]
    | Annotated[BranchSummaryMessage, Tag("branchSummary")]
    | Annotated[CompactionSummaryMessage, Tag("compactionSummary")]
    | Annotated[OpaqueMessage, Tag("opaque")],
    Discriminator(_role_tag),
]

AnyMessage = (
    UserMessage
    | AssistantMessage
    | ToolResultMessage
    | BashExecutionMessage
    | CustomMessage
    | BranchSummaryMessage
    | CompactionSummaryMessage
    | OpaqueMessage
)

# ---------------------------------------------------------------------------------------------
# Header and entries (SessionHeader, SessionEntry)
# ---------------------------------------------------------------------------------------------


class SessionHeader(_Model):
    type: Literal["session"] = "session"
    version: int | None = None
    id: str
    timestamp: str | None = None
    cwd: str | None = None
    parentSession: str | None = None


class _EntryBase(_Model):
    id: str
    parentId: str | None = None
    timestamp: str | None = None


class MessageEntry(_EntryBase):
    type: Literal["message"] = "message"
    message: Message


class ThinkingLevelChangeEntry(_EntryBase):
    type: Literal["thinking_level_change"] = "thinking_level_change"
    thinkingLevel: str | None = None


class ModelChangeEntry(_EntryBase):
    type: Literal["model_change"] = "model_change"
    provider: str | None = None
    modelId: str | None = None


class CompactionEntry(_EntryBase):
    type: Literal["compaction"] = "compaction"
    summary: str = ""
    firstKeptEntryId: str | None = None
    tokensBefore: int | float = 0
    details: Any = None
    fromHook: bool = False


class BranchSummaryEntry(_EntryBase):
    type: Literal["branch_summary"] = "branch_summary"
    fromId: str | None = None
    summary: str = ""
    details: Any = None
    fromHook: bool = False


class CustomEntry(_EntryBase):
    type: Literal["custom"] = "custom"
    customType: str | None = None
    data: Any = None


class CustomMessageEntry(_EntryBase):
    type: Literal["custom_message"] = "custom_message"
    customType: str = ""
    content: str | list[ContentBlock] = ""
    display: bool = True
    details: Any = None


class LabelEntry(_EntryBase):
    type: Literal["label"] = "label"
    targetId: str | None = None
    label: str | None = None


class SessionInfoEntry(_EntryBase):
    type: Literal["session_info"] = "session_info"
    name: str | None = None


class OpaqueEntry(_Model):
    """An entry we keep but do not interpret: an unknown ``type``, or a known one that failed
    validation. ``id``/``parentId`` still place it in the tree, as they do in pi."""

    type: Any = None
    id: Any = None
    parentId: Any = None
    timestamp: Any = None


_ENTRY_TAGS = {
    "message",
    "thinking_level_change",
    "model_change",
    "compaction",
    "branch_summary",
    "custom",
    "custom_message",
    "label",
    "session_info",
}


def _entry_tag(v: Any) -> str:
    t = v.get("type") if isinstance(v, dict) else getattr(v, "type", None)
    return t if isinstance(t, str) and t in _ENTRY_TAGS else "opaque"


Entry = Annotated[
    Annotated[MessageEntry, Tag("message")]
    | Annotated[ThinkingLevelChangeEntry, Tag("thinking_level_change")]
    | Annotated[ModelChangeEntry, Tag("model_change")]
    | Annotated[CompactionEntry, Tag("compaction")]
    | Annotated[BranchSummaryEntry, Tag("branch_summary")]
    | Annotated[CustomEntry, Tag("custom")]
    | Annotated[CustomMessageEntry, Tag("custom_message")]
    | Annotated[LabelEntry, Tag("label")]
    | Annotated[SessionInfoEntry, Tag("session_info")]
    | Annotated[OpaqueEntry, Tag("opaque")],
    Discriminator(_entry_tag),
]

AnyEntry = (
    MessageEntry
    | ThinkingLevelChangeEntry
    | ModelChangeEntry
    | CompactionEntry
    | BranchSummaryEntry
    | CustomEntry
    | CustomMessageEntry
    | LabelEntry
    | SessionInfoEntry
    | OpaqueEntry
)

ENTRY_TYPES: tuple[str, ...] = tuple(sorted(_ENTRY_TAGS))
MESSAGE_ROLES: tuple[str, ...] = tuple(sorted(_ROLE_TAGS))
