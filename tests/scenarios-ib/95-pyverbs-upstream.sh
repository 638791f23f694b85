# Scenario: rdma-core's pyverbs files that the emulated data path serves beyond
# 73-pyverbs' CHECK list, traffic tests included, on upstream mlx5_core + mlx5_ib and
# then on mlx5_rs (73-pyverbs.sh with PYVERBS_SET=upstream: its UPSTREAM list, why each
# file is there or not in Documentation/ib-vs-upstream.md; the set keeps the name it
# had when it ran on upstream alone). Asserted, as 73 asserts its set: upstream's
# outcome of each test is the one kept in tests/guest/pyverbs.upstream, no test goes
# worse on mlx5_rs than on upstream unless tests/guest/pyverbs.differences lists it
# with its reason, the table and the reasons of every skip and error in
# Documentation/ib-vs-upstream.md are the ones this run generates
# (tests/pyverbs-doc.sh <console log>), each driver's unload leaves no emulator
# object, page or violation, no kmemleak report.
PYVERBS_SET=upstream exec sh "$MLX5RS_REPO/tests/scenarios-ib/73-pyverbs.sh"
