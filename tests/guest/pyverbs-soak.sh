# The pyverbs files that do not fit make check's budget (scenario 73-pyverbs with
# PYVERBS_SET=soak: the generic and test_mlx5_* files outside its CHECK list), both
# drivers, the same judgement; for `make soak` or by hand:
#   tests/vm/vm.sh --timeout 5400 --run tests/guest/pyverbs-soak.sh
PYVERBS_SET=soak exec sh "$MLX5RS_REPO/tests/scenarios-ib/73-pyverbs.sh"
