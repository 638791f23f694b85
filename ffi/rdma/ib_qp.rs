// SPDX-License-Identifier: GPL-2.0

//! The QP verbs through the C shim `ffi/rdma/ib_qp.c`: the provider's [`IbQpOps`] creates
//! a QP ([`IbQp`]), which serves modify_qp and query_qp and is destroyed when
//! dropped (destroy_qp). The plain structures exchanged are
//! [`super::ib_qp_abi`]'s; the core's state-transition rules are reached through
//! [`modify_qp_is_ok`]. A QP's async events go back to the core's handler through
//! [`QpShim`].

use core::{marker::PhantomData, ptr::NonNull};

use kernel::{
    ffi::{c_int, c_void},
    prelude::*,
};

use super::ib::{errno, post_outcome, IbOps};
use super::ib_abi::{IbEvent, Udata};
use super::ib_dp_abi::{send_flag, wr_op, IbAtomicWr, IbRdmaWr, IbSendWr};
pub(crate) use super::ib_dp_abi::{IbRecvWr, IbSge, RecvWrC, SendWrC};
pub(crate) use super::ib_qp_abi::{QpAttr, QpInit};
use super::ib_uctx::{ucontext_ref, IbUcontext};
use super::udata::{set_resp_len, user_data, UserData};
use super::umem::IbDev;
use crate::ib::qp::send_wqe::SendOp;

extern "C" {
    fn mlx5rs_ib_qp_event(ibqp: *mut c_void, event: u32);
    fn mlx5rs_ib_send_wr_next(
        ibqp: *const c_void,
        wr: *const c_void,
        out: *mut SendWrC,
    ) -> *const c_void;
}

/// The core's `struct ib_qp` of one QP, for raising its async events.
///
/// INVARIANT: `0` is the pointer the shim passed to create_qp.
pub(crate) struct QpShim(NonNull<c_void>);

// SAFETY: the C object is not tied to a thread; its handler runs in any process
// context (upstream calls it from a workqueue).
unsafe impl Send for QpShim {}
// SAFETY: see `Send`; `&self` methods only call the handler.
unsafe impl Sync for QpShim {}

impl QpShim {
    /// The core's `struct ib_qp *`, as a work completion names its QP.
    pub(crate) fn handle(&self) -> u64 {
        self.0.as_ptr() as u64
    }

    /// Raises `event` (a QP event) to the QP's event handler, if it has one.
    ///
    /// # Safety
    ///
    /// The QP's destroy_qp must not have returned yet (the core frees the object
    /// after it).
    pub(crate) unsafe fn raise(&self, event: IbEvent) {
        // SAFETY: `self.0` is the shim's `struct mlx5rs_ib_qp` passed to create_qp (type
        // invariant); the core frees it only after destroy_qp returns, which by the
        // function's contract it has not, so the C side reads a live object.
        unsafe { mlx5rs_ib_qp_event(self.0.as_ptr(), event as u32) }
    }
}

/// A QP of the provider; destroyed (DESTROY_QP, memory released) on drop.
pub(crate) trait IbQp: Send + Sync {
    /// `modify_qp`: `attr` as the core gave it; the response length written to
    /// `udata.out` (0: none).
    fn modify(&self, attr: &QpAttr, udata: Option<UserData<'_>>) -> Result<usize>;
    /// `query_qp`.
    fn query(&self) -> Result<QpAttr>;
    /// `post_send` of the requests of `wrs` in order, one doorbell for those of the
    /// chain posted, rung after the last one or at the first error: how many were
    /// posted, and the error of the next one if any.
    fn post_send(&self, _wrs: &mut SendChain<'_>) -> (usize, Result) {
        // A user QP's queues are libmlx5's.
        (0, Err(EINVAL))
    }
    /// `post_recv`, as `post_send`.
    fn post_recv(&self, _wrs: &mut RecvChain<'_>) -> (usize, Result) {
        (0, Err(EINVAL))
    }
    /// Whether the QP's device met a fatal error (the kernel data path's internal
    /// error state; a drain goes on then when the move to ERR fails).
    fn internal_error(&self) -> bool {
        false
    }
}

/// The send work request chain of one post_send call, walked in order by
/// [`SendChain::next`] (the caller holds the send queue's lock across the walk: one
/// lock and one doorbell a call, as upstream).
///
/// INVARIANT: `next` is null or a request (`const struct ib_send_wr *`) of the chain
/// the core passed to post_send on its QP `ibqp`; every request of the chain, with its
/// gather list (and an inline request's data, a REG_MR request's MR translation list, a
/// UMR request's segments), stays readable for `'a` (the consumer's, across the call).
pub(crate) struct SendChain<'a> {
    ibqp: *const c_void,
    next: *const c_void,
    drain: bool,
    _chain: PhantomData<&'a ()>,
}

