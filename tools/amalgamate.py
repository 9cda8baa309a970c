#!/usr/bin/env python3
"""Generate the single-header distribution of tyche.

Starting from include/tyche/tyche.hpp, every `#include <tyche/...>` (or `#include "tyche/..."`)
is replaced by the content of that header, recursively, the first time it is met; later includes
of the same header are dropped (all tyche headers use `#pragma once`). The `#pragma once` lines of
inlined headers are removed and a single one is put at the top. Every other include (standard
library, Boost, xtensor, xsimd, ...) is left as it is.

Headers under include/tyche/backends/cuda/ are inlined too: <tyche/tyche.hpp> includes them only
under `#if defined(__CUDACC__)`, so the single header serves host compilers and nvcc alike
(docs/gpu.md). --no-inline-cuda keeps their #include lines instead.

The optional components' headers, <tyche/io/json_data.hpp> (CmdStan JSON data)
and <tyche/mpi.hpp> (with MPI), are written beside it as companions, under the same names
(single_include/tyche/io/json_data.hpp, single_include/tyche/mpi.hpp), so that a program with
only single_include/ on its include path includes them as it would from include/. A companion
may include no tyche header but <tyche/tyche.hpp> (which then resolves to the single header);
each is copied with the generated-file banner, and --check checks them too.

Usage:
    tools/amalgamate.py                    # (re)write single_include/tyche/tyche.hpp and companions
    tools/amalgamate.py --output PATH      # write somewhere else
    tools/amalgamate.py --check            # exit 1 with a diff if the file is out of date
"""
from __future__ import annotations

import argparse
import difflib
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
INCLUDE_DIR = ROOT / "include"
ENTRY = "tyche/tyche.hpp"
DEFAULT_OUTPUT = ROOT / "single_include" / "tyche" / "tyche.hpp"
CUDA_PREFIX = "tyche/backends/cuda/"
COMPANIONS = ("tyche/io/json_data.hpp", "tyche/mpi.hpp")

INCLUDE_RE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')
PRAGMA_ONCE_RE = re.compile(r"^\s*#\s*pragma\s+once\b")

BANNER = """\
// ================================================================================================
// tyche {version} — single-header distribution.
//
// GENERATED FILE — DO NOT EDIT. Produced by tools/amalgamate.py from include/tyche/tyche.hpp;
// edit the headers under include/tyche/ and run `python3 tools/amalgamate.py` instead.
// ================================================================================================
"""


class AmalgamationError(Exception):
    pass


def read_version() -> str:
    config = (INCLUDE_DIR / "tyche" / "config.hpp").read_text(encoding="utf-8")
    parts = []
    for part in ("MAJOR", "MINOR", "PATCH"):
        m = re.search(rf"#\s*define\s+TYCHE_VERSION_{part}\s+(\d+)", config)
        parts.append(m.group(1) if m else "?")
    return ".".join(parts)


class Amalgamator:
    def __init__(self, inline_cuda: bool) -> None:
        self.inline_cuda = inline_cuda
        self.done: set[str] = set()      # headers already inlined (relative to include/)
        self.stack: list[str] = []       # for cycle diagnostics

    def resolve(self, delim: str, name: str, current: Path) -> str | None:
        """Return the include/-relative name of a tyche header, or None for foreign includes."""
        if delim == '"':
            local = (current.parent / name).resolve()
            try:
                rel = local.relative_to(INCLUDE_DIR.resolve()).as_posix()
            except ValueError:
                rel = None
            if rel is not None and local.is_file() and rel.startswith("tyche/"):
                return rel
        if name.startswith("tyche/"):
            return name
        return None

    def expand(self, rel: str) -> list[str]:
        path = INCLUDE_DIR / rel
        if not path.is_file():
            raise AmalgamationError(
                f"{self.stack[-1] if self.stack else '<root>'}: included header {rel} not found")
        self.done.add(rel)
        self.stack.append(rel)
        out = [f"// ----- begin {rel} -----\n"]
        text = path.read_text(encoding="utf-8").replace("\r\n", "\n")
        for line in text.splitlines(keepends=True):
            if not line.endswith("\n"):
                line += "\n"
            if PRAGMA_ONCE_RE.match(line):
                continue
            m = INCLUDE_RE.match(line)
            if m:
                target = self.resolve(m.group(1), m.group(2), path)
                if target is not None and (self.inline_cuda or not target.startswith(CUDA_PREFIX)):
                    if target in self.stack:
                        raise AmalgamationError(
                            "include cycle: " + " -> ".join(self.stack + [target]))
                    if target not in self.done:
                        out.extend(self.expand(target))
                    continue
            out.append(line)
        out.append(f"// ----- end {rel} -----\n")
        self.stack.pop()
        return out


