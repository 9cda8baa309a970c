# Builds the CMake trees of tools/test.sh (Unix Makefiles) under one GNU make jobserver:
#   make -j 2 -f tools/build_trees.mk TREES="build/clang build/gcc"
# Each tree's make takes its compile slots from the same pool, so both trees' objects share the
# cores: the long last objects of one tree (a sanitized unity test file of 100 s, the CUDA test's
# 130 s) no longer leave a core idle while the next tree waits to start.
TREES ?= build/gcc
.PHONY: all $(TREES)
all: $(TREES)
$(TREES):
	+$(MAKE) -C $@ --no-print-directory
