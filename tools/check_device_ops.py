#!/usr/bin/env python3
"""Every op struct of include/tyche (`struct <name>_map`, the op contract of
autodiff/vector_ops.hpp) must be instantiated in device code by
tests/cuda/compile_only/every_op.cu (between `// OPS BEGIN` and `// OPS END`) or named in that
file's list of ops not instantiated there, so that a __host__-only function reached from an op's
forward or reverse pass is found by nvcc in CI rather than by the first user with a GPU.

usage: python3 tools/check_device_ops.py [--root DIR]   (exit 1 and the missing names if any)
"""
import argparse
import pathlib
import re
import sys


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", default=str(pathlib.Path(__file__).resolve().parent.parent))
    root = pathlib.Path(parser.parse_args().root)
    ops = set()
    for header in sorted((root / "include" / "tyche").rglob("*.hpp")):
        for name in re.findall(r"^struct ([a-z_0-9]+_map)\b(?!\s*<)", header.read_text(), re.M):
            if not name.startswith("is_"):  # traits such as is_segment_map
                ops.add(name)
    source = (root / "tests" / "cuda" / "compile_only" / "every_op.cu").read_text()
    begin, end = source.index("// OPS BEGIN"), source.index("// OPS END")
    listed = set(re.findall(r"\b([a-z_0-9]+_map)\b", source[begin:end]))
    excused = set(re.findall(r"\b([a-z_0-9]+_map)\b", source[end:]))
    missing = sorted(ops - listed - excused)
    if missing:
        print("op structs not instantiated in tests/cuda/compile_only/every_op.cu (add them between "
              "OPS BEGIN and OPS END, or say below OPS END why not):")
        for name in missing:
            print("  " + name)
        return 1
    print(f"{len(ops)} op structs: {len(ops & listed)} instantiated in device code, {len(ops - listed)} excused")
    return 0


if __name__ == "__main__":
    sys.exit(main())