def generate(inline_cuda: bool = True) -> str:
    body = Amalgamator(inline_cuda).expand(ENTRY)
    return BANNER.format(version=read_version()) + "#pragma once\n\n" + "".join(body)


COMPANION_BANNER = """\
// ================================================================================================
// tyche {version} — {rel}, a companion of the single header (tyche/tyche.hpp beside it).
//
// GENERATED FILE — DO NOT EDIT. Copied by tools/amalgamate.py from include/{rel};
// edit that header and run `python3 tools/amalgamate.py` instead.
// ================================================================================================
"""


def generate_companion(rel: str) -> str:
    """include/<rel> with the banner: it may include no tyche header but tyche/tyche.hpp."""
    text = (INCLUDE_DIR / rel).read_text(encoding="utf-8").replace("\r\n", "\n")
    for number, line in enumerate(text.splitlines(), 1):
        m = INCLUDE_RE.match(line)
        if m and m.group(2).startswith("tyche/") and m.group(2) != ENTRY:
            raise AmalgamationError(
                f"{rel}:{number}: a companion of the single header may include only <{ENTRY}> of "
                f"tyche's headers, not <{m.group(2)}>")
    return COMPANION_BANNER.format(version=read_version(), rel=rel) + text


def check_or_write(output: Path, text: str, check: bool) -> int:
    if check:
        current = output.read_text(encoding="utf-8") if output.is_file() else ""
        if current == text:
            print(f"{output} is up to date")
            return 0
        diff = list(difflib.unified_diff(
            current.splitlines(keepends=True), text.splitlines(keepends=True),
            fromfile=f"{output} (committed)", tofile=f"{output} (regenerated)"))
        print(f"{output} is out of date; run `python3 tools/amalgamate.py`. Diff head:")
        sys.stdout.write("".join(diff[:60]))
        if len(diff) > 60:
            print(f"... ({len(diff) - 60} more diff lines)")
        return 1
    output.parent.mkdir(parents=True, exist_ok=True)
    if not output.is_file() or output.read_text(encoding="utf-8") != text:
        output.write_text(text, encoding="utf-8", newline="\n")
        print(f"wrote {output}")
    else:
        print(f"{output} unchanged")
    return 0


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT,
                        help=f"file to write or check (default: {DEFAULT_OUTPUT.relative_to(ROOT)})")
    parser.add_argument("--check", action="store_true",
                        help="do not write; exit 1 with a unified diff if the output is stale")
    parser.add_argument("--no-inline-cuda", dest="inline_cuda", action="store_false",
                        help="keep the #include lines of headers under include/tyche/backends/cuda/")
    args = parser.parse_args(argv)

    try:
        text = generate(args.inline_cuda)
    except AmalgamationError as e:
        print(f"amalgamate.py: error: {e}", file=sys.stderr)
        return 2

    try:
        companions = {rel: generate_companion(rel) for rel in COMPANIONS}
    except AmalgamationError as e:
        print(f"amalgamate.py: error: {e}", file=sys.stderr)
        return 2
    output: Path = args.output
    status = check_or_write(output, text, args.check)
    # The companions under the same names, relative to the folder that holds tyche/tyche.hpp
    # (only where the output is such a file: --output elsewhere writes or checks it alone).
    if output.name == "tyche.hpp" and output.parent.name == "tyche":
        root = output.parent.parent
        for rel, companion in companions.items():
            status = max(status, check_or_write(root / rel, companion, args.check))
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
