//! PRM layouts of the ConnectX (mlx5) device interface.
//!
//! Pure `core` code shared by the kernel driver (`mod ifc;` in the crate root) and by
//! host crates (`#[path = "../../ifc/mod.rs"] pub mod ifc;`). Nothing here allocates,
//! panics on device data or uses `unsafe`.
//!
//! Two kinds of layouts live here:
//! - plain C structures from `include/linux/mlx5/device.h` (initialization segment,
//!   command queue entry, mailbox block, EQE) as `zerocopy` structs with big-endian
//!   integer fields ([`init_seg`], [`cmd_layout`], [`eqe`]);
//! - bit-array structures from `include/linux/mlx5/mlx5_ifc.h`, declared with the
//!   `prm_struct!` generator as typed fields ([`field::F`]: structure, Rust value type,
//!   bit offset and width, checked at compile time) read and written through
//!   [`field::Msg`] / [`field::MsgMut`] views, plus a table of untyped
//!   [`field::Field`]s. Every table is listed in [`ALL_STRUCTS`] so a host test can
//!   check each entry against the header of the target kernel.
//!
//! No driver code outside `ifc/` knows an offset: commands, EQEs, the health buffer and
//! the mailbox signatures all go through these definitions.
//!
//! In the kernel build (`cfg(CONFIG_RUST)`, set by the kernel's build and not by cargo)
//! the items that only the emulator or the host tests use carry
//! `#[cfg_attr(CONFIG_RUST, expect(dead_code, ...))]`: in the host crates they are
//! public API, where `dead_code` does not apply. The conformance tables (`PrmStruct`,
//! `ALL_STRUCTS`, `DEVICE_H_ONLY`) are not built into the kernel at all.

#[macro_use]
pub mod field;

pub mod caps;
pub mod cmd_layout;
pub mod cmds;
pub mod eq;
pub mod eqe;
pub mod init_seg;
// IB port (i11-emu-port).
pub mod mad;
pub mod pma;
pub mod smp_attrs;
pub mod vport;
// End IB port.
pub mod opcodes;
pub mod pages;
pub mod regs;
pub mod status;
// Verbs objects (issue 11, emulator objects slice).
pub mod cq;
pub mod ib_res;
pub mod mkey;
pub mod qp;
pub mod qp_state;
pub mod srq;
// SRQ / XRC / AH slice (issue 11): the AH's address vector, the SRQ WQE's first
// segment.
pub mod av;
// CQEs and the send / receive WQE segments (the kernel verbs data path).
pub mod wqe;
// UMR segments and translation entries (issue 22, data path memory keys; the kernel's
// fast-registration work request writes them).
pub mod umr;

/// Fields `device.h` names inside bits `mlx5_ifc.h` reserves (structure, field): the
/// header conformance test checks them against `device.h`'s layout instead (host crates
/// only).
#[cfg(not(CONFIG_RUST))]
pub const DEVICE_H_ONLY: &[(&str, &str)] =
    &[("health_buffer", "assert_var"), ("health_buffer", "crr")];

