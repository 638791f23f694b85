# Helpers for guest scripts (sourced). Each check prints one line the host counts:
#   MLX5RS-TEST: PASS <name>   or   MLX5RS-TEST: FAIL <name> (<why>)
REPO=${MLX5RS_REPO:?}
KO=$REPO/mlx5_rs.ko
FAILED=0

pass() { echo "MLX5RS-TEST: PASS $1"; }
fail() { echo "MLX5RS-TEST: FAIL $1 ($2)"; FAILED=1; }

# check NAME CMD...: PASS if CMD exits 0. A `test` runs in this shell (a process
# costs ~0.1 s in the TCG guest) and fails with its operands, e.g. "(test 5 = 0)".
check() {
	name=$1; shift
	if [ "$1" = test ]; then
		if "$@" 2>/dev/null; then pass "$name"; else fail "$name" "$*"; fi
		return
	fi
	if out=$("$@" 2>&1); then pass "$name"; else fail "$name" "$(echo "$out" | tail -n 3 | tr '\n' ' ')"; fi
}

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

# Milliseconds since boot (/proc/uptime, 10 ms resolution), read without a process.
now_ms() {
	read -r _up _ </proc/uptime
	echo $((${_up%.*} * 1000 + 1${_up#*.} * 10 - 1000))
}

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

# Records of our debugfs files (eqs, cmd_stats): one line of key=value pairs each.
# kv_rec FILE SEL KEY...: the values of KEY... (space-separated) in the first line of FILE
# that has every pair of SEL ("k=v k=v"; a bare "k": the line has key k); nothing if no
# line has. kv_recs: the same for every such line, one line each.
kv_recs() { _kv_recs 1 "$@"; }
kv_rec() { _kv_recs 0 "$@"; }
_kv_recs() {
	_kv_all=$1 _kv_file=$2 _kv_sel=$3; shift 3
	awk -v sel="$_kv_sel" -v keys="$*" -v all="$_kv_all" '{
		split("", f)
		for (i = 1; i <= NF; i++) { p = index($i, "="); if (p) f[substr($i, 1, p - 1)] = substr($i, p + 1) }
		n = split(sel, s, " "); ok = 1
		for (j = 1; j <= n; j++) {
			p = index(s[j], "="); k = p ? substr(s[j], 1, p - 1) : s[j]
			if (!(k in f)) ok = 0
			else if (p && f[k] != substr(s[j], p + 1)) ok = 0
		}
		if (!ok) next
		m = split(keys, kk, " "); out = ""
		for (j = 1; j <= m; j++) out = out (j > 1 ? " " : "") f[kk[j]]
		print out
		if (!all) exit
	}' "$_kv_file"
}

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

# foll_pins: pages pinned with FOLL_PIN and not yet released, system-wide
# (/proc/vmstat nr_foll_pin_acquired − released), exact: the per-CPU parts of the
# counters are folded into the totals first (a write to vm.stat_refresh); /proc/vmstat
# alone shows totals that lag by up to each CPU's stat threshold.
foll_pins() {
	echo 1 >/proc/sys/vm/stat_refresh
	awk '$1 == "nr_foll_pin_acquired" { a = $2 } $1 == "nr_foll_pin_released" { r = $2 } END { print a - r }' /proc/vmstat
}

# --- InfiniBand scenarios' common helpers ---------------------------------------------
# The IB scenarios' common start and end:
#   ib_scenario_start      the emulator healed, ib_uverbs loaded, the kernel log marked
#                          (LEVELS, WARN0, START) for the checks below
#   ib_load P              P.insmod of mlx5_rs and P.registered ("InfiniBand device
#                          registered" logged); sets dev to its IB device
#   ib_log_checks P        P.no-error-lines: no line of warning level or worse since the
#                          mark (the out-of-tree taint aside); P.no-kernel-warning: no
#                          WARNING, BUG or Call Trace
#   ib_unload_checks P     P.rmmod of mlx5_rs, P.rmmod.no-ib-device, then from the emulator P.emu-objects-destroyed,
#                          P.emu-pages-all-returned, P.emu-no-violations, and P.no-leaks
#                          (kmemleak); returns non-zero if any check of the scenario failed
ib_scenario_start() {
	emu_heal
	[ -e /sys/module/ib_uverbs ] || modprobe ib_uverbs
	LEVELS=emerg,alert,crit,err,warn
	WARN0=$(dmesg -l $LEVELS | wc -l)
	START=$(dmesg | wc -l)
}
ib_load() {
	dmesg_mark
	check "$1.insmod" insmod "$KO"
	check "$1.registered" wait_log 'InfiniBand device registered'
	dev=$(ibdev)
}
ib_log_checks() {
	dmesg -l $LEVELS | tail -n +$((WARN0 + 1)) | grep -a -v 'loading out-of-tree module taints kernel' >"/tmp/$1-errors"
	cat "/tmp/$1-errors"
	check "$1.no-error-lines" test ! -s "/tmp/$1-errors"
	check "$1.no-kernel-warning" sh -c "! dmesg | tail -n +$((START + 1)) | grep -a -q -E 'WARNING:|BUG:|Call Trace'"
}
ib_unload_checks() {
	check "$1.rmmod" rmmod mlx5_rs
	check "$1.rmmod.no-ib-device" test -z "$(ls /sys/class/infiniband 2>/dev/null | grep '^mlx5_')"
	check "$1.emu-objects-destroyed" test "$(emu_stat 'd["objects"]["total"]')" = 0
	check "$1.emu-pages-all-returned" test "$(emu_stat 'd["pages"]["held"]')" = 0
	check "$1.emu-no-violations" test "$(emu_stat 'd["violations"]')" = 0
	check_kmemleak "$1.no-leaks"
	[ "$FAILED" = 0 ]
}
# ibdev: the IB device of the function $bdf (the caller's mlx_bdf); fails if none.
ibdev() {
	for _d in /sys/bus/pci/devices/$bdf/infiniband/*; do
		[ -d "$_d" ] && { basename "$_d"; return 0; }
	done
	return 1
}
# uverbs_of IBDEV: its uverbs character device (uverbsN).
uverbs_of() {
	for _u in /sys/class/infiniband_verbs/uverbs*; do
		[ "$(cat "$_u/ibdev" 2>/dev/null)" = "$1" ] && { basename "$_u"; return 0; }
	done
	return 1
}
# wait_log PATTERN: up to 10 s for PATTERN in the log since dmesg_mark.
wait_log() {
	_i=0
	while ! dmesg_since | grep -a -q "$1" && [ $_i -lt 100 ]; do sleep 0.1; _i=$((_i + 1)); done
	dmesg_since | grep -a -q "$1"
}
# wait_line FILE PATTERN: up to 30 s for PATTERN in FILE.
wait_line() {
	_i=0
	while ! grep -q "$2" "$1" 2>/dev/null && [ $_i -lt 300 ]; do sleep 0.1; _i=$((_i + 1)); done
	grep -q "$2" "$1"
}
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
case_lines() {
	while IFS= read -r _l; do
		case $_l in
		*": PASS "*) pass "${_l%%: PASS*}" ;;
		*": FAIL "*) fail "${_l%%: FAIL*}" "${_l#*: FAIL }" ;;
		*) echo "$_l" ;;
		esac
	done <"$1"
}

# --- InfiniBand port, as the emulator reports it and rdma-core shows it ---------------
# ib_port_field KEY: field KEY of the emulator's IB port (the {"cmd":"ib_port"} reply).
ib_port_field() {
	emuctl '{"cmd":"ib_port"}' | python3 -c 'import json, sys; print(json.load(sys.stdin)["port"][sys.argv[1]])' "$1"
}

# check_ibv_devinfo PREFIX IBDEV: `ibv_devinfo -v -d IBDEV` succeeds and shows port 1
# active with the LID, SM LID and node GUID the emulator reports (checks
# PREFIX.ibv_devinfo*; the output stays in /tmp/ibv_devinfo.PREFIX). The same checks
# for upstream mlx5_ib and for mlx5-rs.
check_ibv_devinfo() {
	_di=/tmp/ibv_devinfo.$1
	check "$1.ibv_devinfo" sh -c "ibv_devinfo -v -d $2 >$_di 2>&1"
	head -n 40 "$_di"
	check "$1.ibv_devinfo-active" grep -q 'state:.*PORT_ACTIVE' "$_di"
	check "$1.ibv_devinfo-lid" grep -q "port_lid:[[:space:]]*$(ib_port_field lid)\$" "$_di"
	check "$1.ibv_devinfo-sm-lid" grep -q "sm_lid:[[:space:]]*$(ib_port_field sm_lid)\$" "$_di"
	# ibv_devinfo prints GUIDs as four groups of 4 hex digits.
	_ng=$(ib_port_field node_guid | sed -E 's/^0x(....)(....)(....)(....)$/\1:\2:\3:\4/')
	check "$1.ibv_devinfo-node-guid" grep -q "node_guid:[[:space:]]*$_ng" "$_di"
}

# check_open_no_task_leak PREFIX IBDEV: 40 `ibv_open_device`s (ibv_devinfo -d IBDEV) do
# not keep their processes' task_structs (check PREFIX.open-no-task-leak). libmlx5
# asks for a DEVX context first and retries without when the driver refuses it, as
# both drivers do on a device with cap log_max_uctx 0; the RDMA core's GET_CONTEXT
# ioctl then failed without dropping the task reference its restrack entry took
# (fixed in the test kernel by tests/kernel/patches/0001-*). kmemleak sees such a
# task_struct only when no stale pointer to it is left on a stack, which may take
# minutes, so this counts the task_struct cache instead: a leaking kernel keeps 40
# more, the slab's per-CPU slabs blur the count by a few.
task_structs() { cut -d' ' -f1 /sys/kernel/slab/task_struct/objects; }
check_open_no_task_leak() {
	_t0=$(task_structs)
	_i=0
	while [ $_i -lt 40 ]; do ibv_devinfo -d "$2" >/dev/null 2>&1; _i=$((_i + 1)); done
	# Reaped tasks are freed after an RCU grace period.
	_i=0
	while [ $(($(task_structs) - _t0)) -ge 20 ] && [ $_i -lt 50 ]; do sleep 0.2; _i=$((_i + 1)); done
	echo "$1: task_struct objects $_t0 before 40 opens, $(task_structs) after"
	check "$1.open-no-task-leak" test $(($(task_structs) - _t0)) -lt 20
}

# --- page_owner: pages (not slab objects) a module still holds after unload ----------
# kmemleak tracks slab, vmalloc and percpu objects, not pages from the page allocator,
# and firmware pages, EQ rings and mailboxes are exactly that. The test kernel runs
# with page_owner, whose show_stacks lists every allocation stack that holds pages now
# with its page count (nr_base_pages). After rmmod the frames inside the unloaded
# module print as raw addresses (0xffffffffc...), so:
#   po_mark [TAG]            before the load: baseline of the raw-frame stacks
#   insmod (wrapper below)   records where mlx5_rs's code lies after every load
#   check_page_owner NAME [TAG]  after rmmod: FAIL if a stack with a frame in mlx5_rs's
#                            code holds more pages than at po_mark
# TAG names a window (default "s"); windows may nest (tests/guest/check.sh keeps one
# around every scenario, a scenario its own inside it).
# A stack is the allocation's call chain (16 frames), so pages the kernel allocates on
# the module's behalf (dma_alloc_coherent, kmalloc_large, kvmalloc, work items and IRQ
# threads it runs) count too. Pages that stay allocated by design after their owner
# freed what it had are reported, not failed (PO_KEPT): slab pages (their objects are
# kmemleak's to judge; SLUB keeps empty slabs), DMA-API debug's entry pool (grows,
# never shrinks), percpu chunks, stack depot pools and kernel page tables. Pages the
# driver leaks on purpose because the device kept them (reclaim gave up) count as left
# too: a scenario that ends that way accounts for them (55-reclaim-bogus-take checks
# they are what the device kept, then reopens the window).
PO_STACKS=/sys/kernel/debug/page_owner_stacks/show_stacks
PO_DIR=/tmp/mlx5rs-page-owner
PO_KEPT='allocate_slab|new_slab|dma_debug_create_entries|pcpu_populate_chunk|pcpu_create_chunk|stack_depot_save|depot_alloc|__pte_alloc_kernel|__pmd_alloc|__pud_alloc|__p4d_alloc'

# po_summary [raw]: show_stacks as one line per stack holding pages:
# COUNT<TAB>frame;frame;... With "raw", only stacks with a frame no loaded code owns
# (a raw address). One read of show_stacks costs ~1 s in the TCG guest.
po_summary() {
	awk -v raw="${1:-}" '/^ / { sub(/^ /, ""); k = (k == "" ? $0 : k ";" $0); if ($0 ~ /^0x[0-9a-f]+$/) r = 1; next }
		/^nr_base_pages: / { if (k != "" && (raw == "" || r)) print $2 "\t" k; k = ""; r = 0; next }
		{ k = ""; r = 0 }' "$PO_STACKS"
}

# po_raw: the stacks of po_summary with a frame that no loaded code owns.
po_raw() { po_summary raw; }

# po_mark [TAG]: opens window TAG: baseline of raw-frame stacks, no module range yet.
po_mark() {
	mkdir -p "$PO_DIR"
	: >"$PO_DIR/ranges.${1:-s}"
	if [ -r "$PO_STACKS" ]; then po_raw >"$PO_DIR/base.${1:-s}"; else : >"$PO_DIR/base.${1:-s}"; fi
}

# po_note_module MOD [TAG]: records the address ranges of loaded module MOD's code in
# window TAG (default: every open window): core text and init text, each as
# [start, start + the module's total size), an over-estimate that only ever meets raw
# frames, i.e. code no longer loaded.
po_note_module() {
	_l=$(grep "^$1 " /proc/modules) || return 0
	_mod=$1 _tag=${2:-}
	# name size refs deps state address
	set -- $_l
	_size=$2 _r=""
	for _s in "$6" "$(cat "/sys/module/$_mod/sections/.init.text" 2>/dev/null)"; do
		_s=${_s#0x}
		# Module code lies in the top 2 GiB (x86_64 module area): the high half is all
		# ones and the low half plus the size stays below 2^32.
		case "$_s" in ffffffff????????) ;; *) continue ;; esac
		_lo=$(printf '%08x' $((0x${_s#ffffffff} + _size)))
		[ ${#_lo} = 8 ] && _r="$_r$_s ffffffff$_lo
"
	done
	for _f in "$PO_DIR"/ranges.${_tag:-*}; do
		[ -f "$_f" ] && printf '%s' "$_r" >>"$_f"
	done
}

# mlx5_rs.ko with the InfiniBand provider (Kconfig MLX5_RS_INFINIBAND, on in the test
# build) needs the symbols of ib_core and ib_uverbs (its UAR objects are uverbs
# objects), and insmod resolves no dependency: the test kernel builds both as modules,
# so they are loaded first (`modprobe ib_uverbs` loads ib_core too, as it would on a
# host). Done once per script, here, so a bare `insmod "$KO"` in a subshell works too.
[ -e /sys/module/ib_uverbs ] || modprobe ib_uverbs 2>/dev/null || true

# Every scenario loads the module with `insmod "$KO" ...`: remember where it went.
# KUnit runs the module's suites (mlx5_rs_*) at every load; after the first load of
# the boot, kunit's filter (writable at run time) is set to match no suite, so that the
# other loads of the boot do not run them again (about 18 s each under TCG).
insmod() {
	command insmod "$@"
	_rc=$?
	[ $_rc = 0 ] && po_note_module mlx5_rs
	[ $_rc = 0 ] && [ -w /sys/module/kunit/parameters/filter_glob ] &&
		echo none >/sys/module/kunit/parameters/filter_glob
	return $_rc
}

# po_module_pages MOD: pages held now by stacks with a frame in loaded module MOD.
po_module_pages() {
	po_summary | awk -F'\t' -v m="[$1]" 'index($2, m) { s += $1 } END { print s + 0 }'
}

# po_grown [TAG]: stacks with a raw frame inside a range of window TAG that hold more
# pages than at its po_mark: "leak|kept<TAB>PAGES<TAB>frames" per stack (kept =
# matches PO_KEPT). Stacks are compared with every frame outside the kernel image
# (a raw address, or `sym+off/len [module]`) folded to `?`: page_owner names frames
# when it prints them, so the frames of an unloaded module print as names of whatever
# module is loaded at those addresses later (ib_uverbs, say, over an mlx5_rs that
# leaked pages on purpose in an earlier scenario), and the same stack would otherwise
# look new. Pages a stack gains are still counted, whatever it folds to.
po_grown() {
	_t=${1:-s}
	po_raw >"$PO_DIR/after.$_t"
	awk -F'\t' -v ranges="$(cat "$PO_DIR/ranges.$_t" 2>/dev/null)" -v kept="$PO_KEPT" '
		BEGIN { n = split(ranges, R, /[ \n]+/) }
		function fold(k,   nf, F, i, o) {
			nf = split(k, F, ";"); o = ""
			for (i = 1; i <= nf; i++) {
				if (F[i] ~ /^0x[0-9a-f]+$/ || F[i] ~ /\[[A-Za-z0-9_]+\]$/) F[i] = "?"
				o = (o == "" ? F[i] : o ";" F[i])
			}
			return o
		}
		FILENAME == ARGV[1] { b[fold($2)] += $1; next }
		{ f = fold($2); a[f] += $1; raw[f] = (seen[f]++ ? raw[f] ";" : "") $2 }
		END {
			for (k in a) {
				d = a[k] - b[k]
				if (d <= 0) continue
				nf = split(raw[k], F, ";"); ours = 0
				for (i = 1; i <= nf && !ours; i++) {
					if (F[i] !~ /^0x[0-9a-f]+$/) continue
					x = substr(F[i], 3)
					while (length(x) < 16) x = "0" x
					for (j = 1; j + 1 <= n; j += 2)
						if ((x "") >= (R[j] "") && (x "") < (R[j + 1] "")) ours = 1
				}
				if (ours) print (k ~ kept ? "kept" : "leak") "\t" d "\t" raw[k]
			}
		}' "$PO_DIR/base.$_t" "$PO_DIR/after.$_t"
}

# check_page_owner NAME [TAG]: after rmmod, PASS if no page allocated with mlx5_rs code
# on its stack since po_mark TAG is still allocated (deferred frees — RCU, vfree work —
# get up to 3 s to land). Leaking stacks are printed with their page counts. The
# window is then opened again from now (as po_mark TAG would, without a second read).
check_page_owner() {
	[ -r "$PO_STACKS" ] || { fail "$1" "page_owner not available (boot with page_owner=on)"; return; }
	if grep -q '^mlx5_rs ' /proc/modules; then fail "$1" "mlx5_rs still loaded"; return; fi
	if [ ! -s "$PO_DIR/ranges.${2:-s}" ]; then
		# mlx5_rs was not loaded; still a new baseline (another module may have gone).
		po_mark "${2:-s}"
		pass "$1"
		return
	fi
	_try=0
	while :; do
		_g=$(po_grown "${2:-s}")
		_leak=$(printf '%s\n' "$_g" | awk -F'\t' '$1 == "leak" { s += $2 } END { print s + 0 }')
		[ "$_leak" = 0 ] || [ $_try -ge 3 ] && break
		_try=$((_try + 1))
		sleep 1
	done
	mv "$PO_DIR/after.${2:-s}" "$PO_DIR/base.${2:-s}"
	: >"$PO_DIR/ranges.${2:-s}"
	_kept=$(printf '%s\n' "$_g" | awk -F'\t' '$1 == "kept" { s += $2 } END { print s + 0 }')
	[ "$_kept" = 0 ] || echo "page_owner: $1: $_kept pages kept by design (slab, DMA-API debug pool, percpu, stack depot, page tables) on stacks through mlx5_rs"
	if [ "$_leak" = 0 ]; then pass "$1"; return; fi
	printf '%s\n' "$_g" | awk -F'\t' '$1 == "leak" { print "page_owner: " $2 " pages still allocated from:"; n = split($3, F, ";"); for (i = 1; i <= n; i++) print "    " F[i] }'
	fail "$1" "$_leak pages allocated by mlx5_rs still allocated after unload"
}

# mem_available_settled: MemAvailable (kB) after dropping caches, compacting and 15 s
# idle (per-CPU page lists drain), as an outside observer measures a slow leak.
mem_available_settled() {
	sync
	echo 3 >/proc/sys/vm/drop_caches
	echo 1 >/proc/sys/vm/compact_memory
	sleep 15
	awk '/^MemAvailable:/ { print $2 }' /proc/meminfo
}
