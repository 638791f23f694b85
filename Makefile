# SPDX-License-Identifier: GPL-2.0
# mlx5-rs top-level Makefile (the kernel build itself reads Kbuild).
#
#   make                       build mlx5_rs.ko against the test kernel (set-up included)
#   make KDIR=/path/to/build   build against another Rust-enabled kernel tree
#   make run                   boot a VM with the emulated ConnectX and load the driver
#   make check                 run every test (host, KUnit, VM scenarios)
#   make soak                  the endurance sizes make check cuts (storm, probe loop, drift)
#   make lint                  rustfmt, clippy, production build without test hooks
#   make shell                 interactive shell in the VM (driver not loaded)
#   make upstream              boot the VM and load upstream mlx5_core instead
#   make bench                 print the benchmark tables
#   make clean

ifneq ($(KDIR),)
# A kernel tree given by the user: plain out-of-tree build, no toolbox.
all:
	$(MAKE) -C $(KDIR) M=$(CURDIR) CONFIG_MLX5_RS=m modules
clean:
	$(MAKE) -C $(KDIR) M=$(CURDIR) clean
else
all:
	tests/vm/module.sh
clean:
	tests/vm/module.sh clean
	bash -c '. tests/vm/lib.sh && cargo clean'
endif

run:
	tests/vm/run.sh

check:
	tests/run-all.sh

soak:
	tests/vm/soak.sh


lint:
	tests/lint.sh

shell:
	tests/vm/vm.sh --shell

upstream:
	tests/vm/vm.sh --run tests/guest/upstream.sh

bench:
	tests/bench/run.sh

.PHONY: all clean run check soak lint shell upstream bench
