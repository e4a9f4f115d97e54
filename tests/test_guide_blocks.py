"""Every Python code block of the user guide and of the README runs.

The blocks of one page (``.. code-block:: python``, literal ``::`` blocks
that parse as Python, and ``>>>`` examples, whose printed output is checked
as in a doctest) are executed in order in one namespace, in a temporary
working directory, so a page is a script that a reader can paste.  A block
that cannot run here (it needs a cluster, a GPU, ...) is preceded by the rst
comment ``.. guide-test: skip``, which the rendered page does not show; keep
such blocks rare.  The ```` ```python ```` blocks of ``README.md`` run the
same way, as one script.
"""

from __future__ import annotations

import ast
import doctest
import re
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GUIDE = ROOT / "docs" / "user_guide"
README = ROOT / "README.md"
SKIP_MARKER = ".. guide-test: skip"

_DIRECTIVE = re.compile(r"^(\s*)\.\.\s+code-block::\s*(\S+)\s*$")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _body(lines: list[str], start: int, base: int) -> tuple[str, int]:
    """The indented body that follows line ``start - 1`` (options skipped), and the index after it."""
    i = start
    while i < len(lines) and lines[i].strip() and lines[i].lstrip().startswith(":"):
        i += 1  # directive options (:caption:, :emphasize-lines: ...)
    body = []
    while i < len(lines) and (not lines[i].strip() or _indent(lines[i]) > base):
        body.append(lines[i])
        i += 1
    return textwrap.dedent("\n".join(body)).strip("\n") + "\n", i


def _is_python(code: str) -> bool:
    try:
        ast.parse(code)
    except SyntaxError:
        return False
    return True


def extract_blocks(text: str) -> list[tuple[int, str, str, bool]]:
    """``(line, kind, code, skipped)`` of each Python block of an rst page, in order.

    ``kind`` is ``"exec"`` for a code block or a literal block and
    ``"doctest"`` for ``>>>`` examples.  A literal ``::`` block counts only
    when it parses as Python (TOML, shell commands and prose examples do not).
    """
    lines = text.splitlines()
    blocks = []
    skip_next = False
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if stripped == SKIP_MARKER:
            skip_next = True
            i += 1
            continue
        m = _DIRECTIVE.match(line)
        if m:
            code, j = _body(lines, i + 1, _indent(line))
            if m.group(2) in ("python", "py", "python3"):
                blocks.append((i + 1, "exec", code, skip_next))
            elif m.group(2) in ("pycon", "pytb") and ">>>" in code:
                blocks.append((i + 1, "doctest", code, skip_next))
            skip_next = False
            i = j
            continue
        if stripped.endswith("::") and not stripped.startswith(".."):
            code, j = _body(lines, i + 1, _indent(line))
            if code.strip() and code.lstrip().startswith(">>>"):
                blocks.append((i + 1, "doctest", code, skip_next))
            elif code.strip() and _is_python(code):
                blocks.append((i + 1, "exec", code, skip_next))
            skip_next = False
            i = max(j, i + 1)
            continue
        if stripped.startswith(">>>"):
            start = i
            base = _indent(line)
            j = i
            while j < len(lines) and lines[j].strip() and _indent(lines[j]) >= base:
                j += 1
            code = textwrap.dedent("\n".join(lines[start:j])) + "\n"
            blocks.append((start + 1, "doctest", code, skip_next))
            skip_next = False
            i = j
            continue
        if stripped:
            skip_next = False  # the marker applies to the block right after it only
        i += 1
    return blocks


def extract_markdown_blocks(text: str) -> list[tuple[int, str, str, bool]]:
    """``(line, "exec", code, False)`` of each fenced ```` ```python ```` block of a Markdown file."""
    blocks = []
    for m in re.finditer(r"^```python[ \t]*\n(.*?)^```", text, re.S | re.M):
        blocks.append((text.count("\n", 0, m.start()) + 1, "exec", m.group(1), False))
    return blocks


def _pages() -> list[Path]:
    return sorted(p for p in GUIDE.glob("*.rst") if any(not s for *_, s in extract_blocks(p.read_text("utf-8"))))


def test_extractor_finds_each_kind_and_honours_the_marker():
    page = textwrap.dedent("""\
        Title
        =====

        .. code-block:: python

           x = 1

        A literal block::

            y = x + 1

        Not Python::

            expertlab rates --quick

        .. guide-test: skip

        .. code-block:: python

           raise RuntimeError("never run")

        .. code-block:: toml

           a = 1

        >>> y * 2
        4
        """)
    blocks = extract_blocks(page)
    assert [(kind, code.strip(), skipped) for _, kind, code, skipped in blocks] == [
        ("exec", "x = 1", False),
        ("exec", "y = x + 1", False),
        ("exec", 'raise RuntimeError("never run")', True),
        ("doctest", ">>> y * 2\n4", False),
    ]


def _run_page(path: Path, blocks=None) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    namespace: dict = {"__name__": f"guide_{path.stem}"}
    parser = doctest.DocTestParser()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    try:
        if blocks is None:
            blocks = extract_blocks(path.read_text(encoding="utf-8"))
        for line, kind, code, skipped in blocks:
            if skipped:
                continue
            where = f"{path.name}:{line}"
            if kind == "exec":
                try:
                    exec(compile(code, where, "exec"), namespace)
                except Exception as exc:
                    raise AssertionError(f"the code block at {where} failed: {exc!r}\n{code}") from exc
            else:
                test = parser.get_doctest(code, namespace, where, str(path), line)
                result = runner.run(test, clear_globs=False)
                assert result.failed == 0, f"the >>> examples at {where} failed (see the output above)"
    finally:
        plt.close("all")


@pytest.mark.parametrize("path", _pages(), ids=lambda p: p.stem)
def test_guide_page_blocks_run(path, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # blocks may write files (results/, runs/, plots)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    _run_page(path)


def test_markdown_extractor_finds_python_fences_only():
    text = "# t\n\n```bash\nexpertlab list\n```\n\n```python\nx = 1\n```\n"
    assert extract_markdown_blocks(text) == [(7, "exec", "x = 1\n", False)]


def test_readme_python_blocks_run(tmp_path, monkeypatch):
    blocks = extract_markdown_blocks(README.read_text(encoding="utf-8"))
    assert blocks, "README.md has no python block"
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    _run_page(README, blocks)
