# Guest script of `make upstream`: load the upstream C mlx5_core on the emulated
# ConnectX and show what it printed.
. "$MLX5RS_REPO/tests/guest/lib.sh"
sh "$REPO/tests/scenarios/90-upstream-oracle.sh"
