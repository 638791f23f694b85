// SPDX-License-Identifier: GPL-2.0

//! The commands the core driver sends (bring-up, pages, capabilities, teardown), one
//! type each (see [`super::command::Command`]).
//!
//! Outputs are device data: every reply is validated in `parse` (an out-of-range
//! value is [`CodecError::BadOutput`], reported as EPROTO).
//!
//! Pure `core` code, compiled into the kernel module and into the host test crate.

use super::command::{CodecError, Command};
use crate::health::sync_reset::MfrlState;
use crate::ifc::{
    caps::{atomic_caps, cmd_hca_cap, query_hca_cap_in, query_hca_cap_out, set_hca_cap_in},
    cmds::{
        disable_hca_in, enable_hca_in, init_hca_in, mbox_out, query_adapter_in, query_adapter_out,
        query_adapter_param_block, query_issi_in, query_issi_out, set_driver_version_in,
        set_issi_in, teardown_hca_in, teardown_hca_out,
    },
    field::{be64_at, put_be64s, Msg, MsgMut, Overflow, Value, F},
    opcodes::{access_reg_op_mod, cap_type, manage_pages_op_mod, Opcode, HCA_CAP_OPMOD_CUR},
    pages::{manage_pages_in, manage_pages_out, query_pages_in, query_pages_out},
    regs::{
        access_register_in, access_register_out, mcam_access_reg, mcam_off, mcam_reg, mfrl,
        mfrl_reg, reg_id, REG_DATA_OFFSET,
    },
};

#[cfg(any(CONFIG_MLX5_RS_TEST_HOOKS, not(CONFIG_RUST)))]
use crate::ifc::cmds::nop_in;

/// Capability fields the bring-up reads, re-exported for the device object.
pub use crate::ifc::caps::cmd_hca_cap as gen_cap;

/// NOP: a command that does nothing (latency probe of the `nop_storm` test hook; the
/// host crates always have it).
#[cfg(any(CONFIG_MLX5_RS_TEST_HOOKS, not(CONFIG_RUST)))]
pub struct Nop;

#[cfg(any(CONFIG_MLX5_RS_TEST_HOOKS, not(CONFIG_RUST)))]
impl Command for Nop {
    const OPCODE: Opcode = Opcode::NOP;
    type In = nop_in::Layout;
    type Out = mbox_out::Layout;
    type Reply = ();

    fn parse(self, _: Msg<'_, Self::Out>) -> Result<(), CodecError> {
        Ok(())
    }
}

/// ENABLE_HCA for function 0. `embedded_cpu`: the init segment's `embedded_cpu` bit
/// (upstream sets `embedded_cpu_function` to `mlx5_core_is_ecpf()` in ENABLE/DISABLE_HCA,
/// QUERY_PAGES and MANAGE_PAGES alike).
pub struct EnableHca {
    /// `embedded_cpu_function`.
    pub embedded_cpu: bool,
}

impl Command for EnableHca {
    const OPCODE: Opcode = Opcode::ENABLE_HCA;
    type In = enable_hca_in::Layout;
    type Out = mbox_out::Layout;
    type Reply = ();

    fn build(&self, i: &mut MsgMut<'_, Self::In>) -> Result<(), CodecError> {
        Ok(i.set(enable_hca_in::EMBEDDED_CPU_FUNCTION, self.embedded_cpu)?)
    }

    fn parse(self, _: Msg<'_, Self::Out>) -> Result<(), CodecError> {
        Ok(())
    }
}

/// DISABLE_HCA for function 0.
pub struct DisableHca {
    /// `embedded_cpu_function`.
    pub embedded_cpu: bool,
}

impl Command for DisableHca {
    const OPCODE: Opcode = Opcode::DISABLE_HCA;
    type In = disable_hca_in::Layout;
    type Out = mbox_out::Layout;
    type Reply = ();

    fn build(&self, i: &mut MsgMut<'_, Self::In>) -> Result<(), CodecError> {
        Ok(i.set(disable_hca_in::EMBEDDED_CPU_FUNCTION, self.embedded_cpu)?)
    }

