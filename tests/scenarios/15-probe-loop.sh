# Scenario: probe + remove LOOP_CYCLES times (make check: 10; make soak: 100); after
# every remove the emulated device holds no page and the function is disabled; no
# protocol violation, no leak. Each cycle is checked on its own (ledger and function
# state after every remove, kmemleak and page_owner after the last), so a leak or a
# state carried from one cycle to the next shows within a few cycles; the long loop,
# for what shows only rarely, is make soak's. (100 cycles took 320 s under the debug
# kernel with page_owner on; scenario 95 loops again.)
. "$MLX5RS_REPO/tests/guest/lib.sh"
bdf=$(mlx_bdf) || { fail loop.device-present "no 15b3 function"; exit 1; }
drv=/sys/bus/pci/drivers/mlx5_rs
check loop.insmod insmod "$KO"
N=${LOOP_CYCLES:-10} bound=0 clean=0 t0=$(date +%s%N)
i=0
while [ $i -lt $N ]; do
	echo "$bdf" >$drv/unbind
	[ "$(emuctl '{"cmd":"ledger"}')" = '{"enabled":false,"held":0,"ok":true,"violations":0}' ] && clean=$((clean + 1))
	echo "$bdf" >$drv/bind && [ -e /sys/bus/pci/devices/$bdf/driver ] && bound=$((bound + 1))
	i=$((i + 1))
done
echo "loop: $N probe/remove cycles in $((($(date +%s%N) - t0) / 1000000)) ms"
check loop.all-bound test $bound = $N
check loop.all-clean-after-remove test $clean = $N
check loop.no-violations test "$(emu_stat 'd["violations"]')" = 0
check loop.rmmod rmmod mlx5_rs
check loop.pages-returned test "$(emu_stat 'd["pages"]["held"]')" = 0
check_kmemleak loop.no-leaks
[ "$FAILED" = 0 ]
