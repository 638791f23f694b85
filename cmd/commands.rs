// SPDX-License-Identifier: GPL-2.0

//! Typed wrappers of the commands the core driver sends.
//!
//! Each builds its input with the PRM field tables of [`crate::ifc`] and reads its
//! output the same way: no hand-written shifts. Outputs are device data: every value
//! read is bounds-checked by the field accessors and validated before use.

use kernel::prelude::*;

use super::status::{CmdError, ErrorKind};
use crate::{
    hw::{to_kernel, Hw},
    ifc::{
        caps::{self, CAP_OFFSET, CAP_UNION_BYTES},
        cmds::{
            disable_hca_in, enable_hca_in, init_hca_in, mbox_in, query_adapter_out, query_issi_out,
            set_driver_version_in, set_issi_in, teardown_hca_in, teardown_hca_out,
        },
        field::Field,
        opcodes::{teardown_profile, Opcode, HCA_CAP_OPMOD_CUR},
        pages::{manage_pages_in, manage_pages_out, query_pages_in, query_pages_out},
    },
};

/// Bytes of a command header (input and output).
const HDR: usize = 16;

fn put(buf: &mut [u8], f: Field, v: u64) -> Result {
    f.set(buf, v).ok_or(EINVAL)
}

fn get(buf: &[u8], f: Field) -> Result<u64> {
    f.get(buf).ok_or(EIO)
}

/// A zeroed input of `N` bytes with opcode and op_mod set.
fn input<const N: usize>(op: Opcode, op_mod: u16) -> Result<[u8; N]> {
    let mut b = [0u8; N];
    put(&mut b, mbox_in::OPCODE, op as u64)?;
    put(&mut b, mbox_in::OP_MOD, u64::from(op_mod))?;
    Ok(b)
}

fn run(hw: &Hw, input: &[u8], output: &mut [u8]) -> Result {
    hw.exec(input, output).map_err(to_kernel)
}

/// Like [`run`], but hands back the typed command error.
fn run_raw(hw: &Hw, input: &[u8], output: &mut [u8]) -> Result<(), CmdError> {
    hw.exec(input, output)
}

/// NOP: a command that does nothing (latency probe of the `nop_storm` test hook).
#[cfg(CONFIG_MLX5_RS_TEST_HOOKS)]
pub(crate) fn nop(hw: &Hw) -> Result {
    let i = input::<HDR>(Opcode::NOP, 0)?;
    run(hw, &i, &mut [0u8; HDR])
}

/// ENABLE_HCA for function 0.
pub(crate) fn enable_hca(hw: &Hw, embedded_cpu: bool) -> Result {
    let mut i = input::<{ enable_hca_in::BYTES }>(Opcode::ENABLE_HCA, 0)?;
    put(
        &mut i,
        enable_hca_in::EMBEDDED_CPU_FUNCTION,
        u64::from(embedded_cpu),
    )?;
    run(hw, &i, &mut [0u8; HDR])
}

/// DISABLE_HCA for function 0.
pub(crate) fn disable_hca(hw: &Hw, embedded_cpu: bool) -> Result {
    let mut i = input::<{ disable_hca_in::BYTES }>(Opcode::DISABLE_HCA, 0)?;
    put(
        &mut i,
        disable_hca_in::EMBEDDED_CPU_FUNCTION,
        u64::from(embedded_cpu),
    )?;
    run(hw, &i, &mut [0u8; HDR])
}

/// QUERY_ISSI: the `supported_issi_dw0` bitmap, or `None` when the firmware does not
/// know the command (ISSI 0 devices).
pub(crate) fn query_issi(hw: &Hw) -> Result<Option<u32>> {
    let i = input::<HDR>(Opcode::QUERY_ISSI, 0)?;
    let mut o = [0u8; query_issi_out::BYTES];
    match run_raw(hw, &i, &mut o) {
        // A status from the firmware (not a transport failure) means "ISSI 0".
        Err(e) if e.status_raw().is_some() => Ok(None),
        Err(e) => Err(to_kernel(e)),
        Ok(()) => Ok(Some(get(&o, query_issi_out::SUPPORTED_ISSI_DW0)? as u32)),
    }
}

