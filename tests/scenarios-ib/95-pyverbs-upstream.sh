# Scenario: rdma-core's pyverbs files that the emulated data path serves beyond
# 73-pyverbs' CHECK list, on upstream mlx5_core + mlx5_ib alone (73-pyverbs.sh with
# PYVERBS_SET=upstream: its UPSTREAM list, why each file is there or not in
# Documentation/ib-vs-upstream.md). Asserted, as in 73 for upstream: each test's outcome
# is the one kept in tests/guest/pyverbs.upstream, the table and the reasons of every
# skip and error in Documentation/ib-vs-upstream.md are the ones this run generates
# (tests/pyverbs-doc.sh <console log>), the unload leaves no emulator object, page or
# violation, no kmemleak report. mlx5_rs runs these files in make soak
# (tests/guest/pyverbs-soak.sh); its data path is issue 23's.
PYVERBS_SET=upstream exec sh "$MLX5RS_REPO/tests/scenarios-ib/73-pyverbs.sh"
