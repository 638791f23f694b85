// SPDX-License-Identifier: GPL-2.0

//! Sync reset (firmware-initiated reset) decisions (pure `core` code, host-tested):
//! whether a RESET_REQUEST is acked or nacked ([`answer`]), and what the MFRL read
//! that precedes the answer says ([`MfrlState`]).
//!
//! Sources, upstream's (the oracle), `fw_reset.c`:
//!
//! - `mlx5_sync_reset_request_event`: the request is nacked when MFRL cannot be read
//!   ("Failed reading MFRL"), when the function cannot do the reset now
//!   (`mlx5_is_reset_now_capable`: a bridge above the function, cap `fast_teardown`,
//!   the device ids of the functions below the bridge), or when the devlink parameter
//!   `enable_remote_dev_reset` is false (`MLX5_FW_RESET_FLAGS_NACK_RESET_REQUEST`);
//!   else the health poll stops and the request is acked.
//! - `mlx5_fw_reset_get_reset_method`: the PCI reset method is MFRL's
//!   `pci_reset_req_method` only with cap `pcie_reset_using_hotreset_method`; without
//!   it the method is the link toggle.
//! - `mlx5_sync_pci_reset`: hot reset (`pci_reset_bus`) or link toggle; anything else
//!   is refused. This driver does the hot reset only: a request naming the link toggle
//!   is nacked (upstream's link toggle needs the hotplug and link-status handling of
//!   `mlx5_pci_link_toggle`, which the driver does not have).

use crate::ifc::regs::mfrl;

/// What MFRL reads (`mlx5_reg_mfrl_query`): every field as the device gave it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MfrlState {
    /// Reset levels offered (bit mask, `MLX5_MFRL_REG_RESET_LEVEL*`).
    pub reset_level: u8,
    /// Reset types offered (bit mask).
    pub reset_type: u8,
    /// State of the last sync reset (`MLX5_MFRL_REG_RESET_STATE_*`).
    pub reset_state: u8,
    /// The PCI reset method the firmware asks for (`MLX5_MFRL_REG_PCI_RESET_METHOD_*`).
    pub method: u8,
}

/// What the function knows when a RESET_REQUEST arrives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RequestContext {
    /// devlink's `enable_remote_dev_reset` (default true).
    pub remote_reset_allowed: bool,
    /// The function is loaded and running (not dead, not torn down, no PCI error's
    /// recovery under way).
    pub running: bool,
    /// Cap `fast_teardown` (current general caps).
    pub fast_teardown: bool,
    /// Cap `pcie_reset_using_hotreset_method` was set by SET_HCA_CAP.
    pub hotreset_cap: bool,
    /// The function sits below a bridge (the bus below it can be reset).
    pub has_bridge: bool,
    /// The MFRL read, or `None` when it failed.
    pub mfrl: Option<MfrlState>,
}

/// Why a request is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NackWhy {
    /// devlink's `enable_remote_dev_reset` is false.
    NotAllowed,
    /// The function is not running.
    NotRunning,
    /// MFRL could not be read.
    MfrlUnreadable,
    /// No fast teardown (upstream: "fast teardown is not supported by firmware").
    NoFastTeardown,
    /// No bridge above the function (upstream: "PCI bus bridge is not accessible").
    NoBridge,
    /// The firmware asks for a PCI reset method this driver does not do.
    Method(u8),
}

/// The answer to a RESET_REQUEST.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Answer {
    /// Stop the health poll and ack; the reset is done by the PCI reset method given.
    Ack {
        /// `MLX5_MFRL_REG_PCI_RESET_METHOD_*`.
        method: u8,
    },
    /// Nack.
    Nack(NackWhy),
}

/// The PCI reset method a request asks for: MFRL's `pci_reset_req_method` with cap
/// `pcie_reset_using_hotreset_method`, else the link toggle (upstream's
/// `mlx5_fw_reset_get_reset_method`). `None` when MFRL is needed and unreadable.
pub fn reset_method(hotreset_cap: bool, mfrl: Option<MfrlState>) -> Option<u8> {
    if !hotreset_cap {
        return Some(mfrl::METHOD_LINK_TOGGLE);
    }
    mfrl.map(|m| m.method)
}