    fn parse(self, _: Msg<'_, Self::Out>) -> Result<(), CodecError> {
        Ok(())
    }
}

/// QUERY_ISSI: the `supported_issi_dw0` bitmap.
pub struct QueryIssi;

impl Command for QueryIssi {
    const OPCODE: Opcode = Opcode::QUERY_ISSI;
    type In = query_issi_in::Layout;
    type Out = query_issi_out::Layout;
    type Reply = u32;

    fn parse(self, o: Msg<'_, Self::Out>) -> Result<u32, CodecError> {
        Ok(o.get(query_issi_out::SUPPORTED_ISSI_DW0))
    }
}

/// SET_ISSI.
pub struct SetIssi {
    /// The ISSI to use.
    pub issi: u16,
}

impl Command for SetIssi {
    const OPCODE: Opcode = Opcode::SET_ISSI;
    type In = set_issi_in::Layout;
    type Out = mbox_out::Layout;
    type Reply = ();

    fn build(&self, i: &mut MsgMut<'_, Self::In>) -> Result<(), CodecError> {
        Ok(i.set(set_issi_in::CURRENT_ISSI, self.issi)?)
    }

    fn parse(self, _: Msg<'_, Self::Out>) -> Result<(), CodecError> {
        Ok(())
    }
}

/// QUERY_PAGES: how many pages the device wants (negative: it has too many).
pub struct QueryPages {
    /// Boot, init or regular (`query_pages_op_mod`).
    pub op_mod: u16,
    /// `embedded_cpu_function`.
    pub embedded_cpu: bool,
}

impl Command for QueryPages {
    const OPCODE: Opcode = Opcode::QUERY_PAGES;
    type In = query_pages_in::Layout;
    type Out = query_pages_out::Layout;
    type Reply = i32;

    fn op_mod(&self) -> u16 {
        self.op_mod
    }

    fn build(&self, i: &mut MsgMut<'_, Self::In>) -> Result<(), CodecError> {
        Ok(i.set(query_pages_in::EMBEDDED_CPU_FUNCTION, self.embedded_cpu)?)
    }

    fn parse(self, o: Msg<'_, Self::Out>) -> Result<i32, CodecError> {
        Ok(o.get(query_pages_out::NUM_PAGES))
    }
}

/// The fields every MANAGE_PAGES variant sets.
fn manage_pages_target(
    i: &mut MsgMut<'_, manage_pages_in::Layout>,
    function_id: u16,
    embedded_cpu: bool,
) -> Result<(), Overflow> {
    i.set(manage_pages_in::FUNCTION_ID, function_id)?;
    i.set(manage_pages_in::EMBEDDED_CPU_FUNCTION, embedded_cpu)
}

/// MANAGE_PAGES give: hands `addrs` (4 KiB DMA pages) to `function_id` / `embedded_cpu`
/// (echoed from the page request).
pub struct GivePages<'a> {
    /// `function_id`.
    pub function_id: u16,
    /// `embedded_cpu_function`.
    pub embedded_cpu: bool,
    /// The pages.
    pub addrs: &'a [u64],
}

impl Command for GivePages<'_> {
    const OPCODE: Opcode = Opcode::MANAGE_PAGES;
    type In = manage_pages_in::Layout;
    type Out = mbox_out::Layout;
    type Reply = ();

    fn op_mod(&self) -> u16 {
        manage_pages_op_mod::ALLOCATION_SUCCESS
    }

    fn in_len(&self) -> usize {
        manage_pages_in::BYTES.saturating_add(self.addrs.len().saturating_mul(8))
    }

    fn build(&self, i: &mut MsgMut<'_, Self::In>) -> Result<(), CodecError> {
        let n = u32::try_from(self.addrs.len())
            .map_err(|_| CodecError::Overflow(manage_pages_in::INPUT_NUM_ENTRIES.raw()))?;
        i.set(manage_pages_in::INPUT_NUM_ENTRIES, n)?;
        manage_pages_target(i, self.function_id, self.embedded_cpu)?;
        put_be64s(
            i.bytes_mut(manage_pages_in::PAS),
            self.addrs.iter().copied(),
        )
        .ok_or(CodecError::Short)
    }

    fn parse(self, _: Msg<'_, Self::Out>) -> Result<(), CodecError> {
        Ok(())
    }
}

