# Helpers for the kernel-consumer scenarios (sourced after lib.sh): the test module
# tests/modules/ib_kclient (an ib_client that walks the control verbs on each IB
# device; see its source) is loaded on upstream mlx5_ib (92-upstream-kclient.sh, the
# oracle) and on mlx5_rs (72-ib-kclient.sh), and both assert the same steps here.
KCLIENT_KO=$REPO/tests/modules/ib_kclient/ib_kclient.ko
KCLIENT_DIR=/sys/kernel/debug/ib_kclient

# The steps of one add, in the order the module runs them. Each must read "ok", not
# "not ok" and not "ok ... # SKIP": a step missing from the results fails too (a step
# after a failed one it depends on is not run).
KCLIENT_ADD_STEPS="port.query port.active-ib
pd.alloc pd.dma-mr dma-mr.object dma-mr.global-rkey dma-mr.lkey-is-rkey pd.local-dma-lkey
cq.alloc cq.alloc-depth cq.create-last-vector cq.create-depth
rc.create rc.caps rc.query-reset rc.reset-to-rts-rejected rc.init-without-port-rejected rc.still-reset
rc.init rc.query-init rc.rtr rc.query-rtr rc.rts rc.query-rts rc.err rc.query-err rc.reset rc.query-reset-again
ud.create ud.caps ud.init ud.rtr ud.rts ud.query-rts
srq.create srq.query srq.query-attrs srq.rc.create srq.rc.caps srq.rc.destroy srq.destroy
ah.create ah.query ah.query-attrs ah.destroy
ud.destroy rc.destroy cq.destroy cq.free pd.dealloc
hold.pd hold.cq hold.qp.create hold.qp.caps hold.qp.init hold.qp.rtr hold.qp.rts"
# The steps of the remove that follows an add (the set the add kept).
KCLIENT_REMOVE_STEPS="remove.qp-destroy remove.cq-free remove.pd-dealloc"

# kclient_steps NAME FILE GEN STEPS: check NAME.GEN.STEP for each of STEPS: FILE (the
# results, or the kernel log) has "ok N GEN.STEP" with no directive after it (its
# last line of that step counts). One awk pass over FILE for all the steps, not a grep
# per step: a process costs ~0.1 s in the TCG guest, and an add has 57 steps.
kclient_steps() {
	_n=$1 _g=$3 _kf=$2
	# An unreadable FILE: every step "no result line" (awk would stop at its open).
	[ -r "$_kf" ] || _kf=/dev/null
	_ks=$(awk -v g="$_g" -v steps="$4" '
		{
			l = $0
			sub(/^.*ib_kclient: /, "", l)
			k = (l ~ /^not ok [0-9]+ /) ? 4 : (l ~ /^ok [0-9]+ /) ? 3 : 0
			if (k) { split(l, w, " "); last[w[k]] = l }
		}
		END {
			n = split(steps, s, /[ \t\n]+/)
			for (i = 1; i <= n; i++) {
				if (s[i] == "") continue
				l = last[g "." s[i]]
				if (l == "") print "F " s[i] " no result line"
				else if (l ~ /^not ok /) print "F " s[i] " " l
				else if (l ~ / # SKIP/) { sub(/.* # SKIP/, "", l); print "F " s[i] " skipped:" l }
				else print "P " s[i]
			}
		}' "$_kf")
	while read -r _kv _ks_step _kwhy; do
		case "$_kv" in
		P) pass "$_n.$_g.$_ks_step" ;;
		F) fail "$_n.$_g.$_ks_step" "$_kwhy" ;;
		esac
	done <<EOF
$_ks
EOF
}

# kclient_summary: "adds A removes R pass P fail F skip S" of the loaded module.
kclient_summary() { cat "$KCLIENT_DIR/summary"; }

# kclient_add_checks NAME GEN: every step of add GEN passed, and the QP it keeps is in
# RTS on the device (the emulator's own view of the QP, by number; PRM state 3 = RTS).
kclient_add_checks() {
	_r=/tmp/ib_kclient.results
	cat "$KCLIENT_DIR/results" >$_r
	grep -a -E "^(# ($2[ .]|add $2 )|not ok [0-9]+ $2\\.)" $_r
	kclient_steps "$1" $_r "$2" "$KCLIENT_ADD_STEPS"
	_q=$(sed -n "s/^# $2\\.hold qpn \\([0-9]*\\)\$/\\1/p" $_r)
	if [ -z "$_q" ]; then
		fail "$1.$2.hold-qp-rts-on-device" "no kept QP"
	else
		check "$1.$2.hold-qp-rts-on-device" test "$(emu_stat "d[\"objects\"][\"qp_states\"][\"$_q\"]")" = 3
	fi
}

