"""Files in and out, safely: regular files only, and writes that never touch an input.

Reading (:func:`open_regular`, :func:`read_regular`, :func:`regular_stat`): a path is checked
with ``stat`` before anything reads it. FIFOs, devices, sockets and directories are refused with
:class:`NotRegularFile` (an ``OSError``, so callers that report unreadable files report these
too). Opening uses ``O_NONBLOCK``, so a FIFO with no writer cannot block ``open()``, and the
check is made again on the opened descriptor (``fstat``), so a path swapped in between is caught.

Writing (:func:`write_atomic`): every file the tool writes — exports, ``--dump-migrated``, the
summary cache, ``sessions -o`` — goes through this one function. It

* refuses a target that is the same file as any input (``st_dev``/``st_ino``: the file itself,
  a symlink to it, or a hard link), and a target that is a directory, FIFO or device;
* refuses to replace an existing file that the caller's ``keep`` names something to keep (the
  exports pass :func:`inspector.importers.session_held`, any agent's session file or an SQLite
  database, unless the command's ``--force``): ``export replay a.jsonl -o b.jsonl`` must not
  turn another session into a report by a slip of the keyboard;
* writes a temporary file in the target's folder under a unique name (``tempfile.mkstemp``:
  created exclusively, so it can never be an existing file), flushes it to disk, and then
  atomically replaces the target (``os.replace``);
* turns a missing or read-only folder into a one-line :class:`WriteRefused`, and leaves nothing
  behind on any failure.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import BinaryIO

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)
_OPEN_FLAGS = (
    os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_BINARY", 0)
)


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


_DEFAULT_MODE = 0o666 & ~_umask()


class NotRegularFile(OSError):
    """The path exists but is not a regular file (a FIFO, device, socket or directory).
    ``strerror`` says what it is; ``str()`` names the path too."""

    def __init__(self, path: str, what: str) -> None:
        super().__init__(errno.EINVAL, f"not a regular file: it is {what}", path)

    def __str__(self) -> str:
        return f"{self.filename} is {self.strerror}"


class WriteRefused(Exception):
    """An output that must not or cannot be written; the message is one line."""


def kind_of(mode: int) -> str:
    """What a ``st_mode`` is, in words (``a regular file``, ``a FIFO (named pipe)``, …)."""
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def _refuse(path: str | os.PathLike[str], st: os.stat_result) -> None:
    if not stat.S_ISREG(st.st_mode):
        raise NotRegularFile(os.fspath(path), kind_of(st.st_mode))


def regular_stat(path: str | os.PathLike[str]) -> os.stat_result:
    """``os.stat(path)`` (symlinks followed), or :class:`NotRegularFile` if it is not a regular file."""
    st = os.stat(path)
    _refuse(path, st)
    return st


def is_regular(path: str | os.PathLike[str]) -> bool:
    """True for an existing regular file (after symlinks); never opens anything."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def open_regular(path: str | os.PathLike[str]) -> BinaryIO:
    """Open a regular file for reading (binary), without ever blocking on a FIFO or device."""
    fd = os.open(path, _OPEN_FLAGS)
    try:
        _refuse(path, os.fstat(fd))
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_regular(path: str | os.PathLike[str], max_bytes: int | None = None) -> bytes:
    """The bytes of a regular file; with ``max_bytes``, at most that many from its start."""
    with open_regular(path) as f:
        return f.read() if max_bytes is None else f.read(max_bytes)


def _same_as_input(target: Path, inputs: Iterable[str | os.PathLike[str] | None]) -> str | None:
    try:
        t = os.stat(target)
    except OSError:
        return None
    for src in inputs:
        if src is None or src == "":
            continue
        try:
            s = os.stat(src)
        except (OSError, ValueError):
            continue
        if (s.st_dev, s.st_ino) == (t.st_dev, t.st_ino):
            return os.fspath(src)
    return None


Keep = Callable[[Path], "str | None"]
"""What an existing target holds that must not be replaced ("a pi session (JSONL tree)"), or None."""


def _check_target(t: Path, inputs: Iterable[str | os.PathLike[str] | None], keep: Keep | None = None) -> Path:
    """The folder to write in; :class:`WriteRefused` for a target that must not be written."""
    same = _same_as_input(t, inputs)
    if same is not None:
        raise WriteRefused(
            f"refusing to write {t}: it is the same file as the input {same} "
            "(the file itself, a link to it, or a hard link)"
        )
    try:
        st = os.stat(t)
    except FileNotFoundError:
        st = None
    except OSError as e:
        raise WriteRefused(f"cannot write {t}: {e.strerror or e}") from None
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise WriteRefused(f"cannot write {t}: it is {kind_of(st.st_mode)}")
    held = keep(t) if st is not None and keep is not None else None
    if held is not None:
        raise WriteRefused(
            f"refusing to replace {t}: it holds {held}; write to another file, or pass --force to replace it"
        )
    folder = Path(os.path.abspath(t)).parent
    if not folder.is_dir():
        raise WriteRefused(f"cannot write {t}: the folder {folder} does not exist")
    return folder


def write_atomic(
    target: str | os.PathLike[str],
    data: bytes | Iterable[bytes],
    *,
    inputs: Iterable[str | os.PathLike[str] | None] = (),
    mode: int | None = None,
    keep: Keep | None = None,
) -> Path:
    """Write ``data`` (bytes, or an iterable of byte chunks) to ``target`` atomically.

    ``inputs`` are the files the output was made from: a target that is any of them (hard links
    included) is refused. ``mode`` defaults to 0666 minus the umask (what ``open()`` would give);
    the summary cache passes 0600. An existing target that ``keep`` names something to keep is
    refused. Raises :class:`WriteRefused` with a one-line message."""
    t = Path(target)
    folder = _check_target(t, list(inputs), keep)
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{t.name[:100]}.", suffix=".tmp")
    except OSError as e:
        raise WriteRefused(f"cannot write {t}: {e.strerror or e} (in {folder})") from None
    try:
        with os.fdopen(fd, "wb") as f:
            for chunk in (data,) if isinstance(data, (bytes, bytearray, memoryview)) else data:
                f.write(chunk)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, _DEFAULT_MODE if mode is None else mode)
        os.replace(tmp, t)
    except BaseException as e:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(e, OSError):
            raise WriteRefused(f"cannot write {t}: {e.strerror or e}") from None
        raise
    return t
