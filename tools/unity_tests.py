#!/usr/bin/env python3
"""Unity builds of a test folder: several test files compiled as one translation unit.

Most of a test file's compile time is instantiating the templates it shares with the other files
of its folder (the model machinery, the evaluation, the checks in tests/support): compiled
together, each is instantiated once (measured in docs/compile-time.md). CMake's own UNITY_BUILD
puts the files one after another in one scope, where their anonymous namespaces merge and the
same helper name in two files is a redefinition. Here each file gets a namespace of its own:

    #include <every header the batch's files include>       (the preamble, once)
    namespace tyche_unity_0 {
    #include "/abs/tests/folder/a_test.cpp"    (its own includes are no-ops now: include guards)
    }
    #undef <each macro a_test.cpp defines in its body>
    namespace tyche_unity_1 {
    ...

A file stays in a translation unit of its own (`plan` prints it alone) when that is not safe:
code or a preprocessor condition or definition among its includes (the order would change),
something that must be at global scope (operator new, a specialisation, a reopened namespace
tyche/std/Catch), an include after the first line of code, or a quoted include without an
include guard.

  unity_tests.py plan --bytes N FILE...   one line per translation unit: the files, comma-separated
  unity_tests.py write OUT FILE...        writes the unity file OUT (only if its text changed)
"""
import os
import re
import sys

GLOBAL_ONLY = re.compile(
    r"^\s*(namespace\s+(tyche|std|Catch|boost|xt|xsimd)\b|template\s*<>|void\s*\*\s*operator\s+new|"
    r"void\s+operator\s+delete|int\s+main\s*\()",
    re.M)
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')
DEFINE = re.compile(r"^\s*#\s*define\s+([A-Za-z_][A-Za-z_0-9]*)", re.M)


def split(path):
    """(preamble include lines, reason the file must stay alone or None)."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    includes, in_comment, seen_code = [], False, False
    for number, line in enumerate(lines, 1):
        s = line.strip()
        if in_comment:
            in_comment = "*/" not in s
            continue
        if s.startswith("/*"):
            in_comment = "*/" not in s
            continue
        if not s or s.startswith("//"):
            continue
        m = INCLUDE.match(line)
        if m:
            if seen_code:
                return None, f"line {number}: an include after code"
            if m.group(1) == '"':
                target = os.path.join(os.path.dirname(os.path.abspath(path)), m.group(2))
                if os.path.exists(target):
                    with open(target, encoding="utf-8") as h:
                        text = h.read()
                    if "#pragma once" not in text and not re.search(r"^\s*#\s*ifndef\s+\w+_H", text, re.M):
                        return None, f"line {number}: {m.group(2)} has no include guard"
                    includes.append(f'#include "{os.path.normpath(target)}"')
                else:
                    includes.append(f'#include "{m.group(2)}"')
            else:
                includes.append(f"#include <{m.group(2)}>")
            continue
        if s.startswith("#") and not includes and not seen_code and s.startswith("#pragma once"):
            continue
        if s.startswith("#") and not seen_code:
            return None, f"line {number}: a preprocessor line among the includes ({s[:40]})"
        seen_code = True
    with open(path, encoding="utf-8") as f:
        text = f.read()
    m = GLOBAL_ONLY.search(text)
    if m:
        return None, f"{m.group(0).strip()} must be at global scope"
    return includes, None


def plan(limit, files):
    batch, size, out = [], 0, []
    for path in files:
        includes, reason = split(path)
        if reason is not None:
            out.append([path])
            continue
        batch.append(path)
        size += os.path.getsize(path)
        if size >= limit:
            out.append(batch)
            batch, size = [], 0
    if batch:
        out.append(batch)
    for files_of_tu in out:
        print(",".join(files_of_tu))


def write(out_path, files):
    preamble, seen, body = [], set(), []
    for k, path in enumerate(files):
        includes, reason = split(path)
        if reason is not None:
            sys.exit(f"unity_tests.py: {path} cannot join a unity translation unit ({reason}): "
                     "re-run cmake, which compiles it alone")
        for line in includes:
            if line not in seen:
                seen.add(line)
                preamble.append(line)
        with open(path, encoding="utf-8") as f:
            defined = sorted(set(DEFINE.findall(f.read())))
        body.append(f"namespace tyche_unity_{k} {{")
        body.append(f'#include "{os.path.abspath(path)}"')
        body.append(f"}}  // namespace tyche_unity_{k}")
        body += [f"#undef {name}" for name in defined]
    text = "// generated by tools/unity_tests.py: do not edit\n" + "\n".join(preamble + body) + "\n"
    try:
        with open(out_path, encoding="utf-8") as f:
            if f.read() == text:
                return
    except OSError:
        pass
    os.makedirs(os.path.dirname(os.path.abspath(out_path)), exist_ok=True)
    with open(out_path, "w", encoding="utf-8") as f:
        f.write(text)


def main(argv):
    if len(argv) >= 3 and argv[0] == "plan" and argv[1] == "--bytes":
        plan(int(argv[2]), argv[3:])
    elif len(argv) >= 2 and argv[0] == "write":
        write(argv[1], argv[2:])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