/// SET_ISSI.
pub(crate) fn set_issi(hw: &Hw, issi: u16) -> Result {
    let mut i = input::<{ set_issi_in::BYTES }>(Opcode::SET_ISSI, 0)?;
    put(&mut i, set_issi_in::CURRENT_ISSI, u64::from(issi))?;
    run(hw, &i, &mut [0u8; HDR])
}

/// QUERY_PAGES: how many pages the device wants (negative: it has too many).
/// `ec`: the embedded-CPU bit, set as in ENABLE_HCA (upstream sets
/// `embedded_cpu_function` to `mlx5_core_is_ecpf()` in QUERY_PAGES, MANAGE_PAGES and
/// ENABLE/DISABLE_HCA alike).
pub(crate) fn query_pages(hw: &Hw, op_mod: u16, ec: bool) -> Result<i32> {
    let mut i = input::<{ query_pages_in::BYTES }>(Opcode::QUERY_PAGES, op_mod)?;
    put(&mut i, query_pages_in::EMBEDDED_CPU_FUNCTION, u64::from(ec))?;
    let mut o = [0u8; query_pages_out::BYTES];
    run(hw, &i, &mut o)?;
    // CAST: the PRM field is a signed 32-bit count.
    Ok(get(&o, query_pages_out::NUM_PAGES)? as u32 as i32)
}

/// MANAGE_PAGES give: hands `addrs` (4 KiB DMA pages) to function `func_id` /
/// embedded-CPU bit `ec` (echoed from the page request). Returns the typed command
/// error, from which the caller decides whether the device may own the pages; a failure
/// before the command was built is reported as [`ErrorKind::NoMemory`].
pub(crate) fn give_pages(hw: &Hw, func_id: u16, ec: bool, addrs: &[u64]) -> Result<(), CmdError> {
    let op = Opcode::MANAGE_PAGES as u16;
    let op_mod = crate::ifc::opcodes::manage_pages_op_mod::ALLOCATION_SUCCESS;
    let not_sent = || CmdError::new(op, op_mod, ErrorKind::NoMemory);
    let n = addrs.len();
    let mut i =
        KVec::from_elem(0u8, manage_pages_in::BYTES + 8 * n, GFP_KERNEL).map_err(|_| not_sent())?;
    put(&mut i, mbox_in::OPCODE, u64::from(op)).map_err(|_| not_sent())?;
    put(&mut i, mbox_in::OP_MOD, u64::from(op_mod)).map_err(|_| not_sent())?;
    put(&mut i, manage_pages_in::INPUT_NUM_ENTRIES, n as u64).map_err(|_| not_sent())?;
    put(&mut i, manage_pages_in::FUNCTION_ID, u64::from(func_id)).map_err(|_| not_sent())?;
    put(
        &mut i,
        manage_pages_in::EMBEDDED_CPU_FUNCTION,
        u64::from(ec),
    )
    .map_err(|_| not_sent())?;
    for (k, a) in addrs.iter().enumerate() {
        let at = manage_pages_in::BYTES + 8 * k;
        i[at..at + 8].copy_from_slice(&a.to_be_bytes());
    }
    run_raw(hw, &i, &mut [0u8; HDR])
}

/// MANAGE_PAGES allocation failure: tells the device the driver could not supply
/// the pages it asked for, so its waiting command fails instead of hanging.
pub(crate) fn pages_alloc_failed(hw: &Hw, func_id: u16, ec: bool) -> Result {
    let mut i = input::<{ manage_pages_in::BYTES }>(
        Opcode::MANAGE_PAGES,
        crate::ifc::opcodes::manage_pages_op_mod::ALLOCATION_FAIL,
    )?;
    put(&mut i, manage_pages_in::FUNCTION_ID, u64::from(func_id))?;
    put(
        &mut i,
        manage_pages_in::EMBEDDED_CPU_FUNCTION,
        u64::from(ec),
    )?;
    run(hw, &i, &mut [0u8; HDR])
}

