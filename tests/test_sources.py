"""Reports quote source lines only from where they may: a run for someone else (the testing
service's) reads no file outside its root, whatever the program's debug information names."""

from __future__ import annotations

from pathlib import Path

import symex
from symex.output.directory import OutputDirectory
from symex.output.sources import SourceFiles


def test_a_root_confines_what_is_read(tmp_path: Path) -> None:
    root = tmp_path / "job"
    root.mkdir()
    inside = root / "prog.c"
    inside.write_text("int main(void) {\n  return 0;\n}\n")
    outside = tmp_path / "secret.txt"
    outside.write_text("the secret\n")
    (root / "link.c").symlink_to(outside)
    confined = SourceFiles(root)
    assert confined.line(str(inside), 2) == "return 0;"
    assert confined.line(str(outside), 1) is None
    assert confined.line(str(root / "link.c"), 1) is None          # a link out is outside
    assert confined.line(str(root / ".." / "secret.txt"), 1) is None
    assert SourceFiles().line(str(outside), 1) == "the secret"     # unconfined: any file


def test_a_line_directive_naming_a_host_file_is_not_quoted(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("line one of the secret\n" * 5)
    job = tmp_path / "job"
    job.mkdir()
    program = job / "lines.c"
    program.write_text(f'#include <klee/klee.h>\n#line 1 "{secret}"\n'
                       "int main(void) { int x; klee_make_symbolic(&x, sizeof x, \"x\");\n"
                       "int t[2]; return t[x];\n}\n")
    result = symex.explore(symex.compile(str(program)))
    assert result.errors
    for root, quoted in ((None, True), (job, False)):
        out = OutputDirectory.create(tmp_path / f"out-{quoted}", source_root=root)
        for test in result.tests:
            out.add_test(test)
        out.close()
        reports = "".join(p.read_text() for p in out.path.glob("*.err"))
        assert ("line one of the secret" in reports) is quoted, reports
