#!/usr/bin/env python3
"""Checks that every code line of README.md's C++ snippets occurs in examples/quickstart.cpp.

The README quotes the quickstart example, which the test suite builds and runs with its output
checked; this keeps the quote from drifting away from the tested code. Exit 0 when every line
is found (whitespace-insensitive), 1 otherwise, listing the missing lines.
"""
import pathlib
import re
import sys

root = pathlib.Path(__file__).resolve().parent.parent
readme = (root / "README.md").read_text(encoding="utf-8")
example = (root / "examples" / "quickstart.cpp").read_text(encoding="utf-8")


def norm(line: str) -> str:
    return re.sub(r"\s+", " ", line).strip()


example_lines = {norm(l) for l in example.splitlines()}
snippets = re.findall(r"```cpp\n(.*?)```", readme, flags=re.S)
if not snippets:
    print("README.md has no ```cpp snippet to check")
    sys.exit(1)
missing = [l for s in snippets for l in s.splitlines() if norm(l) and norm(l) not in example_lines]
for l in missing:
    print(f"README line not in examples/quickstart.cpp: {l.strip()}")
print(f"{sum(len(s.splitlines()) for s in snippets)} README lines checked, {len(missing)} missing")
sys.exit(1 if missing else 0)
