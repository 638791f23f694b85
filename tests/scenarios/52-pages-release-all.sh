# Scenario: release-all page requests (EQE 0x0B, release-all bit). The device dropped
# every page of the function: the driver frees all it tracks without MANAGE_PAGES
# (ledger exact: 0 on both sides), keeps serving later requests, and unloads without
# asking for the released pages (nothing leaked, no no-progress wait). Module reloads
# and reclaims only pages given after a release-all.
. "$MLX5RS_REPO/tests/guest/lib.sh"
bdf=$(mlx_bdf) || { fail ra.device-present "no 15b3 function"; exit 1; }
d=/sys/kernel/debug/mlx5_rs/$bdf
kv() { tr ' ' '\n' <"$d/eqs" | sed -n "/^$1\$/{n;p;}"; }
drv_held() { awk '$1 == "held" { print $2 }' "$d/pages"; }
# emu: one stats request (python under TCG is slow): EH pages held, EMP MANAGE_PAGES
# commands executed (any op_mod), ETK pages returned, EOUT outstanding requests,
# EVIOL protocol violations.
emu() {
	set -- $(emu_stat '" ".join(str(x) for x in [d["pages"]["held"], sum(d["commands"].get("MANAGE_PAGES", {}).values()), d["pages"]["taken"], len(d["pages"]["outstanding_requests"]), d["violations"]])')
	EH=$1 EMP=$2 ETK=$3 EOUT=$4 EVIOL=$5
	echo "emulator: held $EH manage_pages $EMP taken $ETK outstanding $EOUT violations $EVIOL"
}
# wait_until CMD...: until CMD succeeds (up to 5 s).
wait_until() {
	i=0
	until "$@"; do
		i=$((i + 1)); [ $i -gt 100 ] && return 1; sleep 0.05
	done
}
held_is() { [ "$(drv_held)" = "$1" ]; }
kv_is() { [ "$(kv "$1")" = "$2" ]; }
page_request() { emuctl "{\"cmd\":\"page_request\",\"num_pages\":$1${2:+,\"release_all\":$2}}"; }
since_mark() { dmesg | tail -n +$((MARK + 1)); }

emu; v0=$EVIOL
dmesg_mark
check ra.insmod insmod "$KO"
h0=$(drv_held)
page_request 64 >/dev/null
check ra.give-64 wait_until held_is $((h0 + 64))
held=$(drv_held)
emu
check ra.ledger-exact-before test "$EH" = "$held"
mp0=$EMP; tk0=$ETK

r=$(page_request 0 true); echo "release-all: $r"
check ra.release-all-sent sh -c "echo '$r' | grep -q '\"ok\":true'"
check ra.driver-ledger-zero wait_until held_is 0
emu
check ra.emu-ledger-zero test "$EH" = 0
check ra.no-manage-pages test "$EMP" = "$mp0"
check ra.nothing-taken test "$ETK" = "$tk0"
check ra.counted kv_is release_all 1
check ra.pages-released-counted kv_is pages_released "$held"
since_mark | grep -a 'release-all'
check ra.logged sh -c "dmesg | tail -n +$((MARK + 1)) | grep -a 'PAGE_REQUEST release-all' | grep -q 'freed $held firmware pages without MANAGE_PAGES'"

# Later requests are served normally, from an empty ledger. (The emulator returns
# pages only beyond what it still counts as needed, so a take may get fewer back;
# the driver's ledger must match whatever came back.)
page_request 32 >/dev/null
check ra.later-give wait_until held_is 32
takes=$(kv takes)
page_request -8 >/dev/null
check ra.later-take-answered wait_until kv_is takes $((takes + 1))
emu
check ra.ledger-exact-after test "$EH" = "$(drv_held)"
check ra.no-request-outstanding test "$EOUT" = 0
mp1=$EMP
# Release what is held again, then once more with nothing held: no command either time.
page_request 0 true >/dev/null
check ra.second-release wait_until held_is 0
page_request 0 true >/dev/null
check ra.empty-release wait_until kv_is release_all 3
check ra.empty-release-logged sh -c "dmesg | tail -n +$((MARK + 1)) | grep -a 'PAGE_REQUEST release-all' | grep -q 'freed 0 firmware pages'"

# Unload with nothing held: no MANAGE_PAGES at all, no wait, nothing leaked.
dmesg_mark
t0=$(now_ms)
check ra.rmmod rmmod mlx5_rs
ms=$(( $(now_ms) - t0 )); echo "unload after release-all took $ms ms"
since_mark
emu
check ra.no-command-since-take test "$EMP" = "$mp1"
# Not a speed target (printed above): with nothing held, unload must not sit out a
# reclaim deadline or a command timeout (60 s); no MANAGE_PAGES is asserted above.
check ra.unload-no-reclaim-wait test "$ms" -lt 30000
check ra.unload-no-leak-line sh -c "! dmesg | tail -n +$((MARK + 1)) | grep -a -E 'leaked|returned no page|reclaiming firmware pages failed'"
check ra.emu-pages-zero test "$EH" = 0

# Reload; release-all, then a give, then unload: only the new pages are reclaimed.
dmesg_mark
check ra.reload insmod "$KO"
page_request 0 true >/dev/null
check ra.reload-release wait_until held_is 0
page_request 16 >/dev/null
check ra.reload-give wait_until held_is 16
check ra.rmmod-again rmmod mlx5_rs
check ra.reclaimed-only-new sh -c "dmesg | tail -n +$((MARK + 1)) | grep -a -q 'reclaimed 16 firmware pages'"
emu
check ra.emu-pages-zero-again test "$EH" = 0
check ra.emu-no-violations test "$EVIOL" = "$v0"
check_kmemleak ra.no-leaks
[ "$FAILED" = 0 ]