/// MANAGE_PAGES allocation failure: tells the device the driver could not supply the
/// pages it asked for, so its waiting command fails instead of hanging.
pub struct PagesAllocFailed {
    /// `function_id`.
    pub function_id: u16,
    /// `embedded_cpu_function`.
    pub embedded_cpu: bool,
}

impl Command for PagesAllocFailed {
    const OPCODE: Opcode = Opcode::MANAGE_PAGES;
    type In = manage_pages_in::Layout;
    type Out = mbox_out::Layout;
    type Reply = ();

    fn op_mod(&self) -> u16 {
        manage_pages_op_mod::ALLOCATION_FAIL
    }

    fn build(&self, i: &mut MsgMut<'_, Self::In>) -> Result<(), CodecError> {
        Ok(manage_pages_target(i, self.function_id, self.embedded_cpu)?)
    }

    fn parse(self, _: Msg<'_, Self::Out>) -> Result<(), CodecError> {
        Ok(())
    }
}

/// Where MANAGE_PAGES take stores the returned addresses.
pub trait PageSink {
    /// Makes room for `n` more addresses.
    fn reserve(&mut self, n: usize) -> Result<(), CodecError>;
    /// Appends one address (after [`PageSink::reserve`]).
    fn push(&mut self, addr: u64) -> Result<(), CodecError>;
}

/// MANAGE_PAGES take: asks the device to return up to `max` pages and appends the
/// addresses it returned to `sink`. Replies how many it returned. A device claiming
/// more entries than asked for is rejected (EPROTO).
pub struct TakePages<'a, S: PageSink + ?Sized> {
    /// `function_id`.
    pub function_id: u16,
    /// `embedded_cpu_function`.
    pub embedded_cpu: bool,
    /// Most pages to return.
    pub max: u32,
    /// Receives the addresses.
    pub sink: &'a mut S,
}

impl<S: PageSink + ?Sized> Command for TakePages<'_, S> {
    const OPCODE: Opcode = Opcode::MANAGE_PAGES;
    type In = manage_pages_in::Layout;
    type Out = manage_pages_out::Layout;
    type Reply = u32;

    fn op_mod(&self) -> u16 {
        manage_pages_op_mod::HCA_RETURN_PAGES
    }

    fn out_len(&self) -> usize {
        // u32 → usize: lossless on the 64-bit targets the driver builds for.
        let max = usize::try_from(self.max).unwrap_or(usize::MAX);
        manage_pages_out::BYTES.saturating_add(max.saturating_mul(8))
    }

    fn build(&self, i: &mut MsgMut<'_, Self::In>) -> Result<(), CodecError> {
        i.set(manage_pages_in::INPUT_NUM_ENTRIES, self.max)?;
        Ok(manage_pages_target(i, self.function_id, self.embedded_cpu)?)
    }

    fn parse(self, o: Msg<'_, Self::Out>) -> Result<u32, CodecError> {
        let n = o.get(manage_pages_out::OUTPUT_NUM_ENTRIES);
        if n > self.max {
            return Err(CodecError::BadOutput);
        }
        let count = usize::try_from(n).map_err(|_| CodecError::BadOutput)?;
        let pas = o.bytes(manage_pages_out::PAS);
        if pas.len() / 8 < count {
            return Err(CodecError::BadOutput);
        }
        self.sink.reserve(count)?;
        for k in 0..count {
            self.sink
                .push(be64_at(pas, k).ok_or(CodecError::BadOutput)?)?;
        }
        Ok(n)
    }
}

/// The general capabilities (`cmd_hca_cap`, 256 bytes), current or maximum.
///
/// Field access is infallible: the buffer always holds the whole structure, and
/// fields of another structure do not compile.
#[derive(Clone)]
pub struct GeneralCaps([u8; cmd_hca_cap::BYTES]);