/// MANAGE_PAGES take: asks the device to return up to `max` pages and appends the
/// addresses it returned to `out`. Returns how many it returned. A device claiming more
/// entries than asked for, or than its output holds, is rejected. The output (up to
/// 50,000 addresses, 400 KB) is `kvmalloc`ed: it must not depend on a high-order page.
pub(crate) fn take_pages(
    hw: &Hw,
    func_id: u16,
    ec: bool,
    max: u32,
    out: &mut KVVec<u64>,
) -> Result<u32> {
    let mut i = input::<{ manage_pages_in::BYTES }>(
        Opcode::MANAGE_PAGES,
        crate::ifc::opcodes::manage_pages_op_mod::HCA_RETURN_PAGES,
    )?;
    put(&mut i, manage_pages_in::INPUT_NUM_ENTRIES, u64::from(max))?;
    put(&mut i, manage_pages_in::FUNCTION_ID, u64::from(func_id))?;
    put(
        &mut i,
        manage_pages_in::EMBEDDED_CPU_FUNCTION,
        u64::from(ec),
    )?;
    let cap = manage_pages_out::BYTES + 8 * max as usize;
    let mut o = KVVec::from_elem(0u8, cap, GFP_KERNEL)?;
    run(hw, &i, &mut o)?;
    let n = get(&o, manage_pages_out::OUTPUT_NUM_ENTRIES)? as u32;
    if n > max {
        return Err(EPROTO);
    }
    out.reserve(n as usize, GFP_KERNEL)?;
    for k in 0..n as usize {
        let at = manage_pages_out::BYTES + 8 * k;
        let mut a = [0u8; 8];
        a.copy_from_slice(o.get(at..at + 8).ok_or(EPROTO)?);
        out.push(u64::from_be_bytes(a), GFP_KERNEL)?;
    }
    Ok(n)
}

/// The general capabilities (4 KiB), current or maximum.
pub(crate) struct GeneralCaps(KVec<u8>);

impl GeneralCaps {
    /// Reads a field of `cmd_hca_cap`.
    pub(crate) fn get(&self, f: Field) -> u64 {
        f.get(&self.0).unwrap_or(0)
    }

    /// Sets a field of `cmd_hca_cap`.
    pub(crate) fn set(&mut self, f: Field, v: u64) -> Result {
        put(&mut self.0, f, v)
    }
}

/// QUERY_HCA_CAP of the general capabilities.
pub(crate) fn query_general_caps(hw: &Hw, current: bool) -> Result<GeneralCaps> {
    let op_mod =
        (crate::ifc::opcodes::cap_type::GENERAL << 1) | if current { HCA_CAP_OPMOD_CUR } else { 0 };
    let i = input::<{ caps::query_hca_cap_in::BYTES }>(Opcode::QUERY_HCA_CAP, op_mod)?;
    let mut o = KVec::from_elem(0u8, caps::query_hca_cap_out::BYTES, GFP_KERNEL)?;
    run(hw, &i, &mut o)?;
    let mut c = KVec::with_capacity(CAP_UNION_BYTES, GFP_KERNEL)?;
    c.extend_from_slice(
        o.get(CAP_OFFSET..CAP_OFFSET + CAP_UNION_BYTES)
            .ok_or(EPROTO)?,
        GFP_KERNEL,
    )?;
    Ok(GeneralCaps(c))
}

/// SET_HCA_CAP of the general capabilities: only `cmd_hca_cap` (256 bytes) is sent,
/// the rest of the capability area is zero, as upstream's `handle_hca_cap` does (see
/// [`caps::set_general_cap_input`]).
pub(crate) fn set_general_caps(hw: &Hw, c: &GeneralCaps) -> Result {
    let mut i = KVec::from_elem(0u8, caps::set_hca_cap_in::BYTES, GFP_KERNEL)?;
    caps::set_general_cap_input(&c.0, &mut i).ok_or(EINVAL)?;
    run(hw, &i, &mut [0u8; HDR])
}

