"""Progress bars of long runs, sweeps and rate checks.

A bar is a ``tqdm.auto`` bar (a widget in a Jupyter notebook, text on
stderr in a terminal) that appears only once :data:`PROGRESS_DELAY` seconds
have passed, so that short calls print nothing.  ``progress=None`` (the
default everywhere) shows it on interactive outputs only: a notebook, or a
stderr that is a terminal; ``True`` shows it on any output, ``False`` never.
Bars are context managers and are closed on exceptions too.
"""

from __future__ import annotations

import contextlib
import contextvars
import sys

import numpy as np

__all__ = ["PROGRESS_DELAY", "check_progress", "interactive", "progress_bar", "quiet", "show_progress"]

#: Seconds a call must run before its bar appears.
PROGRESS_DELAY = 2.0

_QUIET = contextvars.ContextVar("expertlab_quiet_progress", default=False)


def check_progress(progress) -> bool | None:
    """``progress`` after checking that it is ``True``, ``False`` or ``None``."""
    if progress is None or isinstance(progress, (bool, np.bool_)):
        return None if progress is None else bool(progress)
    raise TypeError(f"progress must be True, False or None (automatic), got {type(progress).__name__}")


def _in_notebook() -> bool:
    """Whether this process is a Jupyter kernel (where ``tqdm.auto`` draws a widget)."""
    if "ipykernel" not in sys.modules:
        return False
    ipython = sys.modules.get("IPython")
    get = getattr(ipython, "get_ipython", None)
    shell = get() if get is not None else None
    return shell is not None and type(shell).__name__ == "ZMQInteractiveShell"


def interactive() -> bool:
    """Whether progress shows by default: in a notebook, or when stderr is a terminal."""
    if _in_notebook():
        return True
    try:
        return bool(sys.stderr.isatty())
    except (AttributeError, ValueError):  # no stderr, or a closed one
        return False


def show_progress(progress) -> bool:
    """Whether a call given ``progress`` shows a bar (``None``: :func:`interactive`, unless inside :func:`quiet`)."""
    progress = check_progress(progress)
    if progress is None:
        return not _QUIET.get() and interactive()
    return progress


@contextlib.contextmanager
def quiet():
    """Within this block, calls with ``progress=None`` show no bar (an outer bar already reports the work)."""
    token = _QUIET.set(True)
    try:
        yield
    finally:
        _QUIET.reset(token)


class _NoBar:
    """What :func:`progress_bar` yields when no bar is shown."""

    def update(self, n=1):
        return None

    def write(self, text):
        print(text, flush=True)


@contextlib.contextmanager
def progress_bar(progress, *, total, desc: str, unit: str, initial: int = 0, leave: bool = True):
    """A ``tqdm.auto`` bar on stderr, or a stand-in that shows nothing.

    Parameters
    ----------
    progress : bool or None
        As in :func:`show_progress`.
    total, initial : int
        Size of the work and the part already done.
    desc, unit : str
        The bar's label and the unit of ``total``.
    leave : bool
        Keep the finished bar on screen.

    Yields
    ------
    object
        With ``update(n)`` and ``write(text)`` (``text`` to stdout, above
        the bar); the bar is closed when the block ends, also on an
        exception.
    """
    if not show_progress(progress):
        yield _NoBar()
        return
    from tqdm.auto import tqdm

    with tqdm(total=total, initial=initial, desc=desc, unit=unit, leave=leave, delay=PROGRESS_DELAY,
              file=sys.stderr, dynamic_ncols=True) as bar:
        yield _Bar(bar)


class _Bar:
    """A shown bar: ``update`` and ``write`` that keeps the bar intact."""

    def __init__(self, bar):
        self._bar = bar

    def update(self, n=1):
        self._bar.update(n)

    def write(self, text):
        self._bar.write(text, file=sys.stdout)
        sys.stdout.flush()