# kclient_event_checks NAME GEN: the device raises QP events on the QP add GEN kept
# (in RTS); each reaches the client's event_handler as the IB event upstream mlx5_ib
# maps it to (qp.c `mlx5_ib_handle_qp_event`), on that QP, in order. Not the WQ
# catastrophic and access errors: upstream answers those with a syndrome query.
KCLIENT_EVENTS="COMM_EST:4 SQ_DRAINED:5 SRQ_LAST_WQE:16 WQ_INVAL_REQ_ERROR:2"
kclient_event_checks() {
	_q=$(sed -n "s/^# $2\\.hold qpn \\([0-9]*\\)\$/\\1/p" "$KCLIENT_DIR/results")
	_i=$(grep -c '^event ' "$KCLIENT_DIR/events")
	for _e in $KCLIENT_EVENTS; do
		emuctl "{\"cmd\":\"qp_event\",\"qpn\":${_q:-0},\"event\":\"${_e%%:*}\"}" >/dev/null
		check "$1.$2.event.${_e%%:*}" wait_line "$KCLIENT_DIR/events" "^event $_i type=${_e#*:} qpn=$_q\$"
		_i=$((_i + 1))
	done
	cat "$KCLIENT_DIR/events"
	check "$1.$2.events-exactly" test "$(grep -c '^event ' "$KCLIENT_DIR/events")" = "$_i"
}

# failed_cmds: failed firmware commands per opcode, as "OPCODE:STATUS=N" words (other
# scenarios inject failures on purpose: compare with a count taken before).
failed_cmds() {
	emu_stat '" ".join(sorted("%s:%s=%d" % (o, s, n) for o, v in d["commands"].items() for s, n in v.items() if s != "OK"))'
}

# The steps of the traffic step (ib_kclient loaded with traffic=1, 93-dp-traffic.sh),
# after the add's steps, in the order the module runs them (see traffic.c).
KCLIENT_TRAFFIC_STEPS="traffic.ops traffic.pd traffic.cq
traffic.qp-a.init traffic.qp-a.rtr traffic.qp-a.rts traffic.qp-b.init traffic.qp-b.rtr traffic.qp-b.rts
traffic.mr.a traffic.mr.b traffic.reg-mr
traffic.send traffic.send-bytes traffic.write traffic.write-bytes traffic.read traffic.read-bytes
traffic.send-imm traffic.send-imm-bytes traffic.send-inline traffic.send-inline-bytes
traffic.write-imm traffic.write-imm-bytes
traffic.cmp-swap traffic.cmp-swap-bytes traffic.cmp-swap-returned
traffic.fetch-add traffic.fetch-add-bytes traffic.fetch-add-returned
traffic.local-inv traffic.write-after-inv traffic.write-after-inv-bytes
traffic.teardown.qp-a traffic.teardown.mr-a traffic.teardown.qp-b traffic.teardown.mr-b
traffic.teardown.pd-unused traffic.teardown.pd"
# The steps of the kernel verbs step (ib_kclient loaded with kverbs=1, its kverbs.c),
# after the traffic step's.
KCLIENT_KVERBS_STEPS="kverbs.qp-c.init kverbs.qp-c.rtr kverbs.qp-c.rts
kverbs.qp-d.init kverbs.qp-d.rtr kverbs.qp-d.rts kverbs.setup
kverbs.srq.full kverbs.srq.round-1 kverbs.srq.round-2 kverbs.srq.round-3
kverbs.reset-clean.reset-c kverbs.reset-clean
kverbs.reset-reuse.reset-d kverbs.reset-reuse.qp-c.rts kverbs.reset-reuse.qp-d.rts
kverbs.reset-reuse kverbs.reset-reuse.only
kverbs.destroy-clean.destroy-c kverbs.destroy-clean kverbs.srq-refill kverbs.srq-refill.full
kverbs.teardown.qp-d kverbs.teardown.srq kverbs.teardown.pd-unused kverbs.teardown.pd"
# The steps of the kernel XRC step (ib_kclient loaded with xrc=1, its xrc.c).
KCLIENT_XRC_STEPS="xrc.setup xrc.tgt.create xrc.ini.create xrc.ini.caps
xrc.tgt.init xrc.tgt.rtr xrc.tgt.rts xrc.ini.init xrc.ini.rtr xrc.ini.rts
xrc.send.post xrc.send.cqe xrc.send.ini-err xrc.send.no-recv
xrc.teardown.ini xrc.teardown.tgt xrc.teardown.srq xrc.teardown.xrcd xrc.teardown"
# The steps of the bench loop (ib_kclient loaded with bench=N, its bench.c).
KCLIENT_BENCH_STEPS="bench.setup bench.run bench.handler-hardirq bench.exact bench.teardown"
