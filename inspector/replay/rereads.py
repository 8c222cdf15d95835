"""Re-reads: a later read of a path whose earlier output was pruned or summarised away at that time.

The tracker follows the read tool's calls (``READ_TOOLS``, by the ``path`` argument) and their
successful results; at each model call, a read of a path read before whose last output is no
longer in the context (or is pruned) counts as a re-read.
"""

from __future__ import annotations

from collections.abc import Callable

from ..session.models import ToolCall, ToolResultMessage
from .results import Reread

READ_TOOLS = frozenset({"read"})


class RereadTracker:
    def __init__(self) -> None:
        self.count = 0
        self._calls: dict[str, str] = {}  # toolCallId -> path
        self._reads: dict[str, list[int]] = {}  # path -> tool result entry indexes
        self._paths: dict[str, str] = {}  # one string object per path (a path is read over and over)

    def calls(self, tool_calls: list[ToolCall], in_context: Callable[[int], bool]) -> list[Reread]:
        """The re-reads among an answer's tool calls (``in_context``: is an entry still in the
        context the model saw, unpruned?)."""
        out: list[Reread] = []
        for tc in tool_calls:
            if tc.name in READ_TOOLS and isinstance(tc.arguments, dict):
                p = tc.arguments.get("path")
                if isinstance(p, str) and p:
                    p = self._paths.setdefault(p, p)
                    self._calls[tc.id] = p
                    earlier = self._reads.get(p)
                    if earlier and not in_context(earlier[-1]):
                        self.count += 1
                        out.append(Reread(p, earlier[-1]))
        return out

    def result(self, message: ToolResultMessage, entry_index: int) -> None:
        """A tool result entered the context: remember a successful read's output."""
        p = self._calls.get(message.toolCallId)
        if p is not None and not message.isError:
            self._reads.setdefault(p, []).append(entry_index)