/// Every bit-array table defined in this module tree, for header conformance tests
/// (host crates only).
#[cfg(not(CONFIG_RUST))]
pub const ALL_STRUCTS: &[&field::PrmStruct] = &[
    &cmds::CMD_IN_HDR,
    &cmds::CMD_OUT_HDR,
    &cmds::ENABLE_HCA_IN,
    &cmds::DISABLE_HCA_IN,
    &cmds::QUERY_ISSI_IN,
    &cmds::QUERY_ISSI_OUT,
    &cmds::SET_ISSI_IN,
    &cmds::INIT_HCA_IN,
    &cmds::TEARDOWN_HCA_IN,
    &cmds::TEARDOWN_HCA_OUT,
    &cmds::SET_DRIVER_VERSION_IN,
    &cmds::QUERY_ADAPTER_IN,
    &cmds::QUERY_ADAPTER_OUT,
    &cmds::QUERY_ADAPTER_STRUCT,
    &cmds::ALLOC_UAR_IN,
    &cmds::ALLOC_UAR_OUT,
    &cmds::DEALLOC_UAR_IN,
    &cmds::NOP_IN,
    &caps::QUERY_HCA_CAP_IN,
    &caps::QUERY_HCA_CAP_OUT,
    &caps::SET_HCA_CAP_IN,
    &caps::CMD_HCA_CAP,
    &caps::CMD_HCA_CAP_2,
    &caps::ROCE_CAP,
    &caps::ATOMIC_CAPS,
    &pages::QUERY_PAGES_IN,
    &pages::QUERY_PAGES_OUT,
    &pages::MANAGE_PAGES_IN,
    &pages::MANAGE_PAGES_OUT,
    &regs::ACCESS_REGISTER_IN,
    &regs::ACCESS_REGISTER_OUT,
    &regs::DTOR_REG,
    &regs::DEFAULT_TIMEOUT,
    &regs::PAOS_REG,
    &regs::PMTU_REG,
    &regs::PTYS_REG,
    // IB port (i11-emu-port).
    &regs::PVLC_REG,
    &regs::PCAP_REG,
    &regs::NODE_DESC_REG,
    &regs::MFRL_REG,
    &regs::MCAM_ACCESS_REG,
    &regs::MCAM_FEATURES,
    &mad::MAD_IFC_IN,
    &mad::MAD_IFC_OUT,
    &vport::HCA_VPORT_CONTEXT,
    &vport::QUERY_HCA_VPORT_CONTEXT_IN,
    &vport::QUERY_HCA_VPORT_CONTEXT_OUT,
    &vport::MODIFY_HCA_VPORT_CONTEXT_IN,
    &vport::MODIFY_HCA_VPORT_CONTEXT_OUT,
    &vport::QUERY_HCA_VPORT_GID_IN,
    &vport::QUERY_HCA_VPORT_GID_OUT,
    &vport::QUERY_HCA_VPORT_PKEY_IN,
    &vport::QUERY_HCA_VPORT_PKEY_OUT,
    &vport::PKEY_ENTRY,
    &vport::QUERY_VPORT_STATE_IN,
    &vport::QUERY_VPORT_STATE_OUT,
    &vport::NIC_VPORT_CONTEXT,
    &vport::QUERY_NIC_VPORT_CONTEXT_IN,
    &vport::QUERY_NIC_VPORT_CONTEXT_OUT,
    // End IB port.
    &eq::CREATE_EQ_IN,
    &eq::CREATE_EQ_OUT,
    &eq::EQC,
    &eq::DESTROY_EQ_IN,
    &eq::QUERY_EQ_IN,
    &eq::QUERY_EQ_OUT,
    &eq::GEN_EQE_IN,
    &init_seg::INITIAL_SEG,
    &init_seg::HEALTH_BUFFER,
    // Verbs objects (issue 11, emulator objects slice).
    &ib_res::ALLOC_PD_IN,
    &ib_res::ALLOC_PD_OUT,
    &ib_res::DEALLOC_PD_IN,
    &ib_res::ALLOC_XRCD_IN,
    &ib_res::ALLOC_XRCD_OUT,
    &ib_res::DEALLOC_XRCD_IN,
    &ib_res::ALLOC_TRANSPORT_DOMAIN_IN,
    &ib_res::ALLOC_TRANSPORT_DOMAIN_OUT,
    &ib_res::DEALLOC_TRANSPORT_DOMAIN_IN,
    &ib_res::ALLOC_Q_COUNTER_IN,
    &ib_res::ALLOC_Q_COUNTER_OUT,
    &ib_res::DEALLOC_Q_COUNTER_IN,
    &ib_res::QUERY_Q_COUNTER_IN,
    &ib_res::QUERY_Q_COUNTER_OUT,
    &ib_res::QUERY_SPECIAL_CONTEXTS_IN,
    &ib_res::QUERY_SPECIAL_CONTEXTS_OUT,
    &cq::CQC,
    &cq::CREATE_CQ_IN,
    &cq::CREATE_CQ_OUT,
    &cq::DESTROY_CQ_IN,
    &cq::QUERY_CQ_IN,
    &cq::QUERY_CQ_OUT,
    &cq::MODIFY_CQ_IN,
    &qp::ADS,
    &qp::QPC,
    &qp::CREATE_QP_IN,
    &qp::CREATE_QP_OUT,
    &qp::DESTROY_QP_IN,
    &qp::QUERY_QP_IN,
    &qp::QUERY_QP_OUT,
    &qp::RST2INIT_QP_IN,
    &qp::INIT2INIT_QP_IN,
    &qp::INIT2RTR_QP_IN,
    &qp::RTR2RTS_QP_IN,
    &qp::RTS2RTS_QP_IN,
    &qp::SQERR2RTS_QP_IN,
    &qp::SQD2RTS_QP_IN,
    &qp::QP_2ERR_IN,
    &qp::QP_2RST_IN,
    &srq::SRQC,
    &srq::CREATE_SRQ_IN,
    &srq::CREATE_SRQ_OUT,
    &srq::DESTROY_SRQ_IN,
    &srq::QUERY_SRQ_IN,
    &srq::QUERY_SRQ_OUT,
    &srq::ARM_RQ_IN,
    &srq::XRC_SRQC,
    &srq::CREATE_XRC_SRQ_IN,
    &srq::CREATE_XRC_SRQ_OUT,
    &srq::DESTROY_XRC_SRQ_IN,
    &srq::QUERY_XRC_SRQ_IN,
    &srq::QUERY_XRC_SRQ_OUT,
    &srq::ARM_XRC_SRQ_IN,
    &srq::WQ,
    &srq::RMPC,
    &srq::CREATE_RMP_IN,
    &srq::CREATE_RMP_OUT,
    &srq::DESTROY_RMP_IN,
    &srq::QUERY_RMP_IN,
    &srq::QUERY_RMP_OUT,
    &srq::MODIFY_RMP_IN,
    &srq::RMP_BITMASK,
    &mkey::MKC,
    &mkey::CREATE_MKEY_IN,
    &mkey::CREATE_MKEY_OUT,
    &mkey::DESTROY_MKEY_IN,
    &mkey::QUERY_MKEY_IN,
    &mkey::QUERY_MKEY_OUT,
];
