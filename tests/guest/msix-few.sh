# Guest script for a boot where one emulated ConnectX function offers only 2 MSI-X
# vectors (vm.sh --fn-emu-arg I --msix-vectors --fn-emu-arg I 2; `make check` gives
# function 1 of its two-function boot 2 vectors). QEMU takes the table size when it
# realizes the device, so this needs a boot configured for it.
# mlx5_rs binds with the vectors it is given: vector 0 for the command, async and pages
# EQs, one completion EQ on vector 1; no EQ names a vector beyond the table. Then the
# upstream mlx5_core, the emulator's oracle, binds the same device. Every other function
# binds too (both drivers take every 15b3 function) and is only unbound with them.
. "$MLX5RS_REPO/tests/guest/lib.sh"
# The function whose emulator offers 2 vectors; its control channel is the default.
fn=0
while [ $fn -lt "$(emu_count)" ]; do
	[ "$(emu_stat_n $fn 'd["msix_vectors"]')" = 2 ] && break
	fn=$((fn + 1))
done
if [ $fn -ge "$(emu_count)" ]; then fail msix.device-present "no function with 2 MSI-X vectors"; exit 1; fi
bdf=$(mlx_bdf_n $fn) || { fail msix.device-present "no 15b3 function $fn"; exit 1; }
EMUCTL_DEV=$(emuctl_dev $fn)
echo "function $fn ($bdf) offers 2 MSI-X vectors"
sys=/sys/bus/pci/devices/$bdf
d=/sys/kernel/debug/mlx5_rs/$bdf
# Every EQ the emulator holds uses a vector below the table size.
eqs_in_table() { emu_stat 'all(e["intr"] < d["msix_vectors"] for e in d["eqs"]) and len(d["eqs"]) > 0'; }
check msix.offered test "$(emu_stat 'd["msix_vectors"]')" = 2
# The guest sees the table size in config space (MSI-X message control, bits 10:0).
ctl=$(od -A n -t x2 -j $((0x9c + 2)) -N 2 "$sys/config" | tr -d ' ')
check msix.guest-sees-2 test $((0x$ctl & 0x7ff)) = 1

dmesg_mark
check msix.rs.insmod insmod "$KO"
check msix.rs.bound test -e "$sys/driver"
check msix.rs.vectors-allocated test "$(ls "$sys/msi_irqs" | wc -l)" = 2
check msix.rs.eqs-logged sh -c "dmesg | tail -n +$((MARK + 1)) | grep -a mlx5_rs | grep -a -q 'EQs up: 2 MSI-X vector(s), .* 1 completion EQ(s)'"
check msix.rs.debugfs-vectors grep -q '^vectors 2$' "$d/eqs"
check msix.rs.eqs-in-table test "$(eqs_in_table)" = True
check msix.rs.comp-eq-on-vector-1 test "$(emu_stat 'sorted(e["intr"] for e in d["eqs"])')" = "[0, 0, 0, 1]"
echo "200 4" >"$d/nop_storm"; cat "$d/nop_storm"
check msix.rs.nops-ok sh -c "tr ' ' '\n' <$d/nop_storm | sed -n '/^errors\$/{n;p;}' | grep -qx 0"
check msix.rs.rmmod rmmod mlx5_rs
check msix.rs.pages-returned test "$(emu_stat 'd["pages"]["held"]')" = 0
check msix.rs.no-violations test "$(emu_stat 'd["violations"]')" = 0
emuctl '{"cmd":"reset"}' >/dev/null

# Upstream mlx5_core on the same 2 vectors.
dmesg_mark
timeout 300 modprobe mlx5_core
dmesg_since | grep -a mlx5 | head -n 30
check msix.upstream.bound test -e "$sys/driver"
check msix.upstream.vectors-allocated test "$(ls "$sys/msi_irqs" 2>/dev/null | wc -l)" -le 2
check msix.upstream.eqs-created test "$(emu_stat 'len(d["eqs"])')" -ge 3
check msix.upstream.eqs-in-table test "$(eqs_in_table)" = True
echo "upstream mlx5_core: $(ls "$sys/msi_irqs" 2>/dev/null | wc -l) MSI-X vector(s) allocated, EQ vectors $(emu_stat 'sorted(e["intr"] for e in d["eqs"])')"
check msix.upstream.no-error-lines sh -c "! dmesg | tail -n +$((MARK + 1)) | grep -a mlx5_core | grep -a -i -E 'error|fail|timeout'"
[ -e "$sys/driver" ] && echo "$bdf" >"$sys/driver/unbind"
check msix.upstream.rmmod modprobe -r mlx5_core
check msix.upstream.pages-returned test "$(emu_stat 'd["pages"]["held"]')" = 0
check msix.upstream.no-violations test "$(emu_stat 'd["violations"]')" = 0
emuctl '{"cmd":"reset"}' >/dev/null
check_kmemleak msix.no-leaks
[ "$FAILED" = 0 ]
