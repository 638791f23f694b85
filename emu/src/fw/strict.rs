//! Strict behaviours, off by default, switched on by the control socket
//! (`{"cmd":"strict","rule":NAME,"on":B}`, until the next reset) or `--strict NAME`:
//! checks with no PRM or `mlx5_ifc.h` source (off: the emulator answers as the most
//! permissive firmware would, and still counts a protocol violation where upstream
//! never does it), and real-firmware reactions the default model softens.
//! Listed in emu/README.md, "Rules and their sources".

/// The strict rules.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Strict {
    /// CREATE_EQ with `status`, `consumer_counter` or `producer_counter` of the EQ
    /// context non-zero fails with BAD_PARAM. These are device-owned fields (QUERY_EQ
    /// reports them); upstream zeroes them; the PRM does not say firmware checks them.
    pub eq_ctx_device_fields: bool,
    /// DEALLOC_UAR of a UAR page an EQ still rings fails with BAD_RES_STATE. Upstream
    /// destroys its EQs first; what firmware answers is not documented.
    pub dealloc_uar_in_use: bool,
    /// An event lost to a full EQ is a firmware fatal error: health syndrome 0x0c
    /// (`MLX5_INITIAL_SEG_HEALTH_SYNDROME_ASYNCHRONOUS_EQ_BUF_OVERRUN`), as on real
    /// firmware. Off: the event is dropped and counted (`eqs[].lost`).
    pub eq_overrun_fatal: bool,
    /// An EQ doorbell on a UAR page a teardown dropped is a protocol violation. Off: it
    /// is counted (`eq_doorbells_after_stop`) and ignored. Upstream's interrupt handler
    /// can re-arm its EQ after the teardown command it completed let the waiter go on
    /// to stop the function; nothing documents firmware reacting to it.
    pub eq_doorbell_after_stop: bool,
    /// DEALLOC/DESTROY of a verbs object another object still references (a PD with a
    /// QP, a CQ with a QP, ...) fails with BAD_RES_STATE, as real firmware answers
    /// (it keeps reference counts). Off: it executes and counts a violation (upstream
    /// destroys users first).
    pub destroy_in_use: bool,
    /// A QP transition whose `opt_param_mask` names a parameter the PRM does not allow
    /// for that transition and service type fails with BAD_PARAM. Off: the extra bits
    /// are ignored and counted as a violation.
    pub qp_opt_param: bool,
    /// A send WQE the device cannot read (DMA error, fault `wqe_dma`) completes
    /// nothing: the QP goes to ERR with `WQ_CATAS_ERROR` and its send queue stops at
    /// that WQE (IBTA 11.6.3.1: a Local Work Queue Catastrophic Error "prevents the
    /// reporting of completions"). Off: the WQE also completes with a local QP
    /// operation error and later WQEs flush; the PRM says neither.
    pub wqe_fetch_catastrophic: bool,
}

impl Strict {
    /// Rule names, as the control socket and `stats` spell them.
    pub const NAMES: &'static [&'static str] = &[
        "eq_ctx_device_fields",
        "dealloc_uar_in_use",
        "eq_overrun_fatal",
        "eq_doorbell_after_stop",
        "destroy_in_use",
        "qp_opt_param",
        "wqe_fetch_catastrophic",
    ];

    /// Switches rule `name`; `Err` for an unknown name.
    pub fn set(&mut self, name: &str, on: bool) -> Result<(), String> {
        match name {
            "eq_ctx_device_fields" => self.eq_ctx_device_fields = on,
            "dealloc_uar_in_use" => self.dealloc_uar_in_use = on,
            "eq_overrun_fatal" => self.eq_overrun_fatal = on,
            "eq_doorbell_after_stop" => self.eq_doorbell_after_stop = on,
            "destroy_in_use" => self.destroy_in_use = on,
            "qp_opt_param" => self.qp_opt_param = on,
            "wqe_fetch_catastrophic" => self.wqe_fetch_catastrophic = on,
            _ => {
                return Err(format!(
                    "unknown strict rule {name:?} (known: {})",
                    Self::NAMES.join(", ")
                ))
            }
        }
        Ok(())
    }

    /// (name, on) of every rule.
    pub fn list(&self) -> [(&'static str, bool); 7] {
        [
            ("eq_ctx_device_fields", self.eq_ctx_device_fields),
            ("dealloc_uar_in_use", self.dealloc_uar_in_use),
            ("eq_overrun_fatal", self.eq_overrun_fatal),
            ("eq_doorbell_after_stop", self.eq_doorbell_after_stop),
            ("destroy_in_use", self.destroy_in_use),
            ("qp_opt_param", self.qp_opt_param),
            ("wqe_fetch_catastrophic", self.wqe_fetch_catastrophic),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        let mut s = Strict::default();
        assert!(
            s.list().iter().all(|(_, on)| !on),
            "every rule off by default"
        );
        for n in Strict::NAMES {
            s.set(n, true).unwrap();
        }
        assert!(s.list().iter().all(|(_, on)| *on));
        assert_eq!(s.list().map(|(n, _)| n), *Strict::NAMES);
        assert!(s.set("nope", true).is_err());
        assert!(s.set("eq_overrun_fatal", false).is_ok() && !s.eq_overrun_fatal);
    }
}
