# Checks and their output (sourced by tests/guest/lib.sh; defines functions only).
# Each check prints one line the host's judge (tests/vm/judge.sh) counts:
#   MLX5RS-TEST: PASS <name>   or   MLX5RS-TEST: FAIL <name> (<why>)

pass() { check_gap "$1"; echo "MLX5RS-TEST: PASS $1"; }
fail() { check_gap "$1"; echo "MLX5RS-TEST: FAIL $1 ($2)"; FAILED=1; }
# check_gap NAME: where the time goes in a scenario. A check that comes 1 s or more
# after the one before it says so first ("MLX5RS-GAP <ms> <name>", read by no judge:
# tests/vm/gaps.sh sums them from a console log). No process: /proc/uptime, as
# now_ms below, read in this shell.
# gap_mark: the next check's gap counts from now (a script's start, the runner after
# a scenario).
check_gap() {
	_gt0=${_GAP_T:-}
	gap_mark
	[ -n "$_gt0" ] && [ $((_GAP_T - _gt0)) -ge 1000 ] && echo "MLX5RS-GAP $((_GAP_T - _gt0)) $1"
	return 0
}
gap_mark() {
	read -r _gup _ </proc/uptime
	_GAP_T=$((${_gup%.*} * 1000 + 1${_gup#*.} * 10 - 1000))
}

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


# Milliseconds since boot (/proc/uptime, 10 ms resolution), read without a process.
now_ms() {
	read -r _up _ </proc/uptime
	echo $((${_up%.*} * 1000 + 1${_up#*.} * 10 - 1000))
}

# Processes forked since boot (/proc/stat `processes`), read without a process of its
# own: what a scenario costs in forks (each ~30 ms in the TCG guest).
forks_now() {
	while read -r _fk _fv _; do
		[ "$_fk" = processes ] && { echo "$_fv"; return; }
	done </proc/stat
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
# logged PATTERN: PATTERN is in the log since dmesg_mark.
logged() { dmesg | tail -n +"$((MARK + 1))" | grep -a -q "$1"; }
# poll_pause N: the pause after a wait's Nth look (0-based), and its milliseconds in
# POLL_MS: 0.1 s for the first 2 s, then 0.5 s. Each look and each pause is a process
# or more (~30 ms each in the TCG guest), and a recovery's waits last seconds: polling
# at 0.1 s throughout took more CPU than the recovery it waited for.
poll_pause() {
	if [ "$1" -lt 20 ]; then POLL_MS=100; sleep 0.1; else POLL_MS=500; sleep 0.5; fi
}
# poll_until SECONDS CMD...: until CMD succeeds, looking as poll_pause paces it, for up
# to SECONDS of pauses; non-zero if the last look failed too. The waits below use it.
poll_until() {
	_pus=$1 _pui=0 _puw=0
	shift
	while ! "$@"; do
		[ $_puw -ge $((_pus * 1000)) ] && return 1
		poll_pause $_pui; _pui=$((_pui + 1)) _puw=$((_puw + POLL_MS))
	done
}
# wait_log PATTERN [SECONDS]: up to SECONDS (10) for PATTERN in the log since
# dmesg_mark; says so when it never comes.
wait_log() {
	poll_until "${2:-10}" logged "$1" || { echo "no '$1' in the log"; return 1; }
}
# no_kernel_warning PREFIX [LINE]: the check PREFIX.no-kernel-warning, that the log has
# no warning, BUG or call trace after its line LINE (default: dmesg_mark's).
no_kernel_warning() {
	check "$1.no-kernel-warning" sh -c "! dmesg | tail -n +$((${2:-$MARK} + 1)) | grep -a -E 'WARNING:|BUG:|Call Trace'"
}
# wait_line FILE PATTERN: up to 30 s for PATTERN in FILE.
wait_line() { poll_until 30 file_has "$1" "$2"; }
file_has() { grep -q "$2" "$1" 2>/dev/null; }

# case_lines FILE LIST [STATUS]: a guest helper's output (FILE), held to the exact
# list of cases it must print. Each "name: PASS|FAIL|SKIP (detail)" line becomes a
# check of that name (other lines are shown); LIST is a file of
# tests/guest/cases/ with one case name a line ("#" comments), or "name SKIP reason"
# for a case allowed to skip, with why. A SKIP not listed so fails. Then the check
# <LIST without .cases>.cases-exact fails if a listed case is missing (the helper
# stopped half-way), a case is not listed or printed twice; and, with the helper's
# exit STATUS, <...>.helper-exit fails a non-zero status that no failed case
# explains (a crash after its last case).
case_lines() {
	_cf=$1 _cl=$2 _cs=${3:-0} _cfailed=0
	_cn=$(basename "$_cl" .cases)
	# (Lines between these two marks are the cases of one list:
	# tests/guest/cases/update.sh rewrites the lists from a console log.)
	echo "case_lines: begin $_cn"
	while IFS= read -r _l; do
		case $_l in
		*": PASS "* | *": PASS") pass "${_l%%: PASS*}" ;;
		*": FAIL "* | *": FAIL") fail "${_l%%: FAIL*}" "${_l#*: FAIL }"; _cfailed=1 ;;
		*": SKIP "* | *": SKIP")
			_n=${_l%%: SKIP*}
			if [ -f "$_cl" ] && grep -q "^$_n SKIP ." "$_cl"; then
				echo "$_l (a listed skip: $(sed -n "s/^$_n SKIP //p" "$_cl"))"
			else
				fail "$_n" "skipped, not listed in $_cl:${_l#*: SKIP}"; _cfailed=1
			fi ;;
		*) echo "$_l" ;;
		esac
	done <"$_cf"
	echo "case_lines: end $_cn"
	if [ ! -f "$_cl" ]; then
		fail "$_cn.cases-exact" "no case list $_cl"
	else
		_cd=$(awk 'FILENAME == ARGV[1] { if ($0 !~ /^#/ && NF) want[$1] = 1; next }
			match($0, /: (PASS|FAIL|SKIP)( |$)/) { seen[substr($0, 1, RSTART - 1)]++ }
			END {
				for (k in want) if (!(k in seen)) m = m " " k
				for (k in seen) if (!(k in want)) u = u " " k; else if (seen[k] > 1) r = r " " k
				if (m != "") printf "missing:%s; ", m
				if (u != "") printf "not listed:%s; ", u
				if (r != "") printf "printed twice:%s; ", r
			}' "$_cl" "$_cf")
		if [ -z "$_cd" ]; then pass "$_cn.cases-exact"; else fail "$_cn.cases-exact" "${_cd%; }"; fi
	fi
	if [ "$_cs" != 0 ] && [ "$_cfailed" = 0 ]; then
		fail "$_cn.helper-exit" "exit status $_cs with no failed case"
	fi
}

# wait_for FILE WANT [SECONDS]: until FILE's first line reads WANT (a sysfs attribute:
# a port's state), for up to SECONDS (default 60), looking as poll_pause paces it (the
# look is the shell's own read, no process); says what it read when it gives up. (It
# looked once a second until 2026-12-06: a port that came up just after a look cost
# most of a second at each driver load.)
wait_for() {
	poll_until "${3:-60}" file_reads "$1" "$2" && return 0
	echo "$1: $(cat "$1" 2>&1), wanted $2"
	return 1
}
# file_reads FILE WANT: FILE's first line is WANT (read by the shell).
file_reads() {
	_rv=""
	{ read -r _rv <"$1"; } 2>/dev/null
	[ "$_rv" = "$2" ]
}
