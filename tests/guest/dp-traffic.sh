# Helpers of the data-path traffic scenario (tests/scenarios-ib/93-dp-traffic.sh;
# sourced after lib.sh, defines functions only): rdma-core's example programs and
# perftest run as a server and a client process in the guest, each pair one case with
# a timeout, and the emulator's own data-path counters read around each run.
#
# Every run is one check named CASE (its output, both sides, printed when it fails and
# kept in $DP_OUT/CASE.server and .client), plus CASE.bytes where the emulator's
# counters are compared with what the run moved. The case names are stable; a
# scenario that stops before its last case fails through the runner (run-scenarios.sh:
# a non-zero exit that no failed check explains), not through a case list.
DP_OUT=/tmp/dp
# Each run's limit (s): a run that needs more under TCG is hung (measured runs are
# seconds each; no completion ever comes without a data path, so the limit is what a
# run costs there).
DP_TIMEOUT=${DP_TIMEOUT:-90}
# The server listens on the loopback interface; the client connects to it by name.
DP_HOST=${DP_HOST:-localhost}
# TCP ports: each run its own, so a server that outlived its run cannot answer the next.
DP_TCP_PORT=${DP_TCP_PORT:-18600}

# dp_tools_present CASE PROG...: a check that every PROG is installed (a missing tool
# is a failure naming it, not a skip).
dp_tools_present() {
	_c=$1; shift
	_miss=""
	for _t; do command -v "$_t" >/dev/null 2>&1 || _miss="$_miss $_t"; done
	if [ -z "$_miss" ]; then pass "$_c"; else fail "$_c" "not installed:$_miss"; fi
}

# dp_listening PORT: a TCP socket listens on PORT (IPv4 or IPv6), read from /proc by
# the shell itself (it is asked every 0.1 s while a server starts; a process costs
# ~30 ms in the TCG guest). Local address ending in ":PORT" (hex), state 0A (LISTEN).
dp_listening() {
	[ "${_dl_port-}" = "$1" ] || { _dl_port=$1; _dl_hex=$(printf '%04X' "$1"); }
	for _dlf in /proc/net/tcp /proc/net/tcp6; do
		[ -r $_dlf ] || continue
		while read -r _ _dla _ _dls _; do
			case $_dla in *":$_dl_hex") [ "$_dls" = 0A ] && return 0 ;; esac
		done <$_dlf
	done
	return 1
}

# dp_counters I [I...]: the emulator I's data-path counters as one line of words
# "key=value" (0 for an opcode never executed), a line per emulator named, from one
# `get` request with all the paths each (one snapshot; no process: a Python start costs
# ~1 s under TCG, and every run reads the counters twice). Keys: wqes bytes (stats dp
# send: WQEs executed, payload bytes sent or requested), op08 op0a op10 op11 op12 (WQEs
# per PRM opcode: RDMA_WRITE, SEND, RDMA_READ, ATOMIC_CS, ATOMIC_FA), errors malformed
# (error CQEs, malformed WQEs), scattered (stats dp recv: bytes scattered into receive
# WQEs), violations, and the wire's (stats dp wire, dp send transport): wire_out
# wire_in (frames queued for the peer device, frames taken from it), drop_dlid (frames
# from the peer for a DLID not the port's). Fails (and says why) if an emulator has no
# data-path counters.
DP_KEYS="wqes bytes errors malformed op08 op0a op10 op11 op12 scattered violations wire_out wire_in drop_dlid"
DP_PATHS='["dp","send","wqes"],["dp","send","bytes"],["dp","send","errors"],["dp","send","malformed"]'
for _o in 08 0a 10 11 12; do
	DP_PATHS="$DP_PATHS,{\"path\":[\"dp\",\"send\",\"per_opcode\",\"0x$_o\"],\"default\":0}"