impl<'a> SendChain<'a> {
    /// A drain's request (`ffi/rdma/ib_qp.c`'s drain_sq), posted even after the
    /// device's fatal error (upstream `mlx5_ib_post_send_drain`).
    pub(crate) fn drain(&self) -> bool {
        self.drain
    }

    /// The next request of the chain; `None` after the last. With `in_place` (a
    /// connected QP: no address handle to read) a request of the opcodes
    /// `wr_op::RDMA_WRITE` to `wr_op::ATOMIC_FETCH_AND_ADD` is read where the consumer
    /// wrote it; any other is copied by the shim into `out`, one structure for the
    /// whole chain, zeroed by the caller (the shim writes every field but `av`, only
    /// with `has_ah`, and the reserved bytes).
    pub(crate) fn next(&mut self, in_place: bool, out: &mut SendWrC) -> Option<SendReq<'a>> {
        if self.next.is_null() {
            return None;
        }
        if in_place {
            // SAFETY: by the type invariant `next` is a `struct ib_send_wr` of the chain
            // (whose layout `IbSendWr` mirrors, checked on both sides), readable for
            // `'a` and not changed by the consumer during the call.
            let w = unsafe { &*self.next.cast::<IbSendWr>() };
            if w.opcode <= wr_op::ATOMIC_FETCH_AND_ADD {
                self.next = w.next.cast();
                // INVARIANT: `w` is a request of the chain, of one of those opcodes.
                return Some(SendReq::InPlace(CoreSendWr(w)));
            }
        }
        // SAFETY: by the type invariant `next` is a request of the chain of `ibqp`; the
        // shim only reads it and writes `out`, a valid `struct mlx5rs_ib_send_wr`.
        self.next = unsafe { mlx5rs_ib_send_wr_next(self.ibqp, self.next, out) };
        Some(SendReq::Copied)
    }

    /// The gather list of `wr` (a copied request, [`SendReq::Copied`]).
    pub(crate) fn sg(&self, wr: &SendWrC) -> &'a [IbSge] {
        if wr.num_sge == 0 || wr.sg == 0 {
            return &[];
        }
        // SAFETY: the shim copied `sg` and `num_sge` from a request of the chain (a
        // non-negative `int` count), whose list is readable for `'a` (type invariant);
        // `IbSge` is `struct ib_sge`'s layout (checked on both sides).
        unsafe { core::slice::from_raw_parts(wr.sg as *const IbSge, wr.num_sge as usize) }
    }

    /// The translation list of a REG_MR request (`reg_ndescs` entries of 8 bytes),
    /// empty when the request names none.
    pub(crate) fn reg_list(&self, wr: &SendWrC) -> &'a [u8] {
        if wr.reg_descs == 0 || wr.reg_ndescs == 0 {
            return &[];
        }
        // SAFETY: the shim copied a REG_MR request's `reg_descs` and `reg_ndescs` from
        // its MR (the shim's, held by the consumer across the post): its list of
        // `reg_ndescs` entries; a UMR request's, its segments (the UMR caller's buffer,
        // held across the post); readable for `'a` (type invariant).
        unsafe {
            core::slice::from_raw_parts(wr.reg_descs as *const u8, wr.reg_ndescs as usize * 8)
        }
    }

    /// The bytes an inline request's entry `e` names.
    pub(crate) fn inline_bytes(&self, e: &IbSge) -> &'a [u8] {
        if e.length == 0 || e.addr == 0 {
            return &[];
        }
        // SAFETY: by the type invariant an inline entry names `length` readable bytes
        // of kernel memory for `'a` (the consumer's buffer, `IB_SEND_INLINE`).
        unsafe { core::slice::from_raw_parts(e.addr as *const u8, e.length as usize) }
    }
}