/// Acks or nacks a RESET_REQUEST, checked in upstream's order (the MFRL read first,
/// then whether the reset can be done now, then the devlink parameter).
pub fn answer(c: &RequestContext) -> Answer {
    let Some(method) = reset_method(c.hotreset_cap, c.mfrl) else {
        return Answer::Nack(NackWhy::MfrlUnreadable);
    };
    if !c.running {
        return Answer::Nack(NackWhy::NotRunning);
    }
    if !c.has_bridge {
        return Answer::Nack(NackWhy::NoBridge);
    }
    if !c.fast_teardown {
        return Answer::Nack(NackWhy::NoFastTeardown);
    }
    if method != mfrl::METHOD_HOT_RESET {
        return Answer::Nack(NackWhy::Method(method));
    }
    if !c.remote_reset_allowed {
        return Answer::Nack(NackWhy::NotAllowed);
    }
    Answer::Ack { method }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn good() -> RequestContext {
        RequestContext {
            remote_reset_allowed: true,
            running: true,
            fast_teardown: true,
            hotreset_cap: true,
            has_bridge: true,
            mfrl: Some(MfrlState {
                reset_level: mfrl::LEVEL3,
                reset_type: mfrl::TYPE_FULL_CHIP,
                reset_state: mfrl::STATE_IN_NEGOTIATION,
                method: mfrl::METHOD_HOT_RESET,
            }),
        }
    }

    #[test]
    fn ack_when_everything_allows_it() {
        assert_eq!(
            answer(&good()),
            Answer::Ack {
                method: mfrl::METHOD_HOT_RESET
            }
        );
    }

    #[test]
    fn nack_when_the_parameter_is_off() {
        let c = RequestContext {
            remote_reset_allowed: false,
            ..good()
        };
        assert_eq!(answer(&c), Answer::Nack(NackWhy::NotAllowed));
    }

    #[test]
    fn nack_when_the_reset_cannot_be_done() {
        let c = RequestContext {
            fast_teardown: false,
            ..good()
        };
        assert_eq!(answer(&c), Answer::Nack(NackWhy::NoFastTeardown));
        let c = RequestContext {
            has_bridge: false,
            ..good()
        };
        assert_eq!(answer(&c), Answer::Nack(NackWhy::NoBridge));
        let c = RequestContext {
            running: false,
            ..good()
        };
        assert_eq!(answer(&c), Answer::Nack(NackWhy::NotRunning));
        let c = RequestContext {
            mfrl: None,
            ..good()
        };
        assert_eq!(answer(&c), Answer::Nack(NackWhy::MfrlUnreadable));
    }

    #[test]
    fn method_from_mfrl_only_with_the_hotreset_cap() {
        // The link toggle, asked for through MFRL or implied without the cap, is nacked.
        let mut c = good();
        c.mfrl = c.mfrl.map(|m| MfrlState {
            method: mfrl::METHOD_LINK_TOGGLE,
            ..m
        });
        assert_eq!(
            answer(&c),
            Answer::Nack(NackWhy::Method(mfrl::METHOD_LINK_TOGGLE))
        );
        let c = RequestContext {
            hotreset_cap: false,
            ..good()
        };
        assert_eq!(
            answer(&c),
            Answer::Nack(NackWhy::Method(mfrl::METHOD_LINK_TOGGLE))
        );
        // Without the cap MFRL is not needed for the method.
        assert_eq!(reset_method(false, None), Some(mfrl::METHOD_LINK_TOGGLE));
        assert_eq!(reset_method(true, None), None);
        // A method value the PRM does not define is refused as such.
        let mut c = good();
        c.mfrl = c.mfrl.map(|m| MfrlState { method: 7, ..m });
        assert_eq!(answer(&c), Answer::Nack(NackWhy::Method(7)));
    }

    #[test]
    fn the_parameter_is_checked_after_capability() {
        // Upstream's order: a function that cannot reset nacks for that reason even
        // with the parameter off (both nack; the log says why).
        let c = RequestContext {
            remote_reset_allowed: false,
            fast_teardown: false,
            ..good()
        };
        assert_eq!(answer(&c), Answer::Nack(NackWhy::NoFastTeardown));
    }
}