impl GeneralCaps {
    /// Capabilities from raw `cmd_hca_cap` bytes (e.g. in tests).
    pub fn from_bytes(b: &[u8]) -> Option<Self> {
        b.get(..cmd_hca_cap::BYTES)?
            .try_into()
            .ok()
            .map(GeneralCaps)
    }

    /// Reads a field of `cmd_hca_cap`.
    pub fn get<T: Value>(&self, f: F<T, cmd_hca_cap::Layout>) -> T {
        Msg::of_array(&self.0).get(f)
    }

    /// Sets a field of `cmd_hca_cap`; an error when `v` is wider than the field.
    pub fn set<T: Value>(&mut self, f: F<T, cmd_hca_cap::Layout>, v: T) -> Result<(), Overflow> {
        MsgMut::of_array(&mut self.0).set(f, v)
    }

    /// The raw structure.
    pub fn as_bytes(&self) -> &[u8; cmd_hca_cap::BYTES] {
        &self.0
    }
}

/// QUERY_HCA_CAP of the general capabilities.
pub struct QueryGeneralCaps {
    /// Current (true) or maximum (false) values.
    pub current: bool,
}

impl Command for QueryGeneralCaps {
    const OPCODE: Opcode = Opcode::QUERY_HCA_CAP;
    type In = query_hca_cap_in::Layout;
    type Out = query_hca_cap_out::Layout;
    type Reply = GeneralCaps;

    fn op_mod(&self) -> u16 {
        (cap_type::GENERAL << 1) | if self.current { HCA_CAP_OPMOD_CUR } else { 0 }
    }

    fn parse(self, o: Msg<'_, Self::Out>) -> Result<GeneralCaps, CodecError> {
        GeneralCaps::from_bytes(o.bytes(query_hca_cap_out::CAPABILITY)).ok_or(CodecError::BadOutput)
    }
}

/// SET_HCA_CAP of the general capabilities: only `cmd_hca_cap` (256 bytes) is sent, the
/// rest of the 4 KiB capability area stays zero. Upstream's `handle_hca_cap` (main.c)
/// likewise copies `MLX5_ST_SZ_BYTES(cmd_hca_cap)` bytes of the current caps into a
/// zeroed `set_hca_cap_in`; the bytes past it are the reserved tail of
/// `hca_cap_union`, which software writes as zero.
pub struct SetGeneralCaps<'a>(pub &'a GeneralCaps);

impl Command for SetGeneralCaps<'_> {
    const OPCODE: Opcode = Opcode::SET_HCA_CAP;
    type In = set_hca_cap_in::Layout;
    type Out = mbox_out::Layout;
    type Reply = ();

    fn op_mod(&self) -> u16 {
        cap_type::GENERAL << 1
    }

    fn build(&self, i: &mut MsgMut<'_, Self::In>) -> Result<(), CodecError> {
        i.bytes_mut(set_hca_cap_in::CAPABILITY)
            .get_mut(..cmd_hca_cap::BYTES)
            .ok_or(CodecError::Short)?
            .copy_from_slice(self.0.as_bytes());
        Ok(())
    }

    fn parse(self, _: Msg<'_, Self::Out>) -> Result<(), CodecError> {
        Ok(())
    }
}

/// The atomic capabilities (`atomic_caps`) the driver reads: what upstream
/// `mlx5_core` and `mlx5_ib` read of the ATOMIC page.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AtomicCaps {
    /// `atomic_operations` (`MLX5_ATOMIC_OPS_*` bits).
    pub operations: u16,
    /// `atomic_size_qp` (operand sizes, bit n: 2^n bytes).
    pub size_qp: u16,
    /// `atomic_req_8B_endianness_mode` (1: host endianness).
    pub req_8b_endianness_mode: u8,
    /// `supported_atomic_req_8B_endianness_mode_1`: the requester can be set to host
    /// endianness.
    pub host_endianness_supported: bool,
}

