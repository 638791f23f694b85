//! The statistics report of the control socket's `stats` request, as JSON.

use crate::device::Device;
use crate::fw::latency::LatencyHist;
use crate::fw::timeline::Timeline;
use crate::ifc::opcodes::opcode_name;
use crate::ifc::status::{CmdStatus, DeliveryStatus};
use serde_json::{json, Map, Value};

/// One EQ's interrupt → next consumer-index doorbell figures (`pending`: an interrupt
/// not yet followed by a doorbell).
fn latency(h: &LatencyHist, pending: bool) -> Value {
    json!({
        "count": h.count, "mean_ns": h.mean_ns(), "p50_ns": h.percentile_ns(50.0),
        "p99_ns": h.percentile_ns(99.0), "min_ns": h.min_ns, "max_ns": h.max_ns, "pending": pending,
    })
}

/// Teardown timestamps, ms since the emulator started (null = never happened), and the
/// intervals between them in µs.
fn timeline(t: &Timeline) -> Value {
    json!({
        "prepare_fast_ms": t.ms(t.prepare_fast),
        "nic_disabled_ms": t.ms(t.nic_disabled),
        "teardown_ms": t.ms(t.teardown),
        "disable_hca_ms": t.ms(t.disable_hca),
        "last_doorbell_ms": t.ms(t.last_doorbell),
        "fast_teardown_us": t.fast_teardown_us(),
        "graceful_teardown_us": t.graceful_teardown_us(),
    })
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// PCI config-space state the guest set: MSI-X enable and bus mastering now, and
/// when (ms since start, as the timeline) a write last turned them off.
fn pci_state(dev: &Device, t: &Timeline) -> Value {
    let pci = dev.pci.lock().unwrap_or_else(|e| e.into_inner());
    json!({
        "msix_enabled": pci.msix_enabled(),
        "bus_master": pci.bus_master(),
        "msix_disabled_ms": t.ms(pci.msix_disabled_at),
        "master_cleared_ms": t.ms(pci.master_cleared_at),
    })
}

/// The VSC gateway (`crate::vsc`): semaphore holders (0 = free) and what the driver did.
fn vsc_state(dev: &Device) -> Value {
    let pci = dev.pci.lock().unwrap_or_else(|e| e.into_inner());
    let v = &pci.vsc;
    let s = &v.stats;
    let spaces: Map<String, Value> = s
        .space_selects
        .iter()
        .map(|(k, n)| (format!("{k:#x}"), json!(n)))
        .collect();
    json!({
        "gw_holder": v.gw_holder(),
        "sw_reset_holder": v.sw_reset_holder(),
        "gw_locks": s.gw_locks,
        "gw_unlocks": s.gw_unlocks,
        "space_selects": spaces,
        "unsupported_spaces": s.unsupported_spaces,
        "reads": s.reads,
        "writes": s.writes,
        "bad_addresses": s.bad_addresses,
        "unlocked_ops": s.unlocked_ops,
        "sw_reset_sem_takes": s.sw_reset_sem_takes,
        "sw_reset_sem_releases": s.sw_reset_sem_releases,
    })
}

/// Sync reset (`fw/sync_reset.rs`): where the handshake is, MFRL's state and method,
/// the counters, and the PCI resets that reached the device.
fn sync_reset_state(dev: &Device, s: &crate::fw::sync_reset::SyncReset) -> Value {
    let c = &s.stats;
    json!({
        "phase": s.phase_name(),
        "reset_state": s.reset_state,
        "method": if s.method == crate::ifc::regs::mfrl::METHOD_HOT_RESET { "hot_reset" } else { "link_toggle" },
        "timeout_ms": s.negotiation.as_millis() as u64,
        "requests_function": c.requests_function,
        "requests_other": c.requests_other,
        "requests_refused": c.requests_refused,
        "request_events": c.request_events,
        "acks": c.acks,
        "nacks": c.nacks,
        "late_responses": c.late_responses,
        "reset_now_events": c.reset_now_events,
        "abort_events": c.abort_events,
        "timeouts": c.timeouts,
        "aborts_requested": c.aborts_requested,
        "activations": c.activations,
        "queries": c.queries,
        "events_lost": c.events_lost,
        "pci_resets": dev.pci_resets.load(std::sync::atomic::Ordering::Relaxed),
    })
}

/// Init-segment knobs and what the driver read while `initializing` was set.
fn init_seg_state(dev: &Device) -> Value {
    let r = dev.regs();
    let reads: Map<String, Value> = r
        .reads_while_initializing
        .iter()
        .map(|(k, v)| ((*k).to_string(), json!(v)))
        .collect();
    json!({
        "initializing": r.initializing(),
        "reads_while_initializing": reads,
        "knobs": format!("{:?}", r.knobs),
    })
}

/// The `stats` reply.
pub fn stats(dev: &Device) -> Value {
    let fw = dev.fw();
    let mut commands = Map::new();
    let mut total = 0u64;
    for (op, by_status) in &fw.stats.commands {
        let mut m = Map::new();
        for (st, n) in by_status {
            let key = CmdStatus::from_raw(*st).map_or(format!("{st:#x}"), |s| s.name().to_string());
            m.insert(key, json!(n));
            total += n;
        }
        let name = opcode_name(*op);
        let key = if name == "UNKNOWN" {
            format!("{op:#x}")
        } else {
            name.to_string()
        };
        commands.insert(key, Value::Object(m));
    }
    let delivery: Map<String, Value> = fw
        .stats
        .delivery_errors
        .iter()
        .map(|(st, n)| {
            (
                DeliveryStatus::from_raw(*st).map_or(format!("{st:#x}"), |s| s.name().to_string()),
                json!(n),
            )
        })
        .collect();
    let eqs: Vec<Value> = fw
        .eqs
        .eqs
        .values()
        .map(|e| {
            json!({
                "eqn": e.eqn, "log_size": e.log_size, "uar_page": e.uar_page, "intr": e.intr,
                "mask": e.mask.iter().map(|m| format!("{m:#x}")).collect::<Vec<_>>(),
                "producer": e.pi, "consumer": e.ci, "armed": e.armed,
                "eqes": e.eqes, "lost": e.lost, "interrupts": e.interrupts,
                "irq_to_doorbell": latency(&e.irq_to_doorbell, e.irq_at.is_some()),
            })
        })
        .collect();
    let irqs: Map<String, Value> = fw
        .eqs
        .irqs_per_vector
        .iter()
        .map(|(v, n)| (v.to_string(), json!(n)))
        .collect();
    let l = &fw.ledger;
    // Functions with outstanding requests → how many (empty when none is).
    let mut outstanding: Map<String, Value> = Map::new();
    for r in &l.requests.outstanding {
        let e = outstanding.entry(r.func.to_string()).or_insert(json!(0));
        *e = json!(e.as_u64().unwrap_or(0) + 1);
    }
    let rq = &l.requests;
    json!({
        "ok": true,
        "function": {
            "enabled": fw.func.enabled,
            "initialized": fw.func.initialized,
            "issi": fw.func.issi,
            "fast_prepared": fw.func.fast_prepared,
            "quiesced": fw.func.quiesced,
            "driver_version": fw.func.driver_version,
            "teardowns": {"graceful": fw.func.teardowns[0], "force": fw.func.teardowns[1], "prepare_fast": fw.func.teardowns[2]},
        },
        "pages": {
            "held": l.held_total(),
            "held_by_function": {"0": l.held(0)},
            "given": l.given_total,
            "taken": l.taken_total,
            "rejected_gives": l.rejected_gives,
            "rejected_takes": l.rejected_takes,
            "alloc_fail_reports": l.alloc_fail_reports,
            "outstanding_requests": outstanding,
            "requests_sent": rq.sent,
            "requests_answered": rq.answered,
            "requests_unanswered": rq.unanswered,
            "requests_outstanding": rq.outstanding.len(),
            "requests_queued": rq.queued.len(),
            "requests_never_sent": rq.never_sent,
            "requests_cant_give": rq.cant_give,
            "requests_out_of_order": rq.out_of_order,
            "requests_reasked": rq.reasked,
            "release_all_sent": rq.release_all_sent,
            "take_fault": l.take_fault.as_ref().map(|(f, c)| json!({"fault": format!("{f:?}"), "count": c})),
            "take_faults": l.take_faults,
            "released_all": l.released_all,
            "demand": {"boot": l.boot_demand, "init": l.init_demand, "regular": l.regular_demand, "runtime": l.runtime_demand},
        },
        "commands": commands,
        "commands_total": total,
        "delivery_errors": delivery,
        "doorbells": fw.stats.doorbells,
        "never_completed": fw.stats.never_completed,
        "corruptions": fw.stats.corruptions,
        "msix_vectors": dev.msix_vectors(),
        "strict": fw.strict.list().iter().map(|(n, on)| (n.to_string(), json!(on))).collect::<Map<String, Value>>(),
        "deferred": fw.deferred.len(),
        "eqs": eqs,
        "eqe_waiting": fw.eqs.waiting.len(),
        "interrupts": irqs,
        "uars": fw.uars.iter().collect::<Vec<_>>(),
        // Verbs objects (issue 11, emulator objects slice).
        "objects": objects(&fw.objs),
        // The data path (issue 22): one part per dp/ file; `doorbells`: the MMIO path.
        "dp": {
            "send": fw.dp.send.report(),
            "mkeys": fw.dp.xlate.report(),
            "cqes": fw.dp.cqe.report(),
            "recv": fw.dp.recv.report(),
            "wire": fw.dp.wire.report(),
            "faults": fw.dp.faults.report(),
            "mad": fw.dp.mad.report(),
            "doorbells": dev.doorbells.report(),
        },
        "dma_errors": fw.stats.dma_errors,
        "dma_regions": dev.mem.regions(),
        "dma_maps_without_fd": dev.dma_maps_without_fd.load(std::sync::atomic::Ordering::Relaxed),
        "timeline": timeline(&fw.timeline),
        "pci": pci_state(dev, &fw.timeline),
        "init_seg": init_seg_state(dev),
        "vsc": vsc_state(dev),
        "fw_reset": {
            "restarts": fw.stats.fw_restarts,
            "sw_reset_requests": fw.stats.sw_reset_requests,
            "without_semaphore": fw.stats.sw_reset_without_semaphore,
            "unsupported": fw.stats.sw_reset_unsupported,
        },
        "sync_reset": sync_reset_state(dev, &fw.sync),
        "observed": {
            "set_general_caps": fw.observed.set_general_caps,
            "set_cap_nonzero_tail": fw.observed.set_cap_nonzero_tail,
            "set_cap_tail_bytes_last": fw.observed.set_cap_tail_bytes_last,
            "sw_owner_ids": fw.observed.sw_owner_ids.iter().map(|id| hex(id)).collect::<Vec<_>>(),
            "last_sw_owner_id": fw.observed.sw_owner_ids.back().map(|id| hex(id)),
        },
        "knobs": {
            "cap_tail_fill": fw.knobs.cap_tail_fill,
            "force_state_fail": fw.knobs.force_state_fail,
            "prepare_fast_state_fail": fw.knobs.prepare_fast_state_fail,
        },
        "violations": fw.stats.violations,
        "eq_doorbells_after_stop": fw.stats.eq_doorbells_after_stop,
        "uar_doorbells_after_stop": fw.stats.uar_doorbells_after_stop,
        "doorbells_after_destroy": fw.stats.doorbells_after_destroy,
        "recent_violations": fw.stats.recent_violations.iter().collect::<Vec<_>>(),
    })
}

/// The `objects` section: live objects per type (`total` 0 after a clean unload),
/// creates and destroys per type, objects a teardown or reset dropped, the QPs' states,
/// the live SRQ numbers (SRQs, XRC SRQs, RMPs), object memory.
fn objects(o: &crate::fw::rsc::Objects) -> Value {
    let live: Map<String, Value> = o
        .counts()
        .into_iter()
        .map(|(k, n)| (k.to_string(), json!(n)))
        .collect();
    let qp_states: Map<String, Value> = o
        .qps
        .iter()
        .map(|(n, q)| (n.to_string(), json!(q.state)))
        .collect();
    json!({
        "live": live,
        "total": o.total(),
        "created": o.created,
        "destroyed": o.destroyed,
        "dropped": o.dropped,
        "qp_states": qp_states,
        "srqns": o.srqs.keys().collect::<Vec<_>>(),
        "pages": {
            "objects_per_page": o.cost.objects_per_page,
            "charged": o.cost.charged,
            "give_requests": o.cost.requests.0,
            "take_requests": o.cost.requests.1,
            "not_raised": o.cost.not_raised,
        },
    })
}

/// The `ledger` reply: the few numbers a test polls in a loop, as one short line
/// (`{"enabled":B,"held":N,"ok":true,"violations":N}`), cheap to compare in a shell.
pub fn ledger(dev: &Device) -> Value {
    let fw = dev.fw();
    json!({
        "ok": true,
        "held": fw.ledger.held_total(),
        "enabled": fw.func.enabled,
        "violations": fw.stats.violations,
    })
}
