# The emulated ConnectX's control channel and the functions it serves (sourced by
# tests/guest/lib.sh; defines functions only).

# emuctl JSON: one request to the emulated ConnectX's control socket, reply on stdout.
# (EMUCTL_DEV selects another function's channel; see emuctl_n.)
# emuctl_r JSON: the same, the reply in EMU_REPLY instead (no subshell).
# Both read the reply with the shell's `read`: a process costs ~0.1 s in the TCG guest
# with kmemleak and page_owner, and these run hundreds of times a boot. No timeout: the
# emulator answers every request; if it dies, QEMU drops the port's host side and the
# read returns end-of-file (virtio_console); a hung emulator is the VM's timeout.
emuctl_r() {
	EMU_REPLY=""
	_dev=${EMUCTL_DEV:-/dev/mlx5emu-ctl}
	[ -e "$_dev" ] || { echo "no emulator control channel $_dev" >&2; return 1; }
	exec 3<>"$_dev"
	printf '%s\n' "$1" >&3
	IFS= read -r EMU_REPLY <&3
	_rc=$?
	exec 3>&-
	[ $_rc = 0 ] || echo "no reply from the emulator on $_dev" >&2
	return $_rc
}
emuctl() { emuctl_r "$1" && printf '%s\n' "$EMU_REPLY"; }

# emu_stat PYEXPR: evaluate PYEXPR over the emulator's stats (dict `d`), e.g.
#   emu_stat 'd["pages"]["held"]'
# A plain lookup (d["key"]["key"]...) is asked of the emulator directly (request
# `get`, same text as Python's print) without starting a process; anything else runs
# Python, which costs ~1 s per call in the TCG guest.
emu_stat() {
	# d["a"]["b"] -> ["a","b"]; anything else (or a key outside [A-Za-z0-9_]) -> Python.
	_path=""
	case "$1" in
	*[!A-Za-z0-9_\"\[\]]* | d\[\"\"\]*) ;;
	d\[\"*\"\])
		_p=${1#d}
		while :; do
			case "$_p" in
			*'"]["'*) _p="${_p%%'"]["'*}\",\"${_p#*'"]["'}" ;;
			*) break ;;
			esac
		done
		# Now ["k","k",...]: a plain lookup if every key is non-empty [A-Za-z0-9_].
		_in=${_p#'["'}; _in=${_in%'"]'}
		while :; do
			case "$_in" in
			'","'* | *'","' | *'",""'*) break ;;
			*'","'*) _in="${_in%%'","'*}${_in#*'","'}" ;;
			*) break ;;
			esac
		done
		case "$_in" in '' | *[!A-Za-z0-9_]*) ;; *) _path=$_p ;; esac ;;
	esac
	if [ -n "$_path" ]; then
		emuctl_r "{\"cmd\":\"get\",\"path\":$_path}" || return 1
		case "$EMU_REPLY" in
		'{"ok":true,"text":"'*)
			_r=${EMU_REPLY#'{"ok":true,"text":"'}
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

# live TYPE: the emulator's live objects of TYPE (pd, cq, qp, mkey, ...; 0 if none).
live() { emu_count_at 2 objects live "$1"; }
# cmds_ok OPCODE: how many OPCODE commands the emulator completed with status OK.
cmds_ok() { emu_count_at 1 commands "$1" OK; }
# uars_held: UARs the device has handed out and not taken back (the core's own and
# contexts').
uars_held() { echo $(($(cmds_ok ALLOC_UAR) - $(cmds_ok DEALLOC_UAR))); }
# emu_count_at FROM KEY...: the count at d[KEY][KEY]... of the emulator's stats, read
# with its `get` request (no Python); 0 where the stats have no entry from key number
# FROM on (0-based: an object kind never created, an opcode never run or never OK). A
# key before FROM that is missing is an error (a misspelt category does not read 0).
emu_count_at() {
	_from=$1 _path=""
	shift
	for _k; do _path="$_path${_path:+,}\"$_k\""; done
	emuctl_r "{\"cmd\":\"get\",\"path\":[$_path]}" || return 1
	case "$EMU_REPLY" in
	'{"ok":true,"text":"'*)
		_r=${EMU_REPLY#'{"ok":true,"text":"'}
		printf '%s\n' "${_r%%'","value":'*}"
		return 0 ;;
	*'at path position '[0-9]*)
		_pos=${EMU_REPLY##*at path position }
		_pos=${_pos%%[!0-9]*}
		[ "$_pos" -ge "$_from" ] && { echo 0; return 0; } ;;
	esac
	echo "emu_count_at $*: $EMU_REPLY" >&2
	return 1
}
# case_lines FILE: each "name: PASS|FAIL (detail)" line of a guest helper's output
# becomes a check of that name; other lines are shown.
