#!/usr/bin/env python3
"""Checks that the headers of include/tyche include one another down the layers, never up.

Every header belongs to one layer of the table LAYERS below (by its folder, or by its own name
for the files at the top), and may include headers of its own layer or of layers with a lower
rank. The layers, lowest first (docs/design/expression-core.md, "Layers", says why each sits
where it does):

  rank  layer           paths under include/tyche/
  0     config          config.hpp
  1     scalar          scalar/
  2     random          random/   (counter-based generators; config only)
  3     backends/simd   backends/simd/   (xsimd; the SIMD Philox builds on random/)
  4     concepts        concepts.hpp   (the contracts; syntactic, so every layer above may use them)
  5     core            core/
  6     autodiff        autodiff/
  7     interval        interval/
  8     operations      operations/
  9     compile         compile/
  10    transforms      transforms/
  11    distributions   distributions/, distributions.hpp
  12    model           model/
  13    samplers        samplers/  (nuts, smc, samplers/smc.hpp), backends/cuda/ (the CUDA executor's
                        launcher: samplers/nuts/sampler.hpp includes it under nvcc)
  14    inference       inference/  (optimize, laplace, pathfinder, advi: the other inference methods;
                        their fit type is what diagnostics/ and io/ summarise and write)
  15    diagnostics     diagnostics/
  15    io              io/
  16    umbrella        tyche.hpp
  17    mpi             mpi.hpp   (optional: NUTS across MPI processes; needs <mpi.h>, so not in tyche.hpp)

Rules, each a failure naming both files and their layers:
  - a header includes a header of a layer with a higher rank;
  - a header includes a header of another layer with the same rank: layers that share a rank
    (diagnostics and io) are peers that must not know each other;
  - a header lies outside every layer (a new folder goes into the table, with its rank);
  - a header includes a tyche header that does not exist (a path left behind by a move);
  - a header includes a tyche header by a relative path ("..."), not <tyche/...>;
  - a header outside backends/simd includes xsimd, or names xsimd:: in its code (comments and
    string literals aside): the rest of the library sees batches through tyche names.
Within one layer any include is allowed. There is no list of exceptions.

Usage: check_include_order.py [--root DIR] [--table] [--self-test]
  --root DIR    the include directory holding tyche/ (default: include/ next to tools/)
  --table       print the table and exit
  --self-test   check that a violation is reported (a small tree written to a temporary folder)
Exit status: 0 when every include points down the layers, 1 otherwise.
"""
import argparse
import os
import re
import sys
import tempfile

# (name, rank, paths): a path ending in "/" is a folder (everything below it), else one file.
LAYERS = [
    ("config", 0, ["config.hpp"]),
    ("scalar", 1, ["scalar/"]),
    ("random", 2, ["random/"]),
    ("backends/simd", 3, ["backends/simd/"]),
    ("concepts", 4, ["concepts.hpp"]),
    ("core", 5, ["core/"]),
    ("autodiff", 6, ["autodiff/"]),
    ("interval", 7, ["interval/"]),
    ("operations", 8, ["operations/"]),
    ("compile", 9, ["compile/"]),
    ("transforms", 10, ["transforms/"]),
    ("distributions", 11, ["distributions/", "distributions.hpp"]),
    ("model", 12, ["model/"]),
    ("samplers", 13, ["samplers/", "backends/cuda/"]),
    ("inference", 14, ["inference/"]),
    ("diagnostics", 15, ["diagnostics/"]),
    ("io", 15, ["io/"]),
    ("umbrella", 16, ["tyche.hpp"]),
    ("mpi", 17, ["mpi.hpp"]),
]

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')
STRING = re.compile(r'"(?:[^"\\]|\\.)*"')


def layer_of(path):
    """The layer (name, rank) of a path relative to include/tyche/, or None."""
    best = None
    for name, rank, paths in LAYERS:
        for p in paths:
            hit = path.startswith(p) if p.endswith("/") else path == p
            if hit and (best is None or len(p) > best[2]):
                best = (name, rank, len(p))
    return None if best is None else best[:2]


def headers(root):
    tyche = os.path.join(root, "tyche")
    for folder, _, files in os.walk(tyche):
        for f in files:
            if f.endswith((".hpp", ".cuh", ".h")):
                full = os.path.join(folder, f)
                yield os.path.relpath(full, tyche).replace(os.sep, "/"), full


