"""``.. expertlab-help:: [COMMAND]``: the ``--help`` text of the ``expertlab`` command, as a literal block.

The text is produced at build time by :func:`expertlab.cli.main`, so the page
always matches the installed command line.
"""

from __future__ import annotations

import contextlib
import io
import os

from docutils import nodes
from sphinx.util.docutils import SphinxDirective


def help_text(*command: str, width: int = 88) -> str:
    """What ``expertlab [COMMAND] --help`` prints, wrapped at ``width`` columns."""
    from expertlab import cli

    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = str(width)
    buf = io.StringIO()
    try:
        with contextlib.redirect_stdout(buf), contextlib.suppress(SystemExit):
            cli.main([*command, "--help"])
    finally:
        if old is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = old
    return buf.getvalue().rstrip()


class ExpertlabHelp(SphinxDirective):
    optional_arguments = 1
    has_content = False

    def run(self):
        text = help_text(*self.arguments)
        if not text:
            raise self.error(f"expertlab {' '.join(self.arguments)} --help printed nothing")
        block = nodes.literal_block(text, text)
        block["language"] = "text"
        return [block]


def setup(app):
    app.add_directive("expertlab-help", ExpertlabHelp)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