/// `atomic_req_8B_endianness_mode` value "host endianness" (upstream mlx5_core
/// `MLX5_ATOMIC_REQ_MODE_HOST_ENDIANNESS`).
pub const ATOMIC_REQ_MODE_HOST_ENDIANNESS: u8 = 1;

/// QUERY_HCA_CAP of the atomic capabilities (`MLX5_CAP_ATOMIC`), current or maximum.
pub struct QueryAtomicCaps {
    /// Current (true) or maximum (false) values.
    pub current: bool,
}

impl Command for QueryAtomicCaps {
    const OPCODE: Opcode = Opcode::QUERY_HCA_CAP;
    type In = query_hca_cap_in::Layout;
    type Out = query_hca_cap_out::Layout;
    type Reply = AtomicCaps;

    fn op_mod(&self) -> u16 {
        (cap_type::ATOMIC << 1) | if self.current { HCA_CAP_OPMOD_CUR } else { 0 }
    }

    fn parse(self, o: Msg<'_, Self::Out>) -> Result<AtomicCaps, CodecError> {
        let c = o
            .nested::<atomic_caps::Layout>(query_hca_cap_out::CAPABILITY)
            .ok_or(CodecError::BadOutput)?;
        Ok(AtomicCaps {
            operations: c.get(atomic_caps::ATOMIC_OPERATIONS),
            size_qp: c.get(atomic_caps::ATOMIC_SIZE_QP),
            req_8b_endianness_mode: c.get(atomic_caps::ATOMIC_REQ_8B_ENDIANNESS_MODE),
            host_endianness_supported: c
                .get(atomic_caps::SUPPORTED_ATOMIC_REQ_8B_ENDIANNESS_MODE_1),
        })
    }
}

/// SET_HCA_CAP of the atomic capabilities with `atomic_req_8B_endianness_mode` set and
/// every other byte zero, as upstream `handle_hca_cap_atomic` sends it (a zeroed
/// `set_hca_cap_in`).
pub struct SetAtomicCaps {
    /// `atomic_req_8B_endianness_mode`.
    pub req_8b_endianness_mode: u8,
}

impl Command for SetAtomicCaps {
    const OPCODE: Opcode = Opcode::SET_HCA_CAP;
    type In = set_hca_cap_in::Layout;
    type Out = mbox_out::Layout;
    type Reply = ();

    fn op_mod(&self) -> u16 {
        cap_type::ATOMIC << 1
    }

    fn build(&self, i: &mut MsgMut<'_, Self::In>) -> Result<(), CodecError> {
        let mut c = i
            .nested::<atomic_caps::Layout>(set_hca_cap_in::CAPABILITY)
            .ok_or(CodecError::Short)?;
        Ok(c.set(
            atomic_caps::ATOMIC_REQ_8B_ENDIANNESS_MODE,
            self.req_8b_endianness_mode,
        )?)
    }

    fn parse(self, _: Msg<'_, Self::Out>) -> Result<(), CodecError> {
        Ok(())
    }
}

/// INIT_HCA, with our software owner id when the device supports it.
pub struct InitHca<'a> {
    /// `sw_owner_id`.
    pub sw_owner_id: Option<&'a [u8; 16]>,
}

impl Command for InitHca<'_> {
    const OPCODE: Opcode = Opcode::INIT_HCA;
    type In = init_hca_in::Layout;
    type Out = mbox_out::Layout;
    type Reply = ();

    fn build(&self, i: &mut MsgMut<'_, Self::In>) -> Result<(), CodecError> {
        if let Some(id) = self.sw_owner_id {
            let dst = i.bytes_mut(init_hca_in::SW_OWNER_ID);
            dst.get_mut(..id.len())
                .ok_or(CodecError::Short)?
                .copy_from_slice(id);
        }
        Ok(())
    }

    fn parse(self, _: Msg<'_, Self::Out>) -> Result<(), CodecError> {
        Ok(())
    }
}

/// TEARDOWN_HCA with `profile`; replies the `state` bit of the output (meaningful for
/// force and prepare-fast teardown: 0 done, 1 FORCE_STATE_FAIL).
pub struct TeardownHca {
    /// `teardown_profile`.
    pub profile: u16,
}