done
DP_PATHS="$DP_PATHS"',["dp","recv","scattered"],["violations"],["dp","wire","frames_out"],["dp","wire","frames_in"],["dp","send","transport","drop_dlid"]'
dp_counters() {
	_dcsave=${EMUCTL_DEV-}
	for _dci; do
		EMUCTL_DEV=$(emuctl_dev "$_dci")
		emuctl_r "{\"cmd\":\"get\",\"paths\":[$DP_PATHS]}"
		_dcrc=$?
		EMUCTL_DEV=$_dcsave
		[ $_dcrc = 0 ] || return 1
		case "$EMU_REPLY" in
		*'"ok":true'*'"text":"'*) ;;
		*) echo "dp_counters: emulator $_dci: no data-path counters: $EMU_REPLY" >&2; return 1 ;;
		esac
		_t=${EMU_REPLY#*'"text":"'}
		_t=${_t%%'"'*}
		_line=""
		for _k in $DP_KEYS; do
			_v=${_t%% *}
			case "$_v" in '' | *[!0-9]*) echo "dp_counters: emulator $_dci: $_k is '$_v'" >&2; return 1 ;; esac
			_line="$_line $_k=$_v"
			_t=${_t#"$_v"}; _t=${_t# }
		done
		echo "${_line# }"
	done
}
# dp_delta_to VAR BEFORE AFTER KEY: sets VAR to AFTER's KEY minus BEFORE's (counter
# lines of dp_counters; a key a line lacks counts 0). In the shell alone, not even a
# subshell: a process costs ~30 ms in the TCG guest, and a run's checks take a few
# dozen deltas. dp_delta BEFORE AFTER KEY prints it instead.
dp_delta_to() {
	_ddb=0 _dda=0
	for _ddw in $2; do case $_ddw in "$4="*) _ddb=${_ddw#*=} ;; esac; done
	for _ddw in $3; do case $_ddw in "$4="*) _dda=${_ddw#*=} ;; esac; done
	eval "$1=\$((_dda - _ddb))"
}
dp_delta() {
	dp_delta_to _ddr "$@"
	echo "$_ddr"
}

