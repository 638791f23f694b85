#!/usr/bin/env bash
# `make soak`: the endurance sizes (tests/guest/soak.sh) in one VM boot, judged like
# make check's boots; the last line is the judge's "vm: N passed, N failed". Its
# figures (Documentation/testing.md, "make soak"), the first whole run (2026-12-05,
# 2-core host at load 9-17 beside other TCG guests): the data-path endurance 554 s, the
# 100,000-cycle storm 2,542 s, the probe loop 308 s, page-drift.sh 341 s, the pyverbs
# soak set 341 s; 4,130 s for the boot. Its timeout is 4 h
# (MLX5RS_SOAK_TIMEOUT, seconds).
set -eu
. "$(dirname "$0")/lib.sh"
"$REPO/tests/vm/module.sh"
exec "$REPO/tests/vm/vm.sh" --timeout "${MLX5RS_SOAK_TIMEOUT:-14400}" --run tests/guest/soak.sh "$@"
