//! What the report shows, one line per row: change or add a row here, nothing else.
//! Cells and labels are templates (see `template.rs`: `{med:rs.probe_ms}` is the median
//! of the `rs.probe_ms` figures); `Na(why)` is a path one driver does not have, printed
//! as `n/a (why)`.

/// A cell of the first table.
#[derive(Clone, Copy, Debug)]
pub enum Cell {
    /// A template with figures.
    T(&'static str),
    /// Not applicable, for this reason.
    Na(&'static str),
}
use Cell::{Na, T};

/// A row of the first table: label, mlx5_rs, upstream, unit.
pub struct Row(pub &'static str, pub Cell, pub Cell, pub &'static str);

const UP_POLL: &str =
    "upstream has no polling switch: it polls only before its EQs exist and during teardown";
const RS_CALL_RETURN: &str = "only call → return, above";
const UP_NONE: &str = "no such counter upstream";

/// The first table: mlx5_rs next to upstream, one figure per row.
#[rustfmt::skip]
pub const ROWS: &[Row] = &[
    // -- probe
    Row("probe-to-ready, median of bind cycles (rs: first probe line → \"ready\" line; upstream: \"firmware version\" → bind returned)", T("{med:rs.probe_ms} (n={n:rs.probe_ms})"), T("{med:up.probe_ms} (n={n:up.probe_ms})"), "ms"),
    Row("probe-to-ready, min … max", T("{range:rs.probe_ms}"), T("{range:up.probe_ms}"), "ms"),
    Row("probe: first probe line → last probe log line, median", T("{med:rs.probe_ms}"), T("{med:up.probe_ms_lastlog}"), "ms"),
    Row("probe: first probe line → bind write returned, median", T("{med:rs.probe_ms_ret}"), T("{med:up.probe_ms}"), "ms"),
    Row("bind write wall time (date before/after), median", T("{med:rs.bind_wall_ms}"), T("{med:up.bind_wall_ms}"), "ms"),
    Row("first load: insmod / modprobe wall time (upstream: + dependency modules)", T("{f1:rs.load_wall_ms}"), T("{f1:up.load_wall_ms}"), "ms"),
    // -- NOPs: ours from nop_storm (rs.nop<callers>.*, polling rs.pnop<callers>.*), upstream's
    // from the test module mlx5_nop_bench (up.nop<callers>.*), both timed call → return
    Row("NOP latency mean, 1 caller(s), events (both: each NOP call → return)", T("{us:rs.nop1.mean_ns}"), T("{us:up.nop1.mean_ns}"), "µs"),
    Row("NOP latency p50, 1 caller(s), events", T("{us:rs.nop1.p50_ns}"), T("{us:up.nop1.p50_ns}"), "µs"),
    Row("NOP latency p99, 1 caller(s), events", T("{us:rs.nop1.p99_ns}"), T("{us:up.nop1.p99_ns}"), "µs"),
    Row("NOP latency max, 1 caller(s), events", T("{us:rs.nop1.max_ns}"), T("{us:up.nop1.max_ns}"), "µs"),
    Row("NOP throughput, 1 caller(s), events (rs: nop_storm, {get:rs.nop1.nops} NOPs, {get:rs.nop1.errors} errors; upstream: mlx5_nop_bench, {get:up.nop1.nops} NOPs, {get:up.nop1.errors} errors)", T("{int:rs.nop1.ops_per_sec}"), T("{int:up.nop1.ops_per_sec}"), "ops/s"),
    Row("NOP mean, 1 caller(s), events, upstream's own per-opcode counter over the same storm (debugfs commands/NOP/average: post → completion handled; n={get:up.nop1.dbg_n})", Na(RS_CALL_RETURN), T("{us:up.nop1.dbg_mean_ns}"), "µs"),
    Row("NOP latency mean, 32 caller(s), events (both: each NOP call → return)", T("{us:rs.nop32.mean_ns}"), T("{us:up.nop32.mean_ns}"), "µs"),
    Row("NOP latency p50, 32 caller(s), events", T("{us:rs.nop32.p50_ns}"), T("{us:up.nop32.p50_ns}"), "µs"),
    Row("NOP latency p99, 32 caller(s), events", T("{us:rs.nop32.p99_ns}"), T("{us:up.nop32.p99_ns}"), "µs"),
    Row("NOP latency max, 32 caller(s), events", T("{us:rs.nop32.max_ns}"), T("{us:up.nop32.max_ns}"), "µs"),
    Row("NOP throughput, 32 caller(s), events (rs: nop_storm, {get:rs.nop32.nops} NOPs, {get:rs.nop32.errors} errors; upstream: mlx5_nop_bench, {get:up.nop32.nops} NOPs, {get:up.nop32.errors} errors)", T("{int:rs.nop32.ops_per_sec}"), T("{int:up.nop32.ops_per_sec}"), "ops/s"),
    Row("NOP mean, 32 caller(s), events, upstream's own per-opcode counter over the same storm (debugfs commands/NOP/average: post → completion handled; n={get:up.nop32.dbg_n})", Na(RS_CALL_RETURN), T("{us:up.nop32.dbg_mean_ns}"), "µs"),
    Row("NOP latency mean, 1 caller(s), polling (both: each NOP call → return)", T("{us:rs.pnop1.mean_ns}"), Na(UP_POLL), "µs"),
    Row("NOP latency p50, 1 caller(s), polling", T("{us:rs.pnop1.p50_ns}"), Na(UP_POLL), "µs"),
    Row("NOP latency p99, 1 caller(s), polling", T("{us:rs.pnop1.p99_ns}"), Na(UP_POLL), "µs"),
    Row("NOP latency max, 1 caller(s), polling", T("{us:rs.pnop1.max_ns}"), Na(UP_POLL), "µs"),
    Row("NOP throughput, 1 caller(s), polling (rs: nop_storm, {get:rs.pnop1.nops} NOPs, {get:rs.pnop1.errors} errors)", T("{int:rs.pnop1.ops_per_sec}"), Na(UP_POLL), "ops/s"),
    Row("NOP latency mean, 32 caller(s), polling (both: each NOP call → return)", T("{us:rs.pnop32.mean_ns}"), Na(UP_POLL), "µs"),
    Row("NOP latency p50, 32 caller(s), polling", T("{us:rs.pnop32.p50_ns}"), Na(UP_POLL), "µs"),
    Row("NOP latency p99, 32 caller(s), polling", T("{us:rs.pnop32.p99_ns}"), Na(UP_POLL), "µs"),
    Row("NOP latency max, 32 caller(s), polling", T("{us:rs.pnop32.max_ns}"), Na(UP_POLL), "µs"),
    Row("NOP throughput, 32 caller(s), polling (rs: nop_storm, {get:rs.pnop32.nops} NOPs, {get:rs.pnop32.errors} errors)", T("{int:rs.pnop32.ops_per_sec}"), Na(UP_POLL), "ops/s"),
    Row("interrupt load: then NOPs, 1 caller, event mode (rs: nop_storm; upstream: mlx5_nop_bench)", T("{get:rs.irq.nops}"), T("{get:up.irq.nops}"), "NOPs"),
    Row("IRQ raised → next CI doorbell of the command-completion EQ, mean (emulator; rs EQ {get:rs.irq.cmd.eqn} n={get:rs.irq.cmd.count}, upstream EQ {get:up.irq.cmd.eqn} n={get:up.irq.cmd.count})", T("{us:rs.irq.cmd.mean_ns}"), T("{us:up.irq.cmd.mean_ns}"), "µs"),
    Row("IRQ raised → next CI doorbell of the command-completion EQ, p50 (emulator; rs EQ {get:rs.irq.cmd.eqn} n={get:rs.irq.cmd.count}, upstream EQ {get:up.irq.cmd.eqn} n={get:up.irq.cmd.count})", T("{us:rs.irq.cmd.p50_ns}"), T("{us:up.irq.cmd.p50_ns}"), "µs"),
    Row("IRQ raised → next CI doorbell of the command-completion EQ, p99 (emulator; rs EQ {get:rs.irq.cmd.eqn} n={get:rs.irq.cmd.count}, upstream EQ {get:up.irq.cmd.eqn} n={get:up.irq.cmd.count})", T("{us:rs.irq.cmd.p99_ns}"), T("{us:up.irq.cmd.p99_ns}"), "µs"),
    Row("IRQ raised → next CI doorbell of the command-completion EQ, max (emulator; rs EQ {get:rs.irq.cmd.eqn} n={get:rs.irq.cmd.count}, upstream EQ {get:up.irq.cmd.eqn} n={get:up.irq.cmd.count})", T("{us:rs.irq.cmd.max_ns}"), T("{us:up.irq.cmd.max_ns}"), "µs"),
    Row("IRQ → EQE handled, command-completion EQ, mean / max (driver's own: our debugfs eqs irq_mean_ns / irq_max_ns)", T("{us:rs.irq.cmd.drv_mean_ns} / {us:rs.irq.cmd.drv_max_ns}"), Na(UP_NONE), "µs"),
    Row("IRQ raised → next CI doorbell of the page-request EQ, mean (emulator; rs EQ {get:rs.irq.pages.eqn} n={get:rs.irq.pages.count}, upstream EQ {get:up.irq.pages.eqn} n={get:up.irq.pages.count})", T("{us:rs.irq.pages.mean_ns}"), T("{us:up.irq.pages.mean_ns}"), "µs"),
    Row("IRQ raised → next CI doorbell of the page-request EQ, p50 (emulator; rs EQ {get:rs.irq.pages.eqn} n={get:rs.irq.pages.count}, upstream EQ {get:up.irq.pages.eqn} n={get:up.irq.pages.count})", T("{us:rs.irq.pages.p50_ns}"), T("{us:up.irq.pages.p50_ns}"), "µs"),
    Row("IRQ raised → next CI doorbell of the page-request EQ, p99 (emulator; rs EQ {get:rs.irq.pages.eqn} n={get:rs.irq.pages.count}, upstream EQ {get:up.irq.pages.eqn} n={get:up.irq.pages.count})", T("{us:rs.irq.pages.p99_ns}"), T("{us:up.irq.pages.p99_ns}"), "µs"),
    Row("IRQ raised → next CI doorbell of the page-request EQ, max (emulator; rs EQ {get:rs.irq.pages.eqn} n={get:rs.irq.pages.count}, upstream EQ {get:up.irq.pages.eqn} n={get:up.irq.pages.count})", T("{us:rs.irq.pages.max_ns}"), T("{us:up.irq.pages.max_ns}"), "µs"),
    Row("IRQ → EQE handled, page-request EQ, mean / max (driver's own: our debugfs eqs irq_mean_ns / irq_max_ns)", T("{us:rs.irq.pages.drv_mean_ns} / {us:rs.irq.pages.drv_max_ns}"), Na(UP_NONE), "µs"),
    // -- InfiniBand (VM "ib", tests/bench/guest-ib.sh; medians of the guest's repetitions;
    // `n/a (verb missing)` where mlx5_rs has no such verb yet)
    Row("IB registration: load → mlx5_0 in sysfs, median (rs: insmod; upstream: modprobe mlx5_ib, mlx5_core with it; n={n:rs.ib.register_ms} / {n:up.ib.register_ms})", T("{med:rs.ib.register_ms}"), T("{med:up.ib.register_ms}"), "ms"),
    Row("IB registration: load → port 1 ACTIVE in sysfs, median", T("{med:rs.ib.active_ms}"), T("{med:up.ib.active_ms}"), "ms"),
    Row("ibv_open_device (user context), median of {get:rs.ib.reps} (pyverbs Context())", T("{f1:rs.ib.open_us}"), T("{f1:up.ib.open_us}"), "µs"),
    Row("ibv_close_device, median", T("{f1:rs.ib.close_us}"), T("{f1:up.ib.close_us}"), "µs"),
    Row("MR registration, 4 KiB (ibv_reg_mr, pages touched before), median", T("{f1:rs.ib.mr_4k_us}"), T("{f1:up.ib.mr_4k_us}"), "µs"),
    Row("MR registration, 1 MiB, median", T("{f1:rs.ib.mr_1m_us}"), T("{f1:up.ib.mr_1m_us}"), "µs"),
    Row("MR registration, 1 GiB, once", T("{us:rs.ib.mr_1g_us}"), T("{us:up.ib.mr_1g_us}"), "ms"),
    Row("QP create (RC, RESET), median", T("{f1:rs.ib.qp_create_us}"), T("{f1:up.ib.qp_create_us}"), "µs"),
    Row("QP RESET → INIT → RTR → RTS (three ibv_modify_qp), median", T("{f1:rs.ib.qp_rts_us}"), T("{f1:up.ib.qp_rts_us}"), "µs"),
    Row("QP destroy (from RTS), median", T("{f1:rs.ib.qp_destroy_us}"), T("{f1:up.ib.qp_destroy_us}"), "µs"),
    // -- data path (VM "ib", tests/bench/guest-dp-figures.sh): perftest unmodified in loopback on
    // mlx5_0, -F, mlx5_rs first, then upstream on the same emulator; the emulator's own cost
    // from its stats dp send histograms over each run
    Row("ib_write_bw 64 B: message rate (perftest MsgRate; iterations: {get:up.dp.iters_bw})", T("{int:rs.dp.write_bw_64.msg_per_sec}"), T("{int:up.dp.write_bw_64.msg_per_sec}"), "msg/s"),
    Row("ib_write_bw 64 B: bandwidth (perftest BW average)", T("{get:rs.dp.write_bw_64.mb_per_sec}"), T("{get:up.dp.write_bw_64.mb_per_sec}"), "MB/s"),
    Row("ib_write_bw 64 B: emulator time per WQE / per doorbell, mean over the run ({get:rs.dp.write_bw_64.wqes} / {get:up.dp.write_bw_64.wqes} WQEs, {get:rs.dp.write_bw_64.doorbells} / {get:up.dp.write_bw_64.doorbells} doorbells)", T("{us:rs.dp.write_bw_64.wqe_mean_ns} / {us:rs.dp.write_bw_64.db_mean_ns}"), T("{us:up.dp.write_bw_64.wqe_mean_ns} / {us:up.dp.write_bw_64.db_mean_ns}"), "µs"),
    Row("ib_write_bw 64 B: emulator time per message (its doorbell time over the run / messages) of the time per message (1 / message rate), share", T("{us:rs.dp.write_bw_64.emu_ns_per_msg} of {us:rs.dp.write_bw_64.msg_ns} ({get:rs.dp.write_bw_64.emu_pct} %)"), T("{us:up.dp.write_bw_64.emu_ns_per_msg} of {us:up.dp.write_bw_64.msg_ns} ({get:up.dp.write_bw_64.emu_pct} %)"), "µs"),
    Row("ib_write_bw 4 KiB: message rate (perftest MsgRate; iterations: {get:up.dp.iters_bw})", T("{int:rs.dp.write_bw_4k.msg_per_sec}"), T("{int:up.dp.write_bw_4k.msg_per_sec}"), "msg/s"),
    Row("ib_write_bw 4 KiB: bandwidth (perftest BW average)", T("{get:rs.dp.write_bw_4k.mb_per_sec}"), T("{get:up.dp.write_bw_4k.mb_per_sec}"), "MB/s"),
    Row("ib_write_bw 4 KiB: emulator time per WQE / per doorbell, mean over the run ({get:rs.dp.write_bw_4k.wqes} / {get:up.dp.write_bw_4k.wqes} WQEs, {get:rs.dp.write_bw_4k.doorbells} / {get:up.dp.write_bw_4k.doorbells} doorbells)", T("{us:rs.dp.write_bw_4k.wqe_mean_ns} / {us:rs.dp.write_bw_4k.db_mean_ns}"), T("{us:up.dp.write_bw_4k.wqe_mean_ns} / {us:up.dp.write_bw_4k.db_mean_ns}"), "µs"),
    Row("ib_write_bw 4 KiB: emulator time per message (its doorbell time over the run / messages) of the time per message (1 / message rate), share", T("{us:rs.dp.write_bw_4k.emu_ns_per_msg} of {us:rs.dp.write_bw_4k.msg_ns} ({get:rs.dp.write_bw_4k.emu_pct} %)"), T("{us:up.dp.write_bw_4k.emu_ns_per_msg} of {us:up.dp.write_bw_4k.msg_ns} ({get:up.dp.write_bw_4k.emu_pct} %)"), "µs"),
    Row("ib_write_bw 64 KiB: message rate (perftest MsgRate; iterations: {get:up.dp.iters_bw} / 4)", T("{int:rs.dp.write_bw_64k.msg_per_sec}"), T("{int:up.dp.write_bw_64k.msg_per_sec}"), "msg/s"),
    Row("ib_write_bw 64 KiB: bandwidth (perftest BW average)", T("{get:rs.dp.write_bw_64k.mb_per_sec}"), T("{get:up.dp.write_bw_64k.mb_per_sec}"), "MB/s"),
    Row("ib_write_bw 64 KiB: emulator time per WQE / per doorbell, mean over the run ({get:rs.dp.write_bw_64k.wqes} / {get:up.dp.write_bw_64k.wqes} WQEs, {get:rs.dp.write_bw_64k.doorbells} / {get:up.dp.write_bw_64k.doorbells} doorbells)", T("{us:rs.dp.write_bw_64k.wqe_mean_ns} / {us:rs.dp.write_bw_64k.db_mean_ns}"), T("{us:up.dp.write_bw_64k.wqe_mean_ns} / {us:up.dp.write_bw_64k.db_mean_ns}"), "µs"),
    Row("ib_write_bw 64 KiB: emulator time per message (its doorbell time over the run / messages) of the time per message (1 / message rate), share", T("{us:rs.dp.write_bw_64k.emu_ns_per_msg} of {us:rs.dp.write_bw_64k.msg_ns} ({get:rs.dp.write_bw_64k.emu_pct} %)"), T("{us:up.dp.write_bw_64k.emu_ns_per_msg} of {us:up.dp.write_bw_64k.msg_ns} ({get:up.dp.write_bw_64k.emu_pct} %)"), "µs"),
    Row("ib_write_lat 64 B: latency, typical (median) / 99th percentile (perftest, one way; iterations: {get:up.dp.iters_lat})", T("{get:rs.dp.write_lat_64.lat_typ_us} / {get:rs.dp.write_lat_64.lat_p99_us}"), T("{get:up.dp.write_lat_64.lat_typ_us} / {get:up.dp.write_lat_64.lat_p99_us}"), "µs"),
    Row("ib_write_lat 64 B: emulator time per WQE / per doorbell, mean over the run ({get:rs.dp.write_lat_64.wqes} / {get:up.dp.write_lat_64.wqes} WQEs, {get:rs.dp.write_lat_64.doorbells} / {get:up.dp.write_lat_64.doorbells} doorbells)", T("{us:rs.dp.write_lat_64.wqe_mean_ns} / {us:rs.dp.write_lat_64.db_mean_ns}"), T("{us:up.dp.write_lat_64.wqe_mean_ns} / {us:up.dp.write_lat_64.db_mean_ns}"), "µs"),
    Row("ib_write_lat 64 B: emulator time per message (its doorbell time over the run / messages) of the time per message (the mean one-way latency), share", T("{us:rs.dp.write_lat_64.emu_ns_per_msg} of {us:rs.dp.write_lat_64.msg_ns} ({get:rs.dp.write_lat_64.emu_pct} %)"), T("{us:up.dp.write_lat_64.emu_ns_per_msg} of {us:up.dp.write_lat_64.msg_ns} ({get:up.dp.write_lat_64.emu_pct} %)"), "µs"),
    Row("ib_send_bw 64 B: message rate, sender / receiver (perftest MsgRate of the client / of the server; iterations: {get:up.dp.iters_bw})", T("{int:rs.dp.send_bw_64.msg_per_sec} / {int:rs.dp.send_bw_64.rx_msg_per_sec}"), T("{int:up.dp.send_bw_64.msg_per_sec} / {int:up.dp.send_bw_64.rx_msg_per_sec}"), "msg/s"),
    Row("ib_send_bw 64 B: bandwidth (perftest BW average of the client)", T("{get:rs.dp.send_bw_64.mb_per_sec}"), T("{get:up.dp.send_bw_64.mb_per_sec}"), "MB/s"),
    Row("ib_send_bw 64 B: emulator time per WQE / per doorbell, mean over the run ({get:rs.dp.send_bw_64.wqes} / {get:up.dp.send_bw_64.wqes} WQEs, {get:rs.dp.send_bw_64.doorbells} / {get:up.dp.send_bw_64.doorbells} doorbells)", T("{us:rs.dp.send_bw_64.wqe_mean_ns} / {us:rs.dp.send_bw_64.db_mean_ns}"), T("{us:up.dp.send_bw_64.wqe_mean_ns} / {us:up.dp.send_bw_64.db_mean_ns}"), "µs"),
    Row("ib_send_bw 64 B: emulator time per message (its doorbell time over the run / messages) of the time per message (1 / message rate), share", T("{us:rs.dp.send_bw_64.emu_ns_per_msg} of {us:rs.dp.send_bw_64.msg_ns} ({get:rs.dp.send_bw_64.emu_pct} %)"), T("{us:up.dp.send_bw_64.emu_ns_per_msg} of {us:up.dp.send_bw_64.msg_ns} ({get:up.dp.send_bw_64.emu_pct} %)"), "µs"),
    Row("ib_send_bw 4 KiB: message rate, sender / receiver (perftest MsgRate of the client / of the server; iterations: {get:up.dp.iters_bw})", T("{int:rs.dp.send_bw_4k.msg_per_sec} / {int:rs.dp.send_bw_4k.rx_msg_per_sec}"), T("{int:up.dp.send_bw_4k.msg_per_sec} / {int:up.dp.send_bw_4k.rx_msg_per_sec}"), "msg/s"),
    Row("ib_send_bw 4 KiB: bandwidth (perftest BW average of the client)", T("{get:rs.dp.send_bw_4k.mb_per_sec}"), T("{get:up.dp.send_bw_4k.mb_per_sec}"), "MB/s"),
    Row("ib_send_bw 4 KiB: emulator time per WQE / per doorbell, mean over the run ({get:rs.dp.send_bw_4k.wqes} / {get:up.dp.send_bw_4k.wqes} WQEs, {get:rs.dp.send_bw_4k.doorbells} / {get:up.dp.send_bw_4k.doorbells} doorbells)", T("{us:rs.dp.send_bw_4k.wqe_mean_ns} / {us:rs.dp.send_bw_4k.db_mean_ns}"), T("{us:up.dp.send_bw_4k.wqe_mean_ns} / {us:up.dp.send_bw_4k.db_mean_ns}"), "µs"),
    Row("ib_send_bw 4 KiB: emulator time per message (its doorbell time over the run / messages) of the time per message (1 / message rate), share", T("{us:rs.dp.send_bw_4k.emu_ns_per_msg} of {us:rs.dp.send_bw_4k.msg_ns} ({get:rs.dp.send_bw_4k.emu_pct} %)"), T("{us:up.dp.send_bw_4k.emu_ns_per_msg} of {us:up.dp.send_bw_4k.msg_ns} ({get:up.dp.send_bw_4k.emu_pct} %)"), "µs"),
    Row("ib_send_bw 64 KiB: message rate, sender / receiver (perftest MsgRate of the client / of the server; iterations: {get:up.dp.iters_bw} / 4)", T("{int:rs.dp.send_bw_64k.msg_per_sec} / {int:rs.dp.send_bw_64k.rx_msg_per_sec}"), T("{int:up.dp.send_bw_64k.msg_per_sec} / {int:up.dp.send_bw_64k.rx_msg_per_sec}"), "msg/s"),
    Row("ib_send_bw 64 KiB: bandwidth (perftest BW average of the client)", T("{get:rs.dp.send_bw_64k.mb_per_sec}"), T("{get:up.dp.send_bw_64k.mb_per_sec}"), "MB/s"),
    Row("ib_send_bw 64 KiB: emulator time per WQE / per doorbell, mean over the run ({get:rs.dp.send_bw_64k.wqes} / {get:up.dp.send_bw_64k.wqes} WQEs, {get:rs.dp.send_bw_64k.doorbells} / {get:up.dp.send_bw_64k.doorbells} doorbells)", T("{us:rs.dp.send_bw_64k.wqe_mean_ns} / {us:rs.dp.send_bw_64k.db_mean_ns}"), T("{us:up.dp.send_bw_64k.wqe_mean_ns} / {us:up.dp.send_bw_64k.db_mean_ns}"), "µs"),
    Row("ib_send_bw 64 KiB: emulator time per message (its doorbell time over the run / messages) of the time per message (1 / message rate), share", T("{us:rs.dp.send_bw_64k.emu_ns_per_msg} of {us:rs.dp.send_bw_64k.msg_ns} ({get:rs.dp.send_bw_64k.emu_pct} %)"), T("{us:up.dp.send_bw_64k.emu_ns_per_msg} of {us:up.dp.send_bw_64k.msg_ns} ({get:up.dp.send_bw_64k.emu_pct} %)"), "µs"),
    Row("ib_send_lat 64 B: latency, typical (median) / 99th percentile (perftest, one way; iterations: {get:up.dp.iters_lat})", T("{get:rs.dp.send_lat_64.lat_typ_us} / {get:rs.dp.send_lat_64.lat_p99_us}"), T("{get:up.dp.send_lat_64.lat_typ_us} / {get:up.dp.send_lat_64.lat_p99_us}"), "µs"),
    Row("ib_send_lat 64 B: emulator time per WQE / per doorbell, mean over the run ({get:rs.dp.send_lat_64.wqes} / {get:up.dp.send_lat_64.wqes} WQEs, {get:rs.dp.send_lat_64.doorbells} / {get:up.dp.send_lat_64.doorbells} doorbells)", T("{us:rs.dp.send_lat_64.wqe_mean_ns} / {us:rs.dp.send_lat_64.db_mean_ns}"), T("{us:up.dp.send_lat_64.wqe_mean_ns} / {us:up.dp.send_lat_64.db_mean_ns}"), "µs"),
    Row("ib_send_lat 64 B: emulator time per message (its doorbell time over the run / messages) of the time per message (the mean one-way latency), share", T("{us:rs.dp.send_lat_64.emu_ns_per_msg} of {us:rs.dp.send_lat_64.msg_ns} ({get:rs.dp.send_lat_64.emu_pct} %)"), T("{us:up.dp.send_lat_64.emu_ns_per_msg} of {us:up.dp.send_lat_64.msg_ns} ({get:up.dp.send_lat_64.emu_pct} %)"), "µs"),
    Row("emulator time per WQE, p50 / p99 of its histogram after the runs (n={get:rs.dp.all.wqe_count} / {get:up.dp.all.wqe_count}, every send WQE since the emulator started: upstream's include mlx5_rs's, which ran first)", T("{us:rs.dp.all.wqe_p50_ns} / {us:rs.dp.all.wqe_p99_ns}"), T("{us:up.dp.all.wqe_p50_ns} / {us:up.dp.all.wqe_p99_ns}"), "µs"),
    Row("emulator time per doorbell, p50 / p99 of its histogram after the runs (n={get:rs.dp.all.db_count} / {get:up.dp.all.db_count}, every send doorbell since the emulator started: upstream's include mlx5_rs's)", T("{us:rs.dp.all.db_p50_ns} / {us:rs.dp.all.db_p99_ns}"), T("{us:up.dp.all.db_p50_ns} / {us:up.dp.all.db_p99_ns}"), "µs"),
    Row("data-path runs, wall time (all of the above, perftest pairs included)", T("{get:rs.dp.secs}"), T("{get:up.dp.secs}"), "s"),
    // -- kernel verbs, the driver's own cost (VM "ib", kbench_figures: the test module
    // ib_kclient with bench=N, tests/modules/ib_kclient/bench.c): SENDs of 64 B in chains
    Row("kernel verbs: ib_post_send, per work request (one call and one doorbell per chain of {get:rs.kv.batch} / {get:up.kv.batch}; {get:rs.kv.sends} / {get:up.kv.sends} SENDs; ib_kclient steps ok {get:rs.kv.steps_ok} / {get:up.kv.steps_ok} of 4)", T("{get:rs.kv.post_send_ns}"), T("{get:up.kv.post_send_ns}"), "ns"),
    Row("kernel verbs: the emulator's send WQEs / doorbells over the loop (module load to return)", T("{get:rs.kv.emu_wqes} / {get:rs.kv.emu_doorbells}"), T("{get:up.kv.emu_wqes} / {get:up.kv.emu_doorbells}"), "count"),
    Row("kernel verbs: ib_post_recv, per work request (one call per chain)", T("{get:rs.kv.post_recv_ns}"), T("{get:up.kv.post_recv_ns}"), "ns"),
    Row("kernel verbs: ib_poll_cq, per send CQE (the calls that returned CQEs; empty polls, not timed: {get:rs.kv.empty_polls} / {get:up.kv.empty_polls})", T("{get:rs.kv.poll_send_ns}"), T("{get:up.kv.poll_send_ns}"), "ns"),
    Row("kernel verbs: ib_poll_cq, per receive CQE", T("{get:rs.kv.poll_recv_ns}"), T("{get:up.kv.poll_recv_ns}"), "ns"),
    Row("kernel verbs: ib_post_send returned (doorbell rung) → completion handler, p50 / mean, the device's work on the first WQE included (n={get:rs.kv.irq_n} / {get:up.kv.irq_n}; rounds whose handler ran before the post returned, not sampled: {get:rs.kv.irq_early} / {get:up.kv.irq_early})", T("{us:rs.kv.irq_ns_p50} / {us:rs.kv.irq_ns_mean}"), T("{us:up.kv.irq_ns_p50} / {us:up.kv.irq_ns_mean}"), "µs"),
    Row("kernel verbs: ib_post_send returned → completion handler, min … max", T("{us:rs.kv.irq_ns_min} … {us:rs.kv.irq_ns_max}"), T("{us:up.kv.irq_ns_min} … {us:up.kv.irq_ns_max}"), "µs"),
    Row("kernel verbs: the bench's wall time (module load, walk and loop)", T("{get:rs.kv.secs}"), T("{get:up.kv.secs}"), "s"),
];

/// The teardown table: one row per point P (pages demanded), one column per
/// (header, cell); `{P}` in a cell is the point.
#[rustfmt::skip]
pub const TEARDOWN_COLUMNS: &[(&str, &str)] = &[
    ("init pages demanded (held: upstream / rs)", "{P} ({get:td.{P}.up_held} / {get:td.{P}.rs_held})"),
    ("rs fast, rmmod", "{f1:td.{P}.rs_fast_ms}{freed:td.{P}.rs_fast_freed,td.{P}.rs_held}"),
    ("rs fast, device-side", "{f3:td.{P}.rs_fast_dev_ms}"),
    ("rs fast, local page freeing (own log)", "{f1:td.{P}.rs_fast_free_log_ms}"),
    ("rs graceful, rmmod", "{f1:td.{P}.rs_graceful_ms}{back:td.{P}.rs_held_after}"),
    ("rs graceful, device-side", "{f1:td.{P}.rs_graceful_dev_ms}"),
    ("rs reclaim, own log", "{f1:td.{P}.rs_reclaim_log_ms}"),
    ("upstream graceful, modprobe -r", "{f1:td.{P}.up_graceful_ms}{back:td.{P}.up_held_after}"),
    ("upstream graceful, device-side", "{f1:td.{P}.up_graceful_dev_ms}"),
    ("upstream fast at power-off, device-side", "{f3:td.{P}.up_fast_dev_ms}"),
    ("load: insmod / modprobe", "{f1:td.{P}.rs_load_ms} / {f1:td.{P}.up_load_ms}"),
];

/// The plot's series, in legend order: (legend, key of the teardown time at point `{P}`).
#[rustfmt::skip]
pub const PLOT_SERIES: &[(&str, &str)] = &[
    ("mlx5_rs fast (rmmod, fast_unload=1)", "td.{P}.rs_fast_ms"),
    ("mlx5_rs graceful (rmmod)", "td.{P}.rs_graceful_ms"),
    ("upstream graceful (modprobe -r)", "td.{P}.up_graceful_ms"),
    ("upstream fast (power-off, device-side prepare → DISABLED)", "td.{P}.up_fast_dev_ms"),
    ("mlx5_rs fast, device-side prepare → DISABLED", "td.{P}.rs_fast_dev_ms"),
];
