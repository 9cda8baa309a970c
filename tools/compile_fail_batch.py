#!/usr/bin/env python3
"""Compiles many compile-fail cases as one translation unit and files each diagnostic by case.

Usage (cmake/tyche_compile_fail.cmake runs it, MODE batch):
  compile_fail_batch.py --out DIR --cases FILE -- COMPILER ARGS...

FILE lists the cases, one `name<TAB>source` per line. Each case that can share a translation unit
(its first include is <tyche/tyche.hpp>, its only preprocessor lines are #include <...>, and it
declares no namespace, explicit specialisation or ::-qualified name: see batchable) goes into
DIR/STEM.cpp (STEM: FILE's name without its extension), in a namespace of its own, after one
#include <tyche/tyche.hpp> and the cases' other #include lines, with a #line directive so that
the compiler names the case's own file and lines. The translation unit is compiled once
(COMPILER ARGS... DIR/STEM.cpp); compilers go on after an error, so it reports the errors of
every case. The output is cut into diagnostics — the context lines, an error, its notes —, and
a diagnostic that names exactly one case's file is that case's: it is appended to DIR/NAME.diag.

The batch decides nothing: each case's own test (cmake/tyche_compile_fail.cmake) matches its
regex against NAME.diag, and compiles the case alone, as before batches existed, when there is
no such file or it does not match (a case whose error the compiler reported once for two cases,
a case that compiles, a case that cannot share the unit). So a batch can only save time: a
case passes on the batch's text only with a diagnostic that names that case's file and no
other case's. Exits 0 unless its arguments are wrong (and the CMake side then only warns: the
cases compile alone); the compiler's output is kept in DIR/STEM.log.
"""
import argparse
import os
import re
import subprocess
import sys

INCLUDE = re.compile(r"^\s*#\s*include\s*<[^>]+>\s*$")


def batchable(text):
    """Whether a case keeps its meaning inside a namespace of its own: its first include is
    <tyche/tyche.hpp>, its only preprocessor lines are #include <...> (no #define, #if, #pragma,
    quoted include), and it declares no namespace, explicit specialisation or ::-qualified name."""
    lines = text.split("\n")
    includes = [l.strip() for l in lines if INCLUDE.match(l)]
    if not includes or includes[0] != "#include <tyche/tyche.hpp>":
        return False
    for l in lines:
        s = l.strip()
        if s.startswith("#") and not INCLUDE.match(l):
            return False
        if re.match(r"^(inline\s+)?namespace\b(?!\s+\w+\s*=)", s):
            return False  # a namespace of its own (an alias `namespace x = y;` is fine)
        if re.search(r"\btemplate\s*<\s*>", s) or s.startswith("::"):
            return False
    return True


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("--cases", required=True)
    p.add_argument("command", nargs="+")
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    cases = []
    with open(a.cases, encoding="utf-8", errors="replace") as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if len(parts) == 2:  # anything else: no case (it compiles alone)
                cases.append((parts[0], parts[1]))
    for name, _ in cases:  # no stale result survives a run
        try:
            os.remove(os.path.join(a.out, name + ".diag"))
        except OSError:
            pass

    includes, bodies, batched = [], [], {}
    for name, source in cases:
        try:
            with open(source, encoding="utf-8") as f:
                text = f.read()
        except (OSError, UnicodeDecodeError):
            continue  # compiled alone
        if not batchable(text):
            continue
        kept = []
        for l in text.split("\n"):
            if INCLUDE.match(l):
                inc = l.strip()
                if inc != "#include <tyche/tyche.hpp>" and inc not in includes:
                    includes.append(inc)
                kept.append("")  # the case's line numbers stay its own
            else:
                kept.append(l)
        path = os.path.abspath(source)
        if '"' in path or "\\" in path:
            continue  # not spellable in #line as it is: compiled alone
        batched[path] = name
        ident = re.sub(r"\W", "_", name)
        bodies.append(f'namespace tyche_compile_fail_{ident} {{\n#line 1 "{path}"\n'
                      + "\n".join(kept) + "\n}\n")
    stem = os.path.splitext(os.path.basename(a.cases))[0]  # batches share DIR: one unit each
    unit = os.path.join(a.out, stem + ".cpp")
    with open(unit, "w", encoding="utf-8") as f:
        f.write("#include <tyche/tyche.hpp>\n" + "\n".join(includes) + "\n" + "".join(bodies))
    if not batched:
        return 0

    env = dict(os.environ, LC_ALL="C")
    r = subprocess.run(a.command + [unit], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       env=env, text=True, errors="replace")
    with open(os.path.join(a.out, stem + ".log"), "w", encoding="utf-8") as f:
        f.write(f"exit status {r.returncode}\n{r.stdout}")

    # Diagnostics: context lines (g++'s "In instantiation of", "required from", "In file included
    # from", "At global scope"), then an error, then its notes, source lines and carets (clang's
    # instantiation context comes as notes after the error; its source lines may start in column
    # 0). After an error or a warning, the next error, warning or context line starts the next
    # diagnostic; a warning is a diagnostic too, never filed. g++ puts "In file included from"
    # lines before a note in a header too: such lines are held until the line after them says
    # whether they open a note (they stay with the diagnostic) or the next diagnostic.
    error = re.compile(r":\d+(:\d+)?: ((fatal )?error|sorry, unimplemented|internal compiler error): ")
    warning = re.compile(r":\d+(:\d+)?: warning: ")
    note = re.compile(r":\d+(:\d+)?: note: ")
    included = re.compile(r"^In file included from |^\s+from \S+[:,]$")
    context = re.compile(r": In (instantiation of|function|member function|static member function|"
                         r"constructor|destructor|lambda function|substitution of)|: At global scope:|"
                         r":\d+:\d+:\s+(recursively )?required (from|by)")
    names = {p: n for p, n in batched.items()}
    mentioned = re.compile("|".join(re.escape(p) for p in sorted(names, key=len, reverse=True)))
    chunks, cur, held, seen = [], [], [], None  # seen: None, "error" or "warning" in cur
    for line in r.stdout.split("\n"):
        if seen and included.search(line):
            held.append(line)
            continue
        kind = "error" if error.search(line) else "warning" if warning.search(line) else None
        if seen and (kind or context.search(line) or (held and not note.search(line))):
            chunks.append((cur, seen == "error"))
            cur, seen = [], None
        cur += held
        held = []
        if kind:
            seen = kind
        cur.append(line)
    chunks.append((cur + held, seen == "error"))
    filed = {}
    for lines, has_error in chunks:
        if not has_error:
            continue
        text = "\n".join(lines)
        owners = {names[m.group(0)] for m in mentioned.finditer(text)}
        if len(owners) == 1:
            filed.setdefault(owners.pop(), []).append(text)
    for name, texts in filed.items():
        with open(os.path.join(a.out, name + ".diag"), "w", encoding="utf-8") as f:
            f.write("\n".join(texts) + "\n")
    print(f"compile-fail batch: {len(batched)} of {len(cases)} cases in one translation unit, "
          f"{len(filed)} with errors of their own (compiler exit status {r.returncode})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
