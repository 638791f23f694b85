export REC_CYCLES=100
exec sh "$MLX5RS_REPO/tests/guest/run-scenarios.sh" tests/guest/recover-cycles.sh
