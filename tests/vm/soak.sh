#!/usr/bin/env bash
# `make soak`: the endurance sizes (tests/guest/soak.sh) in one VM boot, judged like
# make check's boots; the last line is the judge's "vm: N passed, N failed". Its
# figures (Documentation/testing.md, "make soak"): the 100,000-cycle storm 1,226 s,
# the probe loop 207 s, page-drift.sh 343 s and the pyverbs soak set 844 s under TCG
# on a 2-core host (2026-12-05); the boot's timeout is 4 h
# (MLX5RS_SOAK_TIMEOUT, seconds).
set -eu
. "$(dirname "$0")/lib.sh"
"$REPO/tests/vm/module.sh"
exec "$REPO/tests/vm/vm.sh" --timeout "${MLX5RS_SOAK_TIMEOUT:-14400}" --run tests/guest/soak.sh "$@"
