# Scenario (two functions, tests/vm/vm.sh --functions 2): one mlx5_rs instance drives two
# ConnectX functions, each served by its own emulator. Both bind and get their own
# debugfs directory under the module's root; NOP storms run on both at once and each
# emulator counts exactly its own NOPs; unbinding either function leaves the other
# answering commands with its files intact; rebinding works, one at a time and both at
# once (concurrent probes and removes); rmmod leaves both ledgers empty.
. "$MLX5RS_REPO/tests/guest/lib.sh"
drv=/sys/bus/pci/drivers/mlx5_rs
root=/sys/kernel/debug/mlx5_rs
check twofn.two-functions test "$(mlx_bdfs | wc -l)" = 2
check twofn.two-control-channels test "$(emu_count)" = 2
b0=$(mlx_bdf_n 0) && b1=$(mlx_bdf_n 1) || { fail twofn.addresses "fewer than two 15b3 functions"; exit 1; }
echo "function 0: $b0, function 1: $b1"

bound() { [ "$(basename "$(readlink "/sys/bus/pci/devices/$1/driver" 2>/dev/null)")" = mlx5_rs ]; }
# emu_nops I: NOPs emulator I completed with status OK: 0 before the first (no such
# entry yet), -1 without a usable reply (so every count check fails).
emu_nops() {
	_r=$(emuctl_n "$1" '{"cmd":"get","path":["commands","NOP","OK"]}')
	case "$_r" in
	'{"ok":true,"text":"'*) _r=${_r#'{"ok":true,"text":"'}; _r=${_r%%'"'*} ;;
	'{"error":"get: no '*) _r=0 ;;
	*) _r=-1 ;;
	esac
	case "$_r" in '' | *[!0-9-]*) echo -1 ;; *) echo "$_r" ;; esac
}
# field BDF NAME: a field of that function's last storm result ("nops 100 callers 1 errors 0 ...").
field() { tr ' ' '\n' <"$root/$1/nop_storm" | sed -n "/^$2\$/{n;p;}"; }
# storm NAME BDF FN NOPS CALLERS: a storm on one function, checked on both sides.
storm() {
	_e=$(emu_nops "$3")
	echo "$4 $5" >"$root/$2/nop_storm"
	cat "$root/$2/nop_storm"
	check "$1.all-complete" test "$(field "$2" nops)" = "$4"
	check "$1.no-errors" test "$(field "$2" errors)" = 0
	check "$1.emulator-counted" test "$(($(emu_nops "$3") - _e))" = "$4"
}

dmesg_mark
check twofn.insmod insmod "$KO"
check twofn.fn0-bound bound "$b0"
check twofn.fn1-bound bound "$b1"
check twofn.fn0-initialized test "$(emu_stat_n 0 'd["function"]["initialized"]')" = True
check twofn.fn1-initialized test "$(emu_stat_n 1 'd["function"]["initialized"]')" = True
# Each function has its own directory under the one root.
check twofn.fn0-debugfs test -w "$root/$b0/nop_storm"
check twofn.fn1-debugfs test -w "$root/$b1/nop_storm"
# Their interrupts are named after the function.
check twofn.fn0-irq-named grep -q "mlx5_rs_ctrl@pci:$b0" /proc/interrupts
check twofn.fn1-irq-named grep -q "mlx5_rs_ctrl@pci:$b1" /proc/interrupts
check twofn.probe-no-debugfs-errors sh -c "! dmesg | tail -n +$((MARK + 1)) | grep -a 'debugfs: .*already exists'"

# Both at once: different sizes, so a storm counted by the wrong emulator shows.
e0=$(emu_nops 0) e1=$(emu_nops 1)
echo "3000 8" >"$root/$b0/nop_storm" &
p0=$!
echo "5000 8" >"$root/$b1/nop_storm" &
p1=$!
wait $p0; r0=$?
wait $p1; r1=$?
cat "$root/$b0/nop_storm" "$root/$b1/nop_storm"
check twofn.storm-both.fn0-write-ok test $r0 = 0
check twofn.storm-both.fn1-write-ok test $r1 = 0
check twofn.storm-both.fn0-all-complete test "$(field "$b0" nops)" = 3000
check twofn.storm-both.fn1-all-complete test "$(field "$b1" nops)" = 5000
check twofn.storm-both.fn0-no-errors test "$(field "$b0" errors)" = 0
check twofn.storm-both.fn1-no-errors test "$(field "$b1" errors)" = 0
check twofn.storm-both.fn0-emulator-counted-own test "$(($(emu_nops 0) - e0))" = 3000
check twofn.storm-both.fn1-emulator-counted-own test "$(($(emu_nops 1) - e1))" = 5000
# The driver's per-function statistics: NOPs of its own function only.
check twofn.storm-both.fn0-driver-stats test "$(kv_rec "$root/$b0/cmd_stats" opcode=NOP count errors timeouts)" = "3000 0 0"
check twofn.storm-both.fn1-driver-stats test "$(kv_rec "$root/$b1/cmd_stats" opcode=NOP count errors timeouts)" = "5000 0 0"