impl Command for TeardownHca {
    const OPCODE: Opcode = Opcode::TEARDOWN_HCA;
    type In = teardown_hca_in::Layout;
    type Out = teardown_hca_out::Layout;
    type Reply = u8;

    fn build(&self, i: &mut MsgMut<'_, Self::In>) -> Result<(), CodecError> {
        Ok(i.set(teardown_hca_in::PROFILE, self.profile)?)
    }

    fn parse(self, o: Msg<'_, Self::Out>) -> Result<u8, CodecError> {
        Ok(o.get(teardown_hca_out::STATE))
    }
}

/// SET_DRIVER_VERSION: "Linux,mlx5_rs,<version>", truncated to the field and always
/// NUL-terminated.
pub struct SetDriverVersion<'a> {
    /// Our version string.
    pub version: &'a str,
}

impl Command for SetDriverVersion<'_> {
    const OPCODE: Opcode = Opcode::SET_DRIVER_VERSION;
    type In = set_driver_version_in::Layout;
    type Out = mbox_out::Layout;
    type Reply = ();

    fn build(&self, i: &mut MsgMut<'_, Self::In>) -> Result<(), CodecError> {
        let dst = i.bytes_mut(set_driver_version_in::DRIVER_VERSION);
        // Keep the last byte 0.
        let room = dst.len().saturating_sub(1);
        let text = b"Linux,mlx5_rs,"
            .iter()
            .chain(self.version.as_bytes())
            .take(room);
        for (d, s) in dst.iter_mut().zip(text) {
            *d = *s;
        }
        Ok(())
    }

    fn parse(self, _: Msg<'_, Self::Out>) -> Result<(), CodecError> {
        Ok(())
    }
}

/// QUERY_ADAPTER: the board id (PSID) as printable ASCII (other bytes 0), 16 bytes.
pub struct QueryBoardId;

impl Command for QueryBoardId {
    const OPCODE: Opcode = Opcode::QUERY_ADAPTER;
    type In = query_adapter_in::Layout;
    type Out = query_adapter_out::Layout;
    type Reply = [u8; 16];

    fn parse(self, o: Msg<'_, Self::Out>) -> Result<[u8; 16], CodecError> {
        let blk = o
            .nested::<query_adapter_param_block::Layout>(query_adapter_out::QUERY_ADAPTER_STRUCT)
            .ok_or(CodecError::BadOutput)?;
        let psid = blk.bytes(query_adapter_param_block::VSD_CONTD_PSID);
        let mut id = [0u8; 16];
        for (d, s) in id.iter_mut().zip(psid) {
            // Device data: keep printable ASCII only.
            *d = if s.is_ascii_graphic() { *s } else { 0 };
        }
        Ok(id)
    }
}

/// ACCESS_REG read of MCAM, access-register group 0 (upstream `mlx5_query_mcam_reg`,
/// `MLX5_CAP_MCAM_REG(dev, mfrl)`): whether the firmware offers MFRL, which upstream's
/// `mlx5_fw_reset_init` needs before it takes part in sync resets.
pub struct QueryMcamMfrl;

impl Command for QueryMcamMfrl {
    const OPCODE: Opcode = Opcode::ACCESS_REG;
    type In = access_register_in::Layout;
    type Out = access_register_out::Layout;
    type Reply = bool;

    fn op_mod(&self) -> u16 {
        access_reg_op_mod::READ
    }
    fn in_len(&self) -> usize {
        REG_DATA_OFFSET + mcam_reg::BYTES
    }
    fn out_len(&self) -> usize {
        REG_DATA_OFFSET + mcam_reg::BYTES
    }

    fn build(&self, i: &mut MsgMut<'_, Self::In>) -> Result<(), CodecError> {
        i.set(access_register_in::REGISTER_ID, reg_id::MCAM)?;
        let mut r = i
            .nested::<mcam_reg::Layout>(access_register_in::REGISTER_DATA)
            .ok_or(CodecError::Short)?;
        r.set(mcam_reg::FEATURE_GROUP, 0)?;
        Ok(r.set(mcam_reg::ACCESS_REG_GROUP, 0)?)
    }

