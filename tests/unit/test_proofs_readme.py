"""The "Checks" table of ``proofs_check/README.md`` names every lemma check and no other file."""

import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]
PROOFS = ROOT / "proofs_check"

_ROW = re.compile(r"^\|\s*`([^`]+)`\s*\|")


def _table_files(readme: str) -> list[str]:
    """File names in the first column of the table under the ``## Checks`` heading."""
    lines = readme.splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip() == "## Checks")
    names = []
    for line in lines[start + 1:]:
        if line.startswith("## "):
            break
        match = _ROW.match(line)
        if match:
            names.append(match.group(1))
    return names


def test_checks_table_lists_every_check_file():
    readme = (PROOFS / "README.md").read_text(encoding="utf-8")
    listed = _table_files(readme)
    on_disk = {p.relative_to(PROOFS).as_posix() for p in PROOFS.glob("*/check_*.py")}
    assert on_disk, f"no check files found under {PROOFS}"
    duplicates = sorted({name for name in listed if listed.count(name) > 1})
    missing = sorted(on_disk - set(listed))
    stale = sorted(set(listed) - on_disk)
    assert not (missing or stale or duplicates), (
        "proofs_check/README.md '## Checks' table is out of date: "
        f"missing rows for {missing}; rows for files that do not exist {stale}; "
        f"files listed more than once {duplicates}"
    )
