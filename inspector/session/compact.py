"""Loaded models in less memory: field values stored in the object, short texts shared.

A pydantic model keeps its fields in a per-object ``__dict__`` (a dictionary of its own: about
190–270 bytes for the five to nine fields of pi's entries and messages). CPython can store an
object's attributes without a dictionary, in a small array indexed by keys its class shares
("inline values", Python ≥ 3.11), but only if no dictionary was ever given to the object — and
pydantic always gives one. :func:`compact` therefore rebuilds a validated model, and the models
inside it, as objects of the same class with the same field values, fields set and extras, whose
values are set one by one and so stored inline: about half the memory per model (a 2,000,000-entry
flood of tiny entries loads in roughly half the model memory; see ``bench/scale.py``).

Nothing else changes: the objects are instances of the same classes, attribute access, ``raw()``,
``model_dump``, equality, hashing and ``model_copy`` work as before (pydantic reads ``__dict__``
for some of these, and CPython then builds the dictionary for that object on first use).

A :class:`Compactor` also shares strings that repeat across a session without being names: short
texts (``"ok"``, ``"x = 1"``, an empty output) and a tool call's id with its result's
``toolCallId``. It is made per load, so nothing outlives the session it was made for.
"""

from __future__ import annotations

from typing import Any

from .models import (
    AssistantMessage,
    BashExecutionMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    CustomMessage,
    MessageEntry,
    ToolCall,
    ToolResultMessage,
    UserMessage,
    _Model,
)

_set = object.__setattr__
_new = object.__new__

SHORT_TEXT = 32
"""Texts at most this long are shared (they repeat: acknowledgements, tiny outputs)."""
_TEXT_FIELDS = frozenset({"text", "content", "output", "thinking", "command", "summary"})
_MAX_SHARED = 100_000
_MAX_PENDING = 4096


class Compactor:
    """Rebuilds models with inline field values; shares short texts and tool-call ids."""

    def __init__(self) -> None:
        self._texts: dict[str, str] = {}
        self._calls: dict[str, str] = {}  # tool-call ids seen, awaiting their result

    def __call__(self, m: Any) -> Any:
        """``m`` rebuilt in compact form (anything that is not one of our models: unchanged)."""
        if not isinstance(m, _Model):
            return m
        return self._model(m)

    def _model(self, m: _Model) -> _Model:
        cls = type(m)
        new = _new(cls)
        texts = self._texts
        for k, v in m.__dict__.items():
            t = type(v)
            if t is str:
                if k in _TEXT_FIELDS and len(v) <= SHORT_TEXT:
                    v = texts.get(v) or self._share(v)
            elif t is list:
                if v and isinstance(v[0], _Model):
                    v = [self._model(x) if isinstance(x, _Model) else x for x in v]
            elif isinstance(v, _Model):
                v = self._model(v)
            _set(new, k, v)
        _set(new, "__pydantic_fields_set__", m.__pydantic_fields_set__)
        _set(new, "__pydantic_extra__", m.__pydantic_extra__)
        _set(new, "__pydantic_private__", m.__pydantic_private__)
        if cls is ToolCall or cls is ToolResultMessage:
            self._pair(new)
        return new

    def _share(self, v: str) -> str:
        if len(self._texts) < _MAX_SHARED:
            self._texts[v] = v
        return v

    def _pair(self, m: Any) -> None:
        """A tool call's id and its result's ``toolCallId``: one string object."""
        calls = self._calls
        if type(m) is ToolCall:
            if type(m.id) is str and m.id:
                if len(calls) >= _MAX_PENDING:
                    calls.clear()  # results that never came: forget them
                calls[m.id] = m.id
        else:
            cid = calls.pop(m.toolCallId, None) if type(m.toolCallId) is str else None
            if cid is not None:
                _set(m, "toolCallId", cid)


def compact(m: Any) -> Any:
    """One model rebuilt in compact form (a fresh :class:`Compactor`: no sharing across calls)."""
    return Compactor()(m)


_STAND_INS: dict[type, Any] = {
    cls: cls.model_construct()
    for cls in (
        UserMessage,
        AssistantMessage,
        ToolResultMessage,
        BashExecutionMessage,
        CustomMessage,
        BranchSummaryMessage,
        CompactionSummaryMessage,
    )
}
"""One empty message per known role: what a skeleton entry holds in place of its message."""


def is_stand_in(m: Any) -> bool:
    """Is ``m`` the shared empty message a skeleton entry holds in place of its own?"""
    return _STAND_INS.get(type(m)) is m


def skeleton(e: Any, timestamp: bool = True) -> Any:
    """A message entry without its message: the same id, parent, timestamp and fields set, and in
    place of the message a shared empty message of its role (its ``role`` is the message's, as
    the role decides the class). For a pass that needs the tree and each entry's kind but not the
    messages (:func:`inspector.session.loader.load_skeleton`); never a session's real entries.
    Any other entry (and a message of a role pi does not know): :func:`compact`. ``timestamp=False``:
    the message entry's timestamp is left out too (None)."""
    stand_in = _STAND_INS.get(type(e.message)) if type(e) is MessageEntry else None
    if stand_in is None:
        return compact(e)
    new = _new(MessageEntry)
    for k in ("id", "parentId", "timestamp", "type"):
        _set(new, k, getattr(e, k) if timestamp or k != "timestamp" else None)
    _set(new, "message", stand_in)
    _set(new, "__pydantic_fields_set__", e.__pydantic_fields_set__)
    _set(new, "__pydantic_extra__", e.__pydantic_extra__)
    _set(new, "__pydantic_private__", e.__pydantic_private__)
    return new
