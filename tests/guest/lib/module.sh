# Loading mlx5_rs and reading its debugfs records (sourced by tests/guest/lib.sh;
# defines functions only).
# module_deps: loads what mlx5_rs.ko needs first. With the InfiniBand provider (Kconfig
# MLX5_RS_INFINIBAND, on in the test build) it needs the symbols of ib_core and
# ib_uverbs (its UAR objects are uverbs objects), and insmod resolves no dependency:
# the test kernel builds both as modules, so `modprobe ib_uverbs` loads them (ib_core
# too), as a host would. A test (not a process) when they are loaded; `modprobe -r` of
# an upstream module may have removed them since the last load.
module_deps() { [ -e /sys/module/ib_uverbs ] || modprobe ib_uverbs 2>/dev/null || true; }

# Every scenario loads the module with `insmod "$KO" ...`: its dependencies first, and
# where it went is remembered (page_owner windows, lib/pages.sh).
# KUnit runs the module's suites (mlx5_rs_*) at every load; after the first load of
# mlx5_rs in the boot, kunit's filter (writable at run time) is set to match no suite,
# so that the other loads of the boot do not run them again (about 18 s each under
# TCG). Another module loaded first (a test module such as ib_kclient, after an
# upstream part of a scenario) leaves the filter alone: mlx5_rs's first load still
# runs the suites, which every boot's judge requires.
insmod() {
	module_deps
	command insmod "$@"
	_rc=$?
	[ $_rc = 0 ] && po_note_module mlx5_rs
	case "$1" in
	*/mlx5_rs.ko | mlx5_rs.ko)
		[ $_rc = 0 ] && [ -w /sys/module/kunit/parameters/filter_glob ] &&
			echo none >/sys/module/kunit/parameters/filter_glob ;;
	esac
	return $_rc
}

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


# no_auto_recover NAME BDF: devlink's fw_fatal reporter of function BDF stops
# recovering it by itself (either driver): for a scenario about the dead function (the
# recovery is 97-recover's).
no_auto_recover() {
	check "$1" devlink health set "pci/$2" reporter fw_fatal auto_recover false
}

# load_driver DRIVER PREFIX: loads DRIVER (upstream: mlx5_core and mlx5_ib; mlx5_rs:
# $KO), then the check PREFIX.mlx5_0-active (up to 120 s), for the scenarios that run
# the same expectation on both drivers.
load_driver() {
	case $1 in
	upstream)
		timeout 300 modprobe mlx5_core
		timeout 300 modprobe mlx5_ib ;;
	mlx5_rs) check "$2.insmod" insmod "$KO" ;;
	esac
	check "$2.mlx5_0-active" wait_for /sys/class/infiniband/mlx5_0/ports/1/state "4: ACTIVE" 120
}

# unload_driver DRIVER PREFIX: unloads what load_driver loaded, each removal a check.
unload_driver() {
	case $1 in
	upstream)
		check "$2.rmmod-mlx5_ib" timeout 120 modprobe -r mlx5_ib
		check "$2.rmmod-mlx5_core" timeout 120 modprobe -r mlx5_core ;;
	mlx5_rs) check "$2.rmmod" timeout 120 rmmod mlx5_rs ;;
	esac
}