/// INIT_HCA, with our software owner id when the device supports it.
pub(crate) fn init_hca(hw: &Hw, sw_owner_id: Option<&[u8; 16]>) -> Result {
    let mut i = input::<{ init_hca_in::BYTES }>(Opcode::INIT_HCA, 0)?;
    if let Some(id) = sw_owner_id {
        let f = init_hca_in::SW_OWNER_ID;
        f.bytes_mut(&mut i).ok_or(EINVAL)?.copy_from_slice(id);
    }
    run(hw, &i, &mut [0u8; HDR])
}

/// TEARDOWN_HCA with `profile`; returns the `state` bit of the output (meaningful for
/// prepare-fast-teardown).
pub(crate) fn teardown_hca(hw: &Hw, profile: u16) -> Result<u8> {
    let mut i = input::<{ teardown_hca_in::BYTES }>(Opcode::TEARDOWN_HCA, 0)?;
    put(&mut i, teardown_hca_in::PROFILE, u64::from(profile))?;
    let mut o = [0u8; teardown_hca_out::BYTES];
    run(hw, &i, &mut o)?;
    Ok(get(&o, teardown_hca_out::STATE)? as u8)
}

/// Graceful TEARDOWN_HCA.
pub(crate) fn teardown_graceful(hw: &Hw) -> Result {
    teardown_hca(hw, teardown_profile::GRACEFUL_CLOSE).map(|_| ())
}

/// Force TEARDOWN_HCA: `Some(state)` of the output when the command succeeded (0 =
/// closed, 1 = FORCE_STATE_FAIL, see [`crate::teardown::plan::Force`]), `None` when it
/// failed (logged by the command layer).
pub(crate) fn teardown_force(hw: &Hw) -> Option<u8> {
    teardown_hca(hw, teardown_profile::FORCE_CLOSE).ok()
}

/// SET_DRIVER_VERSION ("Linux,mlx5_rs,<version>").
pub(crate) fn set_driver_version(hw: &Hw, version: &str) -> Result {
    let mut i = input::<{ set_driver_version_in::BYTES }>(Opcode::SET_DRIVER_VERSION, 0)?;
    let f = set_driver_version_in::DRIVER_VERSION;
    let dst = f.bytes_mut(&mut i).ok_or(EINVAL)?;
    let prefix = b"Linux,mlx5_rs,";
    let v = version.as_bytes();
    let n1 = prefix.len().min(dst.len() - 1);
    dst[..n1].copy_from_slice(&prefix[..n1]);
    let n2 = v.len().min(dst.len() - 1 - n1);
    dst[n1..n1 + n2].copy_from_slice(&v[..n2]);
    run(hw, &i, &mut [0u8; HDR])
}

/// QUERY_ADAPTER: the board id (PSID), as printable ASCII, at most 16 bytes.
pub(crate) fn query_board_id(hw: &Hw) -> Result<[u8; 16]> {
    let i = input::<HDR>(Opcode::QUERY_ADAPTER, 0)?;
    let mut o = KVec::from_elem(0u8, query_adapter_out::BYTES, GFP_KERNEL)?;
    run(hw, &i, &mut o)?;
    let blk = query_adapter_out::QUERY_ADAPTER_STRUCT
        .bytes(&o)
        .ok_or(EPROTO)?;
    let psid = crate::ifc::cmds::query_adapter_param_block::VSD_CONTD_PSID
        .bytes(blk)
        .ok_or(EPROTO)?;
    let mut id = [0u8; 16];
    for (d, s) in id.iter_mut().zip(psid) {
        // Device data: keep printable ASCII only.
        *d = if s.is_ascii_graphic() { *s } else { 0 };
    }
    Ok(id)
}

/// Capability fields the bring-up reads, re-exported for the device object.
pub(crate) use crate::ifc::caps::cmd_hca_cap as gen_cap;
