# Memory: pages a module still holds after unload (page_owner), pinned user pages,
# MemAvailable as an outside observer sees it (sourced by tests/guest/lib.sh; defines
# functions and constants only).
# alone shows totals that lag by up to each CPU's stat threshold.
foll_pins() {
	echo 1 >/proc/sys/vm/stat_refresh
	awk '$1 == "nr_foll_pin_acquired" { a = $2 } $1 == "nr_foll_pin_released" { r = $2 } END { print a - r }' /proc/vmstat
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
		# mlx5_rs was not loaded: nothing to check (no check that cannot fail is
		# counted); still a new baseline (another module may have gone).
		po_mark "${2:-s}"
		echo "page_owner: $1: mlx5_rs not loaded in this window, nothing to check"
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