# Unbinding function 0 leaves function 1 running, and the other way round.
for k in 0 1; do
	o=$((1 - k))
	eval "bk=\$b$k bo=\$b$o"
	check "twofn.unbind-fn$k" sh -c "echo $bk >$drv/unbind"
	check "twofn.unbind-fn$k.unbound" sh -c "! test -e /sys/bus/pci/devices/$bk/driver"
	check "twofn.unbind-fn$k.its-debugfs-gone" test ! -e "$root/$bk"
	check "twofn.unbind-fn$k.root-stays" test -d "$root"
	check "twofn.unbind-fn$k.emu$k-disabled" test "$(emu_stat_n $k 'd["function"]["enabled"]')" = False
	check "twofn.unbind-fn$k.emu$k-pages-returned" test "$(emu_stat_n $k 'd["pages"]["held"]')" = 0
	check "twofn.unbind-fn$k.fn$o-still-bound" bound "$bo"
	check "twofn.unbind-fn$k.fn$o-debugfs-stays" test -w "$root/$bo/nop_storm" -a -r "$root/$bo/cmd_stats"
	check "twofn.unbind-fn$k.emu$o-still-enabled" test "$(emu_stat_n $o 'd["function"]["enabled"]')" = True
	storm "twofn.unbind-fn$k.fn$o-answers" "$bo" $o 1000 4
	check "twofn.rebind-fn$k" sh -c "echo $bk >$drv/bind"
	check "twofn.rebind-fn$k.bound" bound "$bk"
	check "twofn.rebind-fn$k.debugfs" test -w "$root/$bk/nop_storm"
	storm "twofn.rebind-fn$k.answers" "$bk" $k 500 2
done

# Both at once: concurrent removes, then concurrent probes (module-wide state under
# concurrency: the shutdown registry, the debugfs root).
echo "$b0" >$drv/unbind &
p0=$!
echo "$b1" >$drv/unbind &
p1=$!
wait $p0; r0=$?
wait $p1; r1=$?
check twofn.unbind-both-at-once test "$r0 $r1" = "0 0"
check twofn.unbind-both.none-bound sh -c "! test -e /sys/bus/pci/devices/$b0/driver && ! test -e /sys/bus/pci/devices/$b1/driver"
check twofn.unbind-both.no-function-dirs test ! -e "$root/$b0" -a ! -e "$root/$b1"
check twofn.unbind-both.pages-returned test "$(emu_stat_n 0 'd["pages"]["held"]') $(emu_stat_n 1 'd["pages"]["held"]')" = "0 0"
echo "$b0" >$drv/bind &
p0=$!
echo "$b1" >$drv/bind &
p1=$!
wait $p0; r0=$?
wait $p1; r1=$?
check twofn.bind-both-at-once test "$r0 $r1" = "0 0"
check twofn.bind-both.fn0-bound bound "$b0"
check twofn.bind-both.fn1-bound bound "$b1"
storm twofn.bind-both.fn0-answers "$b0" 0 500 2
storm twofn.bind-both.fn1-answers "$b1" 1 500 2

check twofn.rmmod rmmod mlx5_rs
check twofn.rmmod.none-bound sh -c "! test -e /sys/bus/pci/devices/$b0/driver && ! test -e /sys/bus/pci/devices/$b1/driver"
check twofn.rmmod.debugfs-root-gone test ! -e "$root"
for k in 0 1; do
	check "twofn.rmmod.emu$k-pages-all-returned" test "$(emu_stat_n $k 'd["pages"]["held"]')" = 0
	check "twofn.rmmod.emu$k-hca-disabled" test "$(emu_stat_n $k 'd["function"]["enabled"]')" = False
	check "twofn.rmmod.emu$k-no-violations" test "$(emu_stat_n $k 'd["violations"]')" = 0
	check "twofn.rmmod.emu$k-no-dma-errors" test "$(emu_stat_n $k 'd["dma_errors"]')" = 0
done
check_kmemleak twofn.no-leaks
[ "$FAILED" = 0 ]
