# Scenario 73-pyverbs on a chosen list of pyverbs files (exploration, reproducing one
# file's behaviour): vm.sh passes no environment to the guest, so the list is read
# from tests/guest/pyverbs-files.list (one line, file
# names without .py), written by hand before the boot.
#   echo test_flow test_mlx5_dma_memcpy >tests/guest/pyverbs-files.list
#   tests/vm/vm.sh --timeout 2400 --run tests/guest/pyverbs-files.sh
# rdma-core's tests package imports its test files in name order, and a test_mlx5_*
# file imported before any generic one that imports tests.utils fails on a circular
# import (tests.utils <-> tests.mlx5_base): start such a list with e.g. test_flow.
PYVERBS_FILES=$(cat "$MLX5RS_REPO/tests/guest/pyverbs-files.list") PYVERBS_SET=soak \
	exec sh "$MLX5RS_REPO/tests/scenarios-ib/73-pyverbs.sh"
