# Helpers for guest scripts (sourced). Each check prints one line the host counts:
#   MLX5RS-TEST: PASS <name>   or   MLX5RS-TEST: FAIL <name> (<why>)
REPO=${MLX5RS_REPO:?}
KO=$REPO/mlx5_rs.ko
FAILED=0

pass() { echo "MLX5RS-TEST: PASS $1"; }
fail() { echo "MLX5RS-TEST: FAIL $1 ($2)"; FAILED=1; }

# check NAME CMD...: PASS if CMD exits 0.
check() {
	name=$1; shift
	if out=$("$@" 2>&1); then pass "$name"; else fail "$name" "$(echo "$out" | tail -n 3 | tr '\n' ' ')"; fi
}

# emuctl JSON: one request to the emulated ConnectX's control socket, reply on stdout.
# (EMUCTL_DEV selects another function's channel; see emuctl_n.)
emuctl() {
	_dev=${EMUCTL_DEV:-/dev/mlx5emu-ctl}
	[ -e "$_dev" ] || { echo "no emulator control channel $_dev" >&2; return 1; }
	exec 3<>"$_dev"
	printf '%s\n' "$1" >&3
	timeout 10 head -n 1 <&3
	exec 3>&-
}

# emu_stat PYEXPR: evaluate PYEXPR over the emulator's stats (dict `d`), e.g.
#   emu_stat 'd["pages"]["held"]'
# A plain lookup (d["key"]["key"]...) is asked of the emulator directly (request
# `get`, same text as Python's print); anything else runs Python, which costs ~1 s
# per call in the TCG guest.
emu_stat() {
	_path=$(printf '%s\n' "$1" | sed -n -E '/^d(\["[A-Za-z0-9_]+"\])+$/{s/^d//;s/\]\[/,/g;p;}')
	if [ -n "$_path" ]; then
		_r=$(emuctl "{\"cmd\":\"get\",\"path\":$_path}")
		case "$_r" in
		'{"ok":true,"text":"'*)
			_r=${_r#'{"ok":true,"text":"'}
			printf '%s\n' "${_r%%'","value":'*}"
			return 0 ;;
		esac
	fi
	emuctl '{"cmd":"stats"}' | python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"
}

# emu_heal: undo every fault the emulator can inject (surprise removal, FW fatal,
# command injections) and reset the function to its power-on state.
emu_heal() {
	emuctl '{"cmd":"surprise_removal","enable":false}' >/dev/null
	emuctl '{"cmd":"clear_health"}' >/dev/null
	emuctl '{"cmd":"clear_injections"}' >/dev/null
	emuctl '{"cmd":"reset"}' >/dev/null
}

# Protocol violations the emulated device counted (all of them, cumulative).
violations() { emu_stat 'd["violations"]'; }

# Milliseconds of the guest's wall clock.
now_ms() { echo $(($(date +%s%N) / 1000000)); }

# The PCI address of the emulated ConnectX (first 15b3 function).
mlx_bdf() {
	for d in /sys/bus/pci/devices/*; do
		[ "$(cat "$d/vendor")" = 0x15b3 ] && { basename "$d"; return 0; }
	done
	return 1
}

# Several functions (tests/vm/vm.sh --functions N): function I (0-based) is the I-th
# 15b3 function in PCI address order, served by its own emulator, whose control channel
# is /dev/mlx5emu-ctl for I = 0 and /dev/mlx5emu<I>-ctl otherwise. The helpers above
# address function 0; these take I first.

# mlx_bdfs: the PCI addresses of the emulated ConnectX functions, one a line, in order.
mlx_bdfs() {
	for d in /sys/bus/pci/devices/*; do
		[ "$(cat "$d/vendor")" = 0x15b3 ] && basename "$d"
	done
	return 0
}
# mlx_bdf_n I: the PCI address of function I.
mlx_bdf_n() {
	_b=$(mlx_bdfs | sed -n "$(($1 + 1))p")
	[ -n "$_b" ] && echo "$_b"
}
# emuctl_dev I: the control channel of function I's emulator.
emuctl_dev() { if [ "$1" = 0 ]; then echo /dev/mlx5emu-ctl; else echo "/dev/mlx5emu$1-ctl"; fi; }
# emu_count: how many emulators have a control channel in this guest.
emu_count() {
	_n=0
	while [ -e "$(emuctl_dev $_n)" ]; do _n=$((_n + 1)); done
	echo $_n
}
# emuctl_n I JSON, emu_stat_n I PYEXPR, emu_heal_n I: emuctl, emu_stat, emu_heal of
# function I (in a subshell, so function 0's channel stays the default).
emuctl_n() { (EMUCTL_DEV=$(emuctl_dev "$1") && emuctl "$2"); }
emu_stat_n() { (EMUCTL_DEV=$(emuctl_dev "$1") && emu_stat "$2"); }
emu_heal_n() { (EMUCTL_DEV=$(emuctl_dev "$1") && emu_heal); }

# Lines of the kernel log since the mark set by dmesg_mark.
dmesg_mark() { MARK=$(dmesg | wc -l); }
dmesg_since() { dmesg | tail -n +"$((MARK + 1))"; }

# kmemleak: scan and fail NAME if anything leaked since the last clear. kmemleak
# reports only objects older than 5 s, so a leak in a scenario's last seconds shows in
# a later scan; tests/guest/check.sh ends with a scan after such a wait (one scan takes
# ~2.5 s in the TCG guest).
check_kmemleak() {
	f=/sys/kernel/debug/kmemleak
	[ -w $f ] || { fail "$1" "kmemleak not available"; return; }
	echo scan >$f
	leaks=$(grep -c '^unreferenced object' $f)
	if [ "$leaks" -eq 0 ]; then pass "$1"; else cat $f; fail "$1" "$leaks unreferenced objects"; fi
	echo clear >$f
}