/// One request of a send chain, as [`SendChain::next`] gives it.
pub(crate) enum SendReq<'a> {
    /// A connected QP's request of a common opcode, read in place.
    InPlace(CoreSendWr<'a>),
    /// Any other, as the shim copied it into the caller's [`SendWrC`].
    Copied,
}

/// A send request read in place: the core's `struct ib_send_wr` of a post_send chain.
///
/// INVARIANT: `0` is a request of the chain one [`SendChain`] walks (readable with its
/// gather list and inline data for `'a`) whose opcode is one of `wr_op::RDMA_WRITE` to
/// `wr_op::ATOMIC_FETCH_AND_ADD`, so by the core's contract the head of the `struct
/// ib_rdma_wr` (the RDMA opcodes) or `struct ib_atomic_wr` (the atomics) the consumer
/// wrote (the core's `rdma_wr()` and `atomic_wr()`, which upstream's post_send reads).
#[derive(Clone, Copy)]
pub(crate) struct CoreSendWr<'a>(&'a IbSendWr);

impl<'a> CoreSendWr<'a> {
    /// `wr_id`.
    pub(crate) fn wr_id(&self) -> u64 {
        self.0.wr_id
    }

    /// The [`send_flag`] bits (the core's numbers, checked equal by the shim); the
    /// others ignored, as the shim's copy drops them.
    pub(crate) fn flags(&self) -> u32 {
        self.0.send_flags
            & (send_flag::FENCE | send_flag::SIGNALED | send_flag::SOLICITED | send_flag::INLINE)
    }

    /// The gather list (a negative count of the core's read as none).
    pub(crate) fn sg(&self) -> &'a [IbSge] {
        let n = usize::try_from(self.0.num_sge).unwrap_or(0);
        if n == 0 || self.0.sg_list.is_null() {
            return &[];
        }
        // SAFETY: the list of a request of the chain, `num_sge` entries readable for
        // `'a` (type invariant); `IbSge` is `struct ib_sge`'s layout (checked on both
        // sides).
        unsafe { core::slice::from_raw_parts(self.0.sg_list, n) }
    }

    /// The WQE the request asks for, with its operands (the shim's copy gives the same
    /// through `post.rs`'s `send_op`): the immediate as `be32_to_cpu` of the
    /// consumer's.
    pub(crate) fn op(&self) -> SendOp {
        let w: *const IbSendWr = self.0;
        match self.0.opcode {
            wr_op::RDMA_WRITE | wr_op::RDMA_WRITE_IMM | wr_op::RDMA_READ => {
                // SAFETY: an RDMA opcode's request heads a `struct ib_rdma_wr` (type
                // invariant), readable for `'a`.
                let r = unsafe { &*w.cast::<IbRdmaWr>() };
                let (raddr, rkey) = (r.remote_addr, r.rkey);
                match self.0.opcode {
                    wr_op::RDMA_WRITE => SendOp::RdmaWrite { raddr, rkey },
                    wr_op::RDMA_READ => SendOp::RdmaRead { raddr, rkey },
                    _ => SendOp::RdmaWriteImm {
                        raddr,
                        rkey,
                        imm: u32::from_be(self.0.ex),
                    },
                }
            }
            wr_op::ATOMIC_CMP_AND_SWP | wr_op::ATOMIC_FETCH_AND_ADD => {
                // SAFETY: an atomic opcode's request heads a `struct ib_atomic_wr` (type
                // invariant), readable for `'a`.
                let a = unsafe { &*w.cast::<IbAtomicWr>() };
                if self.0.opcode == wr_op::ATOMIC_CMP_AND_SWP {
                    SendOp::CmpSwap {
                        raddr: a.remote_addr,
                        rkey: a.rkey,
                        compare: a.compare_add,
                        swap: a.swap,
                    }
                } else {
                    SendOp::FetchAdd {
                        raddr: a.remote_addr,
                        rkey: a.rkey,
                        add: a.compare_add,
                    }
                }
            }
            wr_op::SEND_IMM => SendOp::SendImm(u32::from_be(self.0.ex)),
            // `wr_op::SEND`, the one opcode left by the type invariant.
            _ => SendOp::Send,
        }
    }
}