def check(root):
    """The list of problems (strings) found under root/tyche."""
    problems = []
    tyche = os.path.join(root, "tyche")
    for rel, full in sorted(headers(root)):
        me = layer_of(rel)
        shown = "include/tyche/" + rel
        if me is None:
            problems.append(f"{shown} is in no layer of tools/check_include_order.py's table: "
                            "add its folder there, with the rank of its place in the data flow")
            continue
        with open(full, encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                m = INCLUDE.match(line)
                if not m:
                    code = STRING.sub('""', line.split("//", 1)[0])
                    if "xsimd::" in code and me[0] != "backends/simd":
                        problems.append(f"{shown}:{number} (layer {me[1]} {me[0]}) names xsimd:: "
                                        "outside backends/simd/: give the batch a tyche name there "
                                        "(lane_traits, lane_batch, ...)")
                    continue
                quote, target = m.groups()
                where = f"{shown}:{number}"
                if target.startswith("xsimd/") and me[0] != "backends/simd":
                    problems.append(f"{where} (layer {me[1]} {me[0]}) includes <{target}>: only "
                                    "backends/simd/ may include xsimd")
                if quote == '"':
                    if target.startswith("tyche/") or target.endswith((".hpp", ".cuh")):
                        problems.append(f'{where} includes "{target}": include tyche headers as '
                                        "<tyche/...>, never by a relative path")
                    continue
                if not target.startswith("tyche/"):
                    continue
                inner = target[len("tyche/"):]
                if not os.path.isfile(os.path.join(tyche, inner)):
                    problems.append(f"{where} includes <{target}>, which does not exist")
                    continue
                it = layer_of(inner)
                if it is None:
                    continue  # reported for that header itself
                if it[0] == me[0]:
                    continue
                if it[1] > me[1]:
                    problems.append(f"{where} (layer {me[1]} {me[0]}) includes <{target}> (layer "
                                    f"{it[1]} {it[0]}), which is above it: includes point down the "
                                    "layers")
                elif it[1] == me[1]:
                    problems.append(f"{where} (layer {me[1]} {me[0]}) includes <{target}> (layer "
                                    f"{it[1]} {it[0]}): layers of one rank are peers and must not "
                                    "include each other")
    return problems


def self_test():
    """True when a small tree with a violation of each kind gets every one reported."""
    files = {
        "tyche/config.hpp": "#pragma once\n",
        "tyche/scalar/a.hpp": "#pragma once\n#include <tyche/config.hpp>\n#include <tyche/compile/b.hpp>\n",
        "tyche/compile/b.hpp": '#pragma once\n#include "../scalar/a.hpp"\n#include <tyche/core/gone.hpp>\n',
        "tyche/io/c.hpp": "#pragma once\n#include <tyche/diagnostics/d.hpp>\n#include <xsimd/xsimd.hpp>\n",
        "tyche/diagnostics/d.hpp": "#pragma once\n",
        "tyche/elsewhere/e.hpp": "#pragma once\n",
        "tyche/core/f.hpp": "#pragma once\n#include <tyche/config.hpp>\n// #include <tyche/model/x.hpp>\n"
                            "// xsimd::batch in a comment\nconst char* s = \"xsimd::batch in a string\";\n",
        "tyche/model/g.hpp": "#pragma once\nusing b = xsimd::batch<double>;\n",
    }
    expected = [
        "scalar/a.hpp:3 (layer 1 scalar) includes <tyche/compile/b.hpp> (layer 9 compile)",
        'compile/b.hpp:2 includes "../scalar/a.hpp"',
        "compile/b.hpp:3 includes <tyche/core/gone.hpp>, which does not exist",
        "io/c.hpp:2 (layer 15 io) includes <tyche/diagnostics/d.hpp> (layer 15 diagnostics)",
        "io/c.hpp:3 (layer 15 io) includes <xsimd/xsimd.hpp>",
        "elsewhere/e.hpp is in no layer",
        "model/g.hpp:2 (layer 12 model) names xsimd::",
    ]
    with tempfile.TemporaryDirectory() as root:
        for rel, text in files.items():
            os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
            with open(os.path.join(root, rel), "w", encoding="utf-8") as f:
                f.write(text)
        problems = check(root)
    ok = True
    for e in expected:
        if not any(e in p for p in problems):
            print(f"self-test: not reported: {e}")
            ok = False
    if len(problems) != len(expected):
        print(f"self-test: {len(problems)} problems reported, {len(expected)} expected:")
        for p in problems:
            print("  " + p)
        ok = False
    print("self-test: every violation reported" if ok else "self-test: FAILED")
    return ok


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--root", default=os.path.join(here, "..", "include"),
                        help="the include directory that holds tyche/")
    parser.add_argument("--table", action="store_true", help="print the layers and exit")
    parser.add_argument("--self-test", action="store_true",
                        help="check that violations are reported, on a small temporary tree")
    args = parser.parse_args()
    if args.table:
        for name, rank, paths in LAYERS:
            print(f"{rank:>4}  {name:<14}  {', '.join(paths)}")
        return 0
    if args.self_test:
        return 0 if self_test() else 1
    problems = check(os.path.normpath(args.root))
    for p in problems:
        print(p)
    count = sum(1 for _ in headers(os.path.normpath(args.root)))
    if problems:
        print(f"{len(problems)} include(s) against the layers in {count} headers "
              "(the table and the rules: tools/check_include_order.py --help)")
        return 1
    print(f"{count} headers: every include points down the layers")
    return 0


if __name__ == "__main__":
    sys.exit(main())
