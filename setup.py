"""Builds the wheel as pyproject.toml declares it, plus musl prebuilt for it.

A wheel carries musl (its headers, its LLVM IR built with zig cc, its licence), so that a
fresh ``pip install symex`` runs programs on a real C library with no network and no
minute-long build (src/symex/ir/musl.py: ``ship``). musl's source is fetched from Debian's
archive when the wheel is built; the repository holds none of it. An editable install
builds musl into the cache on first use instead.
"""

import os
import subprocess
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py


class BuildWithMusl(build_py):
    """``build_py``, then ``python -m symex.ir.musl ship`` into the wheel's package."""

    def run(self) -> None:
        super().run()
        if self.editable_mode:
            return
        sys.path.insert(0, str(Path("src").resolve()))
        from symex.ir.musl import SHIPPED_DIR  # the one place the directory is named

        destination = Path(self.build_lib) / "symex" / SHIPPED_DIR
        # src first; pip's build isolation puts its build requirements (attrs, llvmlite,
        # ziglang) on PYTHONPATH too, which must stay
        search = [str(Path("src").resolve()), *filter(None, [os.environ.get("PYTHONPATH")])]
        environment = dict(os.environ, PYTHONPATH=os.pathsep.join(search))
        subprocess.run([sys.executable, "-m", "symex.ir.musl", "ship", str(destination)],
                       env=environment, check=True)


setup(cmdclass={"build_py": BuildWithMusl})