/// The receive work request chain of one post_recv call, as [`SendChain`].
///
/// INVARIANT: `next` is null or a request (`const struct ib_recv_wr *`) of the chain
/// the core passed to post_recv; every request, with its scatter list, stays readable
/// for `'a`.
pub(crate) struct RecvChain<'a> {
    next: *const IbRecvWr,
    drain: bool,
    _chain: PhantomData<&'a ()>,
}

impl<'a> RecvChain<'a> {
    /// The chain from `wr` (post_srq_recv's, `ffi/rdma/ib_srq.rs`).
    ///
    /// # Safety
    ///
    /// `wr` is null or the first request of a chain the core passed to a receive
    /// post, readable with its scatter lists for `'a`.
    pub(super) unsafe fn from_core(wr: *const c_void) -> Self {
        // INVARIANT: by the function's contract.
        Self {
            next: wr.cast(),
            drain: false,
            _chain: PhantomData,
        }
    }

    /// A drain's request (drain_rq), posted even after the device's fatal error
    /// (upstream `mlx5_ib_post_recv_drain`).
    pub(crate) fn drain(&self) -> bool {
        self.drain
    }

    /// The next request of the chain into `out`; `false` after the last.
    pub(crate) fn next_into(&mut self, out: &mut RecvWrC) -> bool {
        if self.next.is_null() {
            return false;
        }
        // SAFETY: by the type invariant `next` is a request of the chain, a `struct
        // ib_recv_wr` (whose layout `IbRecvWr` mirrors, checked on both sides) the
        // consumer does not change during the call: only read here.
        let w = unsafe { &*self.next };
        out.wr_id = w.wr_id;
        out.sg = w.sg_list as u64;
        out.num_sge = u32::try_from(w.num_sge).unwrap_or(0);
        self.next = w.next;
        true
    }

    /// The scatter list of `wr` (one [`Self::next_into`] gave).
    pub(crate) fn sg(&self, wr: &RecvWrC) -> &'a [IbSge] {
        if wr.num_sge == 0 || wr.sg == 0 {
            return &[];
        }
        // SAFETY: as in `SendChain::sg`.
        unsafe { core::slice::from_raw_parts(wr.sg as *const IbSge, wr.num_sge as usize) }
    }
}

/// A QP as the shim holds it: a thin pointer to this box is the `rust` pointer of
/// `struct mlx5rs_ib_qp`.
type QpBox = KBox<KBox<dyn IbQp>>;

