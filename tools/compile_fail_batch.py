#!/usr/bin/env python3
"""Compiles many compile-fail cases as one translation unit and files each diagnostic by case.

Usage (cmake/tyche_compile_fail.cmake runs it, MODE batch):
  compile_fail_batch.py --out DIR --cases FILE -- COMPILER ARGS...

FILE lists the cases, one `name<TAB>source` per line. Each case that can share a translation unit
(its first include is <tyche/tyche.hpp>, it has no preprocessor line but #include and no
namespace of its own) goes into DIR/STEM.cpp (STEM: FILE's name without its extension), in a
namespace of its own, after one #include <tyche/tyche.hpp> and the cases' other #include lines,
with a #line directive so that the compiler names the case's own file and lines. The translation
unit is compiled once (COMPILER ARGS... DIR/STEM.cpp); compilers go on after an error, so it
reports the errors of every case. The output is cut into diagnostics — the context lines, an error, its notes —, and a
diagnostic that names exactly one case's file is that case's: it is appended to DIR/NAME.diag.

The batch decides nothing: each case's own test (cmake/tyche_compile_fail.cmake) matches its
regex against NAME.diag, and compiles the case alone, as before batches existed, when there is
no such file or it does not match (a case whose error the compiler reported once for two cases,
a case that compiles, a case that cannot share the unit). So a batch can only save time: a
case passes on the batch's text only with an error the compiler attributed to that case's file.
Always exits 0 unless its arguments are wrong; the compiler's output is kept in DIR/STEM.log.
"""
import argparse
import os
import re
import subprocess
import sys

CONTEXT_OK = re.compile(r"^#include <[^>]+>\s*$")


def batchable(text):
    lines = text.split("\n")
    includes = [l for l in lines if l.startswith("#include")]
    if not includes or includes[0].strip() != "#include <tyche/tyche.hpp>":
        return False
    for l in lines:
        s = l.lstrip()
        if s.startswith("#") and not CONTEXT_OK.match(s):
            return False  # #define, #if, #error, #pragma, quoted includes: compiled alone
        if re.match(r"^\s*(inline\s+)?namespace\s+\w*\s*\{", l):
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
    with open(a.cases) as f:
        for line in f:
            line = line.rstrip("\n")
            if line:
                name, source = line.split("\t")
                cases.append((name, source))
    for name, _ in cases:  # no stale result survives a run
        try:
            os.remove(os.path.join(a.out, name + ".diag"))
        except FileNotFoundError:
            pass

    includes, bodies, batched = [], [], {}
    for name, source in cases:
        with open(source, encoding="utf-8") as f:
            text = f.read()
        if not batchable(text):
            continue
        kept = []
        for l in text.split("\n"):
            if l.startswith("#include"):
                if l.strip() != "#include <tyche/tyche.hpp>" and l.strip() not in includes:
                    includes.append(l.strip())
                kept.append("")  # the case's line numbers stay its own
            else:
                kept.append(l)
        path = os.path.abspath(source)
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
    # from"), then an error, then its notes, source lines and carets (clang's instantiation context
    # comes as notes after the error; its source lines may start in column 0). After an error or a
    # warning, the next error, warning or context line starts the next diagnostic; a warning is a
    # diagnostic too, never filed.
    error = re.compile(r":\d+(:\d+)?: (fatal )?error: ")
    warning = re.compile(r":\d+(:\d+)?: warning: ")
    context = re.compile(r"^In file included from |^\s+from \S+[:,]$|: In (instantiation of|"
                         r"function|member function|static member function|constructor|"
                         r"destructor|lambda function|substitution of)|"
                         r":\d+:\d+:\s+(recursively )?required (from|by)")
    names = {p: n for p, n in batched.items()}
    mentioned = re.compile("|".join(re.escape(p) for p in sorted(names, key=len, reverse=True)))
    chunks, cur, seen = [], [], None  # seen: None, "error" or "warning" in cur
    for line in r.stdout.split("\n"):
        kind = "error" if error.search(line) else "warning" if warning.search(line) else None
        if seen and (kind or context.search(line)):
            chunks.append((cur, seen == "error"))
            cur, seen = [], None
        if kind:
            seen = kind
        cur.append(line)
    chunks.append((cur, seen == "error"))
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
