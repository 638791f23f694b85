# Helpers for guest scripts (sourced by every scenario and runner). Sourcing it runs no
# command: it sets the variables below and defines functions, by concern:
#   lib/checks.sh   pass, fail, check, case_lines (helpers held to their case lists),
#                   wait_for (a sysfs file reading a value),
#                   kernel log marks and waits, kmemleak, now_ms
#   lib/emu.sh      the emulator's control channel (emuctl, emu_stat, emu_heal, live,
#                   cmds_ok ...), the emulated functions' PCI addresses
#   lib/module.sh   insmod of mlx5_rs with its dependencies, our debugfs records (kv_rec)
#   lib/pages.sh    page_owner windows (pages left after unload), pinned pages,
#                   settled MemAvailable
#   lib/ib.sh       the InfiniBand scenarios' start and end, IB device lookups,
#                   ibv_devinfo and task_struct checks
# The scenario runner (tests/guest/run-scenarios.sh) runs a folder of scenarios.
REPO=${MLX5RS_REPO:?}
KO=$REPO/mlx5_rs.ko
FAILED=0
. "$REPO/tests/guest/lib/checks.sh"
. "$REPO/tests/guest/lib/emu.sh"
. "$REPO/tests/guest/lib/module.sh"
. "$REPO/tests/guest/lib/pages.sh"
. "$REPO/tests/guest/lib/ib.sh"
. "$REPO/tests/guest/lib/progs.sh"
gap_mark
