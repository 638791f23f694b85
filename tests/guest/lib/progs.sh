# The guest's C programs, tests/guest/NAME.c (sourced by tests/guest/lib.sh in the
# guest and by tests/vm/module.sh on the host; defines functions only). The guest's
# root is the toolbox, so a program the host builds with the toolbox's gcc runs in the
# guest: module.sh builds each into tests/guest/bin/NAME before the boots, because a
# TCG guest took ~8 s to compile one (three builds a make check).
#   guest_prog_libs NAME   the libraries NAME links (the runtime .so files: the toolbox
#                          has no -dev symlinks for them)
#   guest_prog NAME        the path of NAME's binary: the host's build when it is newer
#                          than its source, else one built here into /tmp (a boot
#                          without module.sh's run, or an edited source); gcc's
#                          messages go to stderr, nothing is printed when it fails
guest_prog_libs() {
	case $1 in
	ib-storm | ib-async) echo /usr/lib/x86_64-linux-gnu/libibverbs.so.1 ;;
	dp-dv) echo /usr/lib/x86_64-linux-gnu/libibverbs.so.1 /usr/lib/x86_64-linux-gnu/libmlx5.so.1 ;;
	esac
}
guest_prog() {
	_gs=$MLX5RS_REPO/tests/guest/$1.c _gb=$MLX5RS_REPO/tests/guest/bin/$1
	if [ -x "$_gb" ] && [ "$_gb" -nt "$_gs" ]; then
		echo "$_gb"
		return 0
	fi
	# shellcheck disable=SC2046 # the libraries split on purpose
	gcc -O2 -Wall -o "/tmp/$1" "$_gs" $(guest_prog_libs "$1") >&2 || return 1
	echo "/tmp/$1"
}