    fn parse(self, o: Msg<'_, Self::Out>) -> Result<bool, CodecError> {
        let data = o.bytes(access_register_out::REGISTER_DATA);
        // `mng_access_reg_cap_mask` of the register data (bounds checked: a short
        // output is BadOutput).
        let mask = data
            .get(mcam_off::ACCESS_REG_CAP_MASK..)
            .and_then(Msg::<mcam_access_reg::Layout>::new)
            .ok_or(CodecError::BadOutput)?;
        Ok(mask.get(mcam_access_reg::MFRL))
    }
}

/// ACCESS_REG read of MFRL (upstream `mlx5_reg_mfrl_query`): the levels and types
/// offered, the state of the last sync reset and the PCI reset method asked for.
pub struct QueryMfrl;

impl Command for QueryMfrl {
    const OPCODE: Opcode = Opcode::ACCESS_REG;
    type In = access_register_in::Layout;
    type Out = access_register_out::Layout;
    type Reply = MfrlState;

    fn op_mod(&self) -> u16 {
        access_reg_op_mod::READ
    }
    fn in_len(&self) -> usize {
        REG_DATA_OFFSET + mfrl_reg::BYTES
    }
    fn out_len(&self) -> usize {
        REG_DATA_OFFSET + mfrl_reg::BYTES
    }

    fn build(&self, i: &mut MsgMut<'_, Self::In>) -> Result<(), CodecError> {
        Ok(i.set(access_register_in::REGISTER_ID, reg_id::MFRL)?)
    }

    fn parse(self, o: Msg<'_, Self::Out>) -> Result<MfrlState, CodecError> {
        let r = o
            .nested::<mfrl_reg::Layout>(access_register_out::REGISTER_DATA)
            .ok_or(CodecError::BadOutput)?;
        Ok(MfrlState {
            reset_level: r.get(mfrl_reg::RESET_LEVEL),
            reset_type: r.get(mfrl_reg::RESET_TYPE),
            reset_state: r.get(mfrl_reg::RESET_STATE),
            method: r.get(mfrl_reg::PCI_RESET_REQ_METHOD),
        })
    }
}

/// ACCESS_REG write of MFRL with a function's answer to a RESET_REQUEST: reset level 3
/// and `pci_sync_for_fw_update_resp` (upstream `mlx5_fw_reset_set_reset_sync_ack` /
/// `_nack`: `mlx5_reg_mfrl_set(dev, MLX5_MFRL_REG_RESET_LEVEL3, 0, 1 or 2, false)`).
pub struct AnswerMfrl {
    /// Ack, else nack.
    pub ack: bool,
}

impl Command for AnswerMfrl {
    const OPCODE: Opcode = Opcode::ACCESS_REG;
    type In = access_register_in::Layout;
    type Out = access_register_out::Layout;
    type Reply = ();

    fn op_mod(&self) -> u16 {
        access_reg_op_mod::WRITE
    }
    fn in_len(&self) -> usize {
        REG_DATA_OFFSET + mfrl_reg::BYTES
    }
    fn out_len(&self) -> usize {
        REG_DATA_OFFSET + mfrl_reg::BYTES
    }

    fn build(&self, i: &mut MsgMut<'_, Self::In>) -> Result<(), CodecError> {
        i.set(access_register_in::REGISTER_ID, reg_id::MFRL)?;
        let mut r = i
            .nested::<mfrl_reg::Layout>(access_register_in::REGISTER_DATA)
            .ok_or(CodecError::Short)?;
        r.set(mfrl_reg::RESET_LEVEL, mfrl::LEVEL3)?;
        Ok(r.set(
            mfrl_reg::PCI_SYNC_FOR_FW_UPDATE_RESP,
            if self.ack {
                mfrl::RESP_ACK
            } else {
                mfrl::RESP_NACK
            },
        )?)
    }

    fn parse(self, _: Msg<'_, Self::Out>) -> Result<(), CodecError> {
        Ok(())
    }
}
