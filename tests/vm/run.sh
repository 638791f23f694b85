#!/usr/bin/env bash
# `make run`: set up everything (toolbox, kernel, module, emulator), boot a VM with
# the emulated ConnectX, load mlx5_rs, print what it found, unbind and unload.
set -eu
. "$(dirname "$0")/lib.sh"
"$REPO/tests/vm/module.sh"
exec "$REPO/tests/vm/vm.sh" --run tests/guest/smoke.sh --timeout 600 "$@"