# dp_pair CASE PROG SERVER_ARGS CLIENT_ARGS [OKPAT]: PROG as a server (SERVER_ARGS) and a
# client (CLIENT_ARGS, then DP_HOST), both under DP_TIMEOUT, on a TCP port of their
# own. The check CASE passes when both exit 0, neither printed "invalid data" (the
# example programs' validation with -c prints it and still exits 0) and, if OKPAT is
# given, the client's output matches it (grep -E). Both outputs stay in
# $DP_OUT/CASE.{server,client}; on failure their last lines are printed. Sets
# DP_SECS (the run's seconds) and DP_RAN (1 if the client ran).
dp_pair() {
	_c=$1 _prog=$2 _sa=$3 _ca=$4 _pat=${5:-}
	DP_RAN=0 DP_SECS=0
	mkdir -p "$DP_OUT"
	if ! command -v "$_prog" >/dev/null 2>&1; then
		fail "$_c" "$_prog not installed"
		return 1
	fi
	DP_TCP_PORT=$((DP_TCP_PORT + 1))
	_t0=$(now_ms)
	# shellcheck disable=SC2086 # the argument lists split on purpose
	timeout "$DP_TIMEOUT" $_prog $_sa -p $DP_TCP_PORT >"$DP_OUT/$_c.server" 2>&1 &
	_spid=$!
	_i=0
	while ! dp_listening $DP_TCP_PORT && kill -0 $_spid 2>/dev/null && [ $_i -lt 600 ]; do
		sleep 0.1; _i=$((_i + 1))
	done
	if ! dp_listening $DP_TCP_PORT; then
		kill $_spid 2>/dev/null
		wait $_spid
		_src=$?
		DP_SECS=$((($(now_ms) - _t0) / 1000))
		fail "$_c" "server never listened on TCP $DP_TCP_PORT (status $_src): $(tail -n 3 "$DP_OUT/$_c.server" | tr '\n' ' ')"
		return 1
	fi
	DP_RAN=1
	# shellcheck disable=SC2086
	timeout "$DP_TIMEOUT" $_prog $_ca -p $DP_TCP_PORT "$DP_HOST" >"$DP_OUT/$_c.client" 2>&1
	_crc=$?
	# A client that failed leaves the server waiting: end it rather than wait its limit.
	[ $_crc = 0 ] || kill $_spid 2>/dev/null
	wait $_spid
	_src=$?
	DP_SECS=$((($(now_ms) - _t0) / 1000))
	echo "dp: $_c server=$_src client=$_crc secs=$DP_SECS"
	_why=""
	[ $_src = 0 ] || _why="$_why server exit $_src$([ $_src = 124 ] && echo ' (timeout)');"
	[ $_crc = 0 ] || _why="$_why client exit $_crc$([ $_crc = 124 ] && echo ' (timeout)');"
	grep -q 'invalid data' "$DP_OUT/$_c.server" "$DP_OUT/$_c.client" && _why="$_why invalid data reported;"
	if [ -n "$_pat" ] && ! grep -q -E "$_pat" "$DP_OUT/$_c.client"; then
		_why="$_why client output lacks /$_pat/;"
	fi
	if [ -z "$_why" ]; then
		pass "$_c"
		return 0
	fi
	echo "---- $_c server (last lines) ----"; tail -n 25 "$DP_OUT/$_c.server"
	echo "---- $_c client (last lines) ----"; tail -n 25 "$DP_OUT/$_c.client"
	_why=${_why# }
	fail "$_c" "${_why%;}"
	return 1
}

# dp_bytes_check CASE BEFORE AFTER KEY MIN [KEY MIN ...]: the check CASE.bytes passes
# when each counter KEY grew by at least MIN between the counter lines BEFORE and
# AFTER (dp_counters of one emulator, or the sums dp_sum made), and errors,
# malformed and violations did not grow at all. BEFORE or AFTER empty (no counters)
# fails.
dp_bytes_check() {
	_c=$1 _b=$2 _a=$3
	shift 3
	if [ -z "$_b" ] || [ -z "$_a" ]; then
		fail "$_c.bytes" "no data-path counters from the emulator"
		return 1
	fi
	_why="" _seen=""
	while [ $# -ge 2 ]; do
		dp_delta_to _d "$_b" "$_a" "$1"
		_seen="$_seen $1+$_d"
		[ "$_d" -ge "$2" ] || _why="$_why $1 grew by $_d, want >= $2;"
		shift 2
	done
	for _k in errors malformed violations; do
		dp_delta_to _d "$_b" "$_a" $_k
		[ "$_d" = 0 ] || _why="$_why $_k grew by $_d;"
	done
	echo "dp: $_c counters:$_seen"
	_why=${_why# }
	if [ -z "$_why" ]; then pass "$_c.bytes"; else fail "$_c.bytes" "${_why%;}"; fi
}

# dp_sum LINE LINE: the sum of two counter lines, key by key (two emulators).
dp_sum() {
	[ -n "$1" ] && [ -n "$2" ] || return 0
	for _k in wqes bytes errors malformed op08 op0a op10 op11 op12 scattered violations; do
		dp_delta_to _ds1 "" "$1" $_k
		dp_delta_to _ds2 "" "$2" $_k
		printf '%s=%s ' $_k $((_ds1 + _ds2))
	done
	echo
}

# dp_wire_check CASE BEFORE0 AFTER0 BEFORE1 AFTER1: the check CASE.wire passes when
# the run crossed the wire both ways between two wired devices (dp_counters of
# emulators 0 and 1 around it): each device queued frames for the other and took
# frames from it, and neither dropped a frame for a DLID not its own.
dp_wire_check() {
	_c=$1
	if [ -z "$2" ] || [ -z "$3" ] || [ -z "$4" ] || [ -z "$5" ]; then
		fail "$_c.wire" "no data-path counters from an emulator"
		return 1
	fi
	_why="" _seen=""
	for _k in wire_out wire_in drop_dlid; do
		dp_delta_to _d0 "$2" "$3" $_k
		dp_delta_to _d1 "$4" "$5" $_k
		_seen="$_seen $_k fn0+$_d0 fn1+$_d1"
		if [ $_k = drop_dlid ]; then
			[ "$_d0" = 0 ] && [ "$_d1" = 0 ] || _why="$_why $_k grew;"
		else
			[ "$_d0" -ge 1 ] && [ "$_d1" -ge 1 ] || _why="$_why $_k did not grow on both;"
		fi
	done
	echo "dp: $_c wire:$_seen"
	_why=${_why# }
	if [ -z "$_why" ]; then pass "$_c.wire"; else fail "$_c.wire" "${_why%;}"; fi
}

# dp_perf_moved CASE: "BYTES ITERS" from perftest's result row in the client output
# (the first row of numbers under its "#bytes #iterations ..." header); empty if none.
dp_perf_moved() {
	awk '/#bytes/ { h = 1; next } h && $1 ~ /^[0-9]+$/ && $2 ~ /^[0-9]+$/ { print $1, $2; exit }' \
		"$DP_OUT/$1.client"
}
