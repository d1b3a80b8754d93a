"""Writing a fixed file back: atomically, with its permissions, or not at all with a reason.

The new bytes go to a temporary file in the same directory, which is flushed to disk and then
renamed over the original (``os.replace``, atomic on POSIX and Windows). An interruption at any
point before the rename leaves the original untouched; after it, the file is complete.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile


class WriteError(Exception):
    """Why a file was not written; the run goes on with the next file."""


def write_atomic(path: str, data: bytes, *, expected: bytes | None = None) -> None:
    """Replace the file at ``path`` (a symlink's target) by ``data``. With ``expected``, refuse if
    the file no longer holds those bytes (it changed while it was being fixed)."""
    real = os.path.realpath(path)
    try:
        info = os.stat(real)
    except OSError as error:
        raise WriteError(f"cannot write: {error.strerror or error}") from None
    # Root may write anything; a file nobody may write was made read-only on purpose.
    if not os.access(real, os.W_OK) or not info.st_mode & (
        stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH
    ):
        raise WriteError("cannot write: the file is read-only")
    if info.st_nlink > 1:
        raise WriteError(
            f"not written: it has {info.st_nlink} hard links, which replacing it would split"
        )
    directory, name = os.path.split(real)
    try:
        handle, temporary = tempfile.mkstemp(
            prefix=f".{name}.", suffix=".tinker-lint", dir=directory
        )
    except OSError as error:
        raise WriteError(f"cannot write to its directory: {error.strerror or error}") from None
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(temporary, stat.S_IMODE(info.st_mode))
        if hasattr(os, "geteuid") and (info.st_uid, info.st_gid) != (os.geteuid(), os.getegid()):
            with contextlib.suppress(OSError):  # only root may give a file away
                os.chown(temporary, info.st_uid, info.st_gid)
        if expected is not None:
            with open(real, "rb") as current:
                if current.read() != expected:
                    raise WriteError("not written: it changed on disk while it was being fixed")
        os.replace(temporary, real)
    except BaseException as error:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        if isinstance(error, OSError):
            raise WriteError(f"cannot write: {error.strerror or error}") from None
        raise