/// The QP verbs of the provider.
pub(crate) trait IbQpOps: Send + Sync {
    /// `create_qp` on `dev`: `user` (the context and the driver data) for a user QP,
    /// `None` for a kernel QP; `init.max_*` are updated to what the QP got. Returns
    /// the QP, its number and the response length written to the driver data's
    /// `out`. `shim` is the core's QP, whose handler the QP's async events go to.
    fn create_qp(
        &self,
        init: &mut QpInit,
        dev: IbDev<'_>,
        user: Option<(&dyn IbUcontext, UserData<'_>)>,
        shim: QpShim,
    ) -> Result<(KBox<dyn IbQp>, u32, usize)>;
}

extern "C" {
    fn mlx5rs_ib_modify_qp_is_ok(cur: u32, next: u32, ty: u32, mask: u32) -> bool;
}

/// The core's `ib_modify_qp_is_ok()`: whether `ty` (`enum ib_qp_type`) may move
/// from `cur` to `next` (`enum ib_qp_state`) with attribute mask `mask`.
pub(crate) fn modify_qp_is_ok(cur: u32, next: u32, ty: u32, mask: u32) -> bool {
    // SAFETY: a pure function of its arguments (the shim range-checks them first).
    unsafe { mlx5rs_ib_modify_qp_is_ok(cur, next, ty, mask) }
}

/// The QP verbs behind the shim's `rust` pointer.
///
/// # Safety
///
/// As [`super::ib::ops`].
unsafe fn qp_ops<'a>(rust: *const c_void) -> &'a dyn IbQpOps {
    // SAFETY: our contract is `ops`' own (a registered device's `rust` pointer, the
    // device registered for `'a`).
    let o: &'a dyn IbOps = unsafe { super::ib::ops(rust) };
    o.qp_ops()
}

/// `create_qp` trampoline target.
///
/// # Safety
///
/// The shim's trampoline contract (*Trampolines* in [`super::ib`]).
#[no_mangle]
unsafe extern "C" fn mlx5rs_ib_rs_create_qp(
    rust: *const c_void,
    ibdev: *mut c_void,
    uctx: *mut c_void,
    init: *mut QpInit,
    udata: *mut Udata,
    ibqp: *mut c_void,
    qp: *mut *mut c_void,
    qpn: *mut u32,
) -> c_int {
    let Some(ibqp) = NonNull::new(ibqp) else {
        return errno(EINVAL);
    };
    // INVARIANT: the core's QP of this create_qp.
    let shim = QpShim(ibqp);
    // SAFETY: the shim passes the `ib_device` of the verb (registered).
    let Some(dev) = (unsafe { IbDev::from_raw(ibdev) }) else {
        return errno(EINVAL);
    };
    // SAFETY: the shim passes NULL or the live context of the verb's udata.
    let uctx = unsafe { ucontext_ref(uctx) };
    // SAFETY: the shim passes a valid, exclusive `struct mlx5rs_ib_qp_init`.
    let init = unsafe { &mut *init };
    // SAFETY: NULL or the shim's staging area.
    let ud = unsafe { user_data(udata) };
    let user = match (uctx, ud) {
        (Some(c), Some(u)) => Some((c, u)),
        (None, None) => None,
        _ => return errno(EINVAL),
    };
    // SAFETY: the shim passes the `rust` pointer of a registered device.
    let r = unsafe { qp_ops(rust) }.create_qp(init, dev, user, shim);
    let (q, n, len) = match r {
        Ok(v) => v,
        Err(e) => return errno(e),
    };
    let boxed: QpBox = match KBox::new(q, GFP_KERNEL) {
        Ok(b) => b,
        Err(_) => return errno(ENOMEM),
    };
    // SAFETY: `udata` is NULL or the shim's staging area (trampoline contract).
    unsafe { set_resp_len(udata, len) };
    // SAFETY: the shim passes the addresses of its QP's `rust` and `qpn` fields.
    unsafe {
        qp.write(KBox::into_raw(boxed).cast::<c_void>());
        qpn.write(n);
    }
    0
}

/// `destroy_qp` trampoline target: drops the QP.
///
/// # Safety
///
/// The shim's trampoline contract (*Trampolines* in [`super::ib`]).
#[no_mangle]
unsafe extern "C" fn mlx5rs_ib_rs_destroy_qp(_rust: *const c_void, qp: *mut c_void) {
    if qp.is_null() {
        return;
    }
    // SAFETY: `qp` came from `KBox::into_raw` in `mlx5rs_ib_rs_create_qp`; the shim
    // passes it here once and forgets it.
    drop(unsafe { QpBox::from_raw(qp.cast::<KBox<dyn IbQp>>()) });
}

/// The QP behind a `rust` pointer of `struct mlx5rs_ib_qp`.
///
/// # Safety
///
/// `qp` must be NULL or a live QP of `mlx5rs_ib_rs_create_qp`.
unsafe fn qp_ref<'a>(qp: *mut c_void) -> Option<&'a dyn IbQp> {
    if qp.is_null() {
        return None;
    }
    // SAFETY: not NULL (checked above), so by the function's contract the
    // `KBox::into_raw` of a QpBox (an aligned, initialised `KBox<dyn IbQp>`) that
    // create_qp wrote and destroy_qp has not freed; only shared references are made.
    Some(unsafe { &**qp.cast::<KBox<dyn IbQp>>() })
}

/// `modify_qp` trampoline target.
///
/// # Safety
///
/// The shim's trampoline contract (*Trampolines* in [`super::ib`]).
#[no_mangle]
unsafe extern "C" fn mlx5rs_ib_rs_modify_qp(
    _rust: *const c_void,
    qp: *mut c_void,
    attr: *const QpAttr,
    udata: *mut Udata,
) -> c_int {
    // SAFETY: the core calls modify_qp only between create and destroy.
    let Some(q) = (unsafe { qp_ref(qp) }) else {
        return errno(EINVAL);
    };
    // SAFETY: the shim passes a valid attribute structure of its own.
    let a = unsafe { &*attr };
    // SAFETY: NULL or the shim's staging area.
    let ud = unsafe { user_data(udata) };
    match q.modify(a, ud) {
        Ok(n) => {
            // SAFETY: `udata` is NULL or the shim's staging area (trampoline contract).
            unsafe { set_resp_len(udata, n) };
            0
        }
        Err(e) => errno(e),
    }
}

/// `query_qp` trampoline target.
///
/// # Safety
///
/// The shim's trampoline contract (*Trampolines* in [`super::ib`]).
#[no_mangle]
unsafe extern "C" fn mlx5rs_ib_rs_query_qp(
    _rust: *const c_void,
    qp: *mut c_void,
    attr: *mut QpAttr,
) -> c_int {
    // SAFETY: the core calls query_qp only between create and destroy.
    let Some(q) = (unsafe { qp_ref(qp) }) else {
        return errno(EINVAL);
    };
    match q.query() {
        Ok(a) => {
            // SAFETY: the shim passes a valid, writable attribute structure.
            unsafe { attr.write(a) };
            0
        }
        Err(e) => errno(e),
    }
}

/// `post_send` trampoline target.
///
/// # Safety
///
/// The shim's trampoline contract (*Trampolines* in [`super::ib`]); `wr` is null or the
/// first request of the chain the core passed to post_send on its QP `ibqp`, readable
/// with its gather lists (and inline data) for the call; `drain` not 0 for a drain's
/// request. Returns [`post_outcome`]'s value.
#[no_mangle]
unsafe extern "C" fn mlx5rs_ib_rs_post_send(
    qp: *mut c_void,
    ibqp: *const c_void,
    wr: *const c_void,
    drain: u32,
) -> u64 {
    // SAFETY: the core posts only between create and destroy.
    let Some(q) = (unsafe { qp_ref(qp) }) else {
        return post_outcome((0, Err(EINVAL)));
    };
    // INVARIANT: by the function's contract.
    let mut chain = SendChain {
        ibqp,
        next: wr,
        drain: drain != 0,
        _chain: PhantomData,
    };
    post_outcome(q.post_send(&mut chain))
}

/// `post_recv` trampoline target; `drain` not 0 for a drain's request.
///
/// # Safety
///
/// As [`mlx5rs_ib_rs_post_send`], for the chain passed to post_recv.
#[no_mangle]
unsafe extern "C" fn mlx5rs_ib_rs_post_recv(qp: *mut c_void, wr: *const c_void, drain: u32) -> u64 {
    // SAFETY: the core posts only between create and destroy.
    let Some(q) = (unsafe { qp_ref(qp) }) else {
        return post_outcome((0, Err(EINVAL)));
    };
    // INVARIANT: by the function's contract.
    let mut chain = RecvChain {
        next: wr.cast(),
        drain: drain != 0,
        _chain: PhantomData,
    };
    post_outcome(q.post_recv(&mut chain))
}

/// Whether the QP's device met a fatal error (a drain's question, `ffi/rdma/ib_qp.c`).
///
/// # Safety
///
/// The shim's trampoline contract (*Trampolines* in [`super::ib`]).
#[no_mangle]
unsafe extern "C" fn mlx5rs_ib_rs_qp_internal_error(qp: *mut c_void) -> c_int {
    // SAFETY: the core drains a QP only between create and destroy.
    match unsafe { qp_ref(qp) } {
        Some(q) => c_int::from(q.internal_error()),
        None => 0,
    }
}

#[cfg(CONFIG_MLX5_RS_KUNIT_TEST)]
#[kunit_tests(mlx5_rs_ffi_send_wr)]
mod tests {
    use super::*;
    use core::ptr;
    use zerocopy::FromZeros;

