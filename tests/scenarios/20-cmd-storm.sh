# Scenario: NOP storms through the command queue, 1 caller and 32 concurrent callers
# (more callers than slots: callers must sleep for a slot, none may fail).
. "$MLX5RS_REPO/tests/guest/lib.sh"
bdf=$(mlx_bdf) || { fail storm.device-present "no 15b3 function"; exit 1; }
check storm.insmod insmod "$KO"
d=/sys/kernel/debug/mlx5_rs/$bdf
check storm.debugfs-present test -w "$d/nop_storm"

# field NAME: a field of the last storm result ("nops 100 callers 1 errors 0 ...").
field() { tr ' ' '\n' <"$d/nop_storm" | sed -n "/^$1\$/{n;p;}"; }

echo "2000 1" >"$d/nop_storm"; cat "$d/nop_storm"
check storm.1-caller-all-complete test "$(field nops)" = 2000
check storm.1-caller-no-errors test "$(field errors)" = 0
echo "20000 32" >"$d/nop_storm"; cat "$d/nop_storm"
check storm.32-callers-all-complete test "$(field nops)" = 20000
check storm.32-callers-no-errors test "$(field errors)" = 0
check storm.32-callers-used test "$(field callers)" = 32
# Bad input is rejected, not parsed into something else.
check storm.rejects-garbage sh -c "! echo 'x y' >$d/nop_storm"
check storm.rejects-zero-callers sh -c "! echo '10 0' >$d/nop_storm"
cat "$d/cmd_stats"
nop=$(kv_rec "$d/cmd_stats" opcode=NOP count errors timeouts)
check storm.stats-count-nops test "$nop" = "22000 0 0"
check storm.emu-no-violations test "$(emu_stat 'd["violations"]')" = 0
check storm.rmmod rmmod mlx5_rs
check storm.emu-pages-all-returned test "$(emu_stat 'd["pages"]["held"]')" = 0
check_kmemleak storm.no-leaks
[ "$FAILED" = 0 ]