    const SG: [IbSge; 2] = [
        IbSge {
            addr: 0x1000,
            length: 64,
            lkey: 7,
        },
        IbSge {
            addr: 0x2000,
            length: 8,
            lkey: 9,
        },
    ];

    fn head(next: *const IbSendWr, wr_id: u64, opcode: u32, send_flags: u32) -> IbSendWr {
        IbSendWr {
            next,
            wr_id,
            sg_list: SG.as_ptr(),
            num_sge: 2,
            opcode,
            send_flags,
            ex: 0,
        }
    }

    fn chain<'a>(first: &'a IbSendWr) -> SendChain<'a> {
        SendChain {
            ibqp: ptr::null(),
            next: ptr::from_ref(first).cast(),
            drain: false,
            _chain: PhantomData,
        }
    }

    fn in_place<'a>(c: &mut SendChain<'a>) -> Result<CoreSendWr<'a>> {
        match c.next(true, &mut SendWrC::new_zeroed()) {
            Some(SendReq::InPlace(w)) => Ok(w),
            _ => Err(EINVAL),
        }
    }

    // A chain of the core's structures as a consumer writes them (`ib_verbs.h`): an
    // RDMA WRITE with immediate (`ib_rdma_wr`), a compare-and-swap (`ib_atomic_wr`), a
    // SEND with immediate, each read where it is, in order, then the chain's end.
    #[test]
    fn chain_read_in_place() -> Result {
        // IB_SEND_SIGNALED | IB_SEND_INLINE | IB_SEND_IP_CSUM (1 << 4, not ours).
        let mut send = head(ptr::null(), 3, wr_op::SEND_IMM, 2 | 8 | 16);
        // The consumer's `cpu_to_be32(0x11223344)`.
        send.ex = 0x1122_3344u32.to_be();
        let cas = IbAtomicWr {
            wr: head(&send, 2, wr_op::ATOMIC_CMP_AND_SWP, 2),
            remote_addr: 0xdead_0000,
            compare_add: 5,
            swap: 6,
            compare_add_mask: 0xff,
            swap_mask: 0xff,
            rkey: 0x33,
        };
        let mut wimm = IbRdmaWr {
            wr: head(&cas.wr, 1, wr_op::RDMA_WRITE_IMM, 1),
            remote_addr: 0xbeef_0000,
            rkey: 0x44,
        };
        wimm.wr.ex = 0xa1b2_c3d4u32.to_be();
        let mut c = chain(&wimm.wr);

        let w = in_place(&mut c)?;
        assert_eq!(w.wr_id(), 1);
        assert_eq!(w.flags(), send_flag::FENCE);
        assert_eq!(
            w.op(),
            SendOp::RdmaWriteImm {
                raddr: 0xbeef_0000,
                rkey: 0x44,
                imm: 0xa1b2_c3d4
            }
        );
        assert_eq!(w.sg().len(), 2);
        assert_eq!(w.sg()[1].lkey, 9);

        let w = in_place(&mut c)?;
        assert_eq!(w.wr_id(), 2);
        assert_eq!(
            w.op(),
            SendOp::CmpSwap {
                raddr: 0xdead_0000,
                rkey: 0x33,
                compare: 5,
                swap: 6
            }
        );

        let w = in_place(&mut c)?;
        assert_eq!(w.wr_id(), 3);
        assert_eq!(w.flags(), send_flag::SIGNALED | send_flag::INLINE);
        assert_eq!(w.op(), SendOp::SendImm(0x1122_3344));

        assert!(c.next(true, &mut SendWrC::new_zeroed()).is_none());
        Ok(())
    }

    // The other opcodes read in place: their operands from the right structure.
    #[test]
    fn each_common_opcode() -> Result {
        let rd = IbRdmaWr {
            wr: head(ptr::null(), 4, wr_op::RDMA_READ, 0),
            remote_addr: 0x10,
            rkey: 0x20,
        };
        let w = in_place(&mut chain(&rd.wr))?;
        assert_eq!(
            w.op(),
            SendOp::RdmaRead {
                raddr: 0x10,
                rkey: 0x20
            }
        );
        let wr = IbRdmaWr {
            wr: head(ptr::null(), 5, wr_op::RDMA_WRITE, 0),
            remote_addr: 0x30,
            rkey: 0x40,
        };
        let w = in_place(&mut chain(&wr.wr))?;
        assert_eq!(
            w.op(),
            SendOp::RdmaWrite {
                raddr: 0x30,
                rkey: 0x40
            }
        );
        let fa = IbAtomicWr {
            wr: head(ptr::null(), 6, wr_op::ATOMIC_FETCH_AND_ADD, 0),
            remote_addr: 0x50,
            compare_add: 0x60,
            swap: 0x70,
            compare_add_mask: 0,
            swap_mask: 0,
            rkey: 0x80,
        };
        let w = in_place(&mut chain(&fa.wr))?;
        assert_eq!(
            w.op(),
            SendOp::FetchAdd {
                raddr: 0x50,
                rkey: 0x80,
                add: 0x60
            }
        );
        let s = head(ptr::null(), 7, wr_op::SEND, 0);
        let w = in_place(&mut chain(&s))?;
        assert_eq!(w.op(), SendOp::Send);
        Ok(())
    }

    // A negative or zero count, or no list, is no gather entry (as the shim's copy).
    #[test]
    fn bad_count_is_no_list() -> Result {
        let mut s = head(ptr::null(), 1, wr_op::SEND, 0);
        s.num_sge = -1;
        assert!(in_place(&mut chain(&s))?.sg().is_empty());
        s.num_sge = 0;
        assert!(in_place(&mut chain(&s))?.sg().is_empty());
        s.num_sge = 2;
        s.sg_list = ptr::null();
        assert!(in_place(&mut chain(&s))?.sg().is_empty());
        Ok(())
    }

    // What the shim unpacks (mlx5rs_post_err / _done, mlx5rs_poll_n / _qp1_recv in
    // mlx5rs_ffi.h): the errno as the low 32 bits' `int`, the count in the high 32;
    // poll's count or errno low, its QP1 flag in bit 32 only.
    #[test]
    fn outcomes_pack_as_the_shim_unpacks() {
        let r = super::post_outcome((3, Err(ENOMEM)));
        assert_eq!(r as u32 as i32, -12);
        assert_eq!(r >> 32, 3);
        assert_eq!(super::post_outcome((7, Ok(()))), 7 << 32);
        let r = super::post_outcome((0, Err(EINVAL)));
        assert_eq!((r as u32 as i32, r >> 32), (-22, 0));
        let r = super::super::ib::poll_outcome(Ok((5, true)));
        assert_eq!((r as u32 as i32, r >> 32), (5, 1));
        assert_eq!(super::super::ib::poll_outcome(Ok((16, false))), 16);
        let r = super::super::ib::poll_outcome(Err(EINVAL));
        assert_eq!((r as u32 as i32, r >> 32), (-22, 0));
    }
}
