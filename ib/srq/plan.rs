// SPDX-License-Identifier: GPL-2.0

//! Shared receive queues, the pure part: the queue's shape from the core's attributes
//! and the device caps (as upstream `mlx5_ib_create_srq`, `srq.c`), the context the
//! create command carries (upstream `mlx5_srq_attr`), the kernel queue's page layout
//! and free list, and the checks of modify_srq.
//!
//! Which command makes the queue follows upstream `srq_cmd.c` at ISSI 1 (the driver
//! sets ISSI 1 when the device offers it, as every ConnectX-4 and later does): a
//! basic SRQ is an RMP (CREATE_RMP, limit by MODIFY_RMP), an XRC SRQ an XRC SRQ
//! (CREATE_XRC_SRQ, limit by ARM_XRC_SRQ). Tag-matching SRQs are refused.
//!
//! Pure `core` code, compiled into the kernel module and into the host test crate.

use crate::ib::abi::{
    error::{Reason, UabiError},
    layout::CreateSrqResp,
};

/// `struct mlx5_wqe_srq_next_seg` / `mlx5_wqe_data_seg` size.
const SEG: u64 = 16;
/// The device's page (`MLX5_ADAPTER_PAGE_SHIFT`); `log_page_size` counts above it.
pub const ADAPTER_PAGE_SHIFT: u32 = 12;
/// Bytes of one page of a kernel queue's buffer (allocated page by page).
pub const KERNEL_PAGE: usize = 1 << ADAPTER_PAGE_SHIFT;
/// `MLX5_IB_DEFAULT_UIDX`: the user index of a queue that has none.
pub use crate::ib::abi::consts::IB_DEFAULT_UIDX as DEFAULT_UIDX;

/// `enum ib_srq_type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SrqType {
    /// `IB_SRQT_BASIC`: made as an RMP.
    Basic,
    /// `IB_SRQT_XRC`: an XRC SRQ of an XRC domain, completing to a CQ.
    Xrc,
}

impl SrqType {
    /// The core's `srq_type`: basic (0) and XRC (1); tag matching (2) and anything
    /// else → `EOPNOTSUPP`, as upstream.
    pub fn from_ib(t: u32) -> Result<Self, UabiError> {
        match t {
            0 => Ok(Self::Basic),
            1 => Ok(Self::Xrc),
            _ => Err(UabiError::notsupp(Reason::OutOfRange("srq_type"))),
        }
    }
}

/// The device caps create_srq looks at.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SrqLimits {
    /// Cap `log_max_srq_sz`.
    pub log_max_srq_sz: u8,
    /// Cap `max_wqe_sz_rq` (bytes).
    pub max_wqe_sz_rq: u32,
    /// Cap `cqe_version` (1: XRC SRQs carry a user index).
    pub cqe_version: u8,
}

/// A queue's shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SrqShape {
    /// Ring entries (a power of two); the core is told `max - 1`.
    pub max: u32,
    /// Scatter entries asked for (`max_sge`), what query_srq reports.
    pub max_gs: u32,
    /// log2 of the WQE size (bytes).
    pub wqe_shift: u32,
    /// Scatter entries a WQE holds (room left after `max_gs`).
    pub max_avail_gather: u32,
    /// Buffer length (bytes).
    pub buf_size: u64,
}

/// The shape of a queue of `max_wr` WQEs of `max_sge` entries: `EINVAL` when
/// `max_wr` reaches `1 << log_max_srq_sz` or `max_sge` exceeds what `max_wqe_sz_rq`
/// holds. The ring is `max_wr + 1` rounded up to a power of two, the WQE the next
/// segment and `max_sge` data segments rounded up to a power of two, at least 32
/// bytes.
pub fn srq_shape(max_wr: u32, max_sge: u32, lim: &SrqLimits) -> Result<SrqShape, UabiError> {
    let range = |what| UabiError::inval(Reason::OutOfRange(what));
    let max_wqes = 1u64
        .checked_shl(u32::from(lim.log_max_srq_sz))
        .unwrap_or(u64::MAX);
    if u64::from(max_wr) >= max_wqes || u64::from(max_sge) > u64::from(lim.max_wqe_sz_rq) / SEG {
        return Err(range("max_wr/max_sge"));
    }
    let max = (u64::from(max_wr) + 1).next_power_of_two();
    let desc = (SEG + u64::from(max_sge) * SEG).next_power_of_two().max(32);
    let max_avail_gather = u32::try_from((desc - SEG) / SEG).map_err(|_| range("max_sge"))?;
    let buf_size = max.checked_mul(desc).ok_or(range("buffer size"))?;
    Ok(SrqShape {
        max: u32::try_from(max).map_err(|_| range("max_wr"))?,
        max_gs: max_sge,
        wqe_shift: desc.trailing_zeros(),
        max_avail_gather,
        buf_size,
    })
}

impl SrqShape {
    /// log2 of the ring entries (`log_srq_size` / `log_wq_sz`).
    pub fn log_size(&self) -> u8 {
        // `max` is a power of two below 2^32.
        self.max.trailing_zeros() as u8
    }

    /// What the core reports as `max_wr`.
    pub fn max_wr(&self) -> u32 {
        self.max - 1
    }

    /// Pages of [`KERNEL_PAGE`] bytes a kernel queue's buffer takes.
    pub fn kernel_pages(&self) -> usize {
        let n = self.buf_size.div_ceil(KERNEL_PAGE as u64);
        usize::try_from(n).unwrap_or(usize::MAX)
    }

    /// Where WQE `i` of a kernel queue starts: (page, offset in the page).
    pub fn kernel_wqe_at(&self, i: u32) -> (usize, usize) {
        let off = (u64::from(i)) << self.wqe_shift;
        let page = (off / KERNEL_PAGE as u64) as usize;
        (page, (off % KERNEL_PAGE as u64) as usize)
    }

    /// The free list of a new kernel queue: WQE `i` names `i + 1`, the last the first.
    pub fn next_wqe_index(&self, i: u32) -> u16 {
        // `max` ≤ 2^`log_max_srq_sz` (at most 2^16 by the 16-bit index field upstream
        // writes): the masked value fits.
        ((i.wrapping_add(1)) & (self.max - 1)) as u16
    }
}

/// What the create command says about the queue (upstream `mlx5_srq_attr`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SrqCtx {
    /// `log_srq_size` / `log_wq_sz`.
    pub log_size: u8,
    /// log2 of the WQE size in 16-byte units (`log_rq_stride`; `log_wq_stride` is
    /// this + 4).
    pub wqe_shift: u8,
    /// Page size above 4 KiB (log2).
    pub log_page_size: u8,
    /// Offset of the queue in its first page, 64-byte units.
    pub page_offset: u8,
    /// Limit watermark.
    pub lwm: u16,
    /// PD number.
    pub pd: u32,
    /// Doorbell record address.
    pub db_record: u64,
    /// WQE signature.
    pub wq_sig: bool,
    /// XRC domain (XRC SRQ).
    pub xrcd: u32,
    /// Completion queue (XRC SRQ).
    pub cqn: u32,
    /// User index (XRC SRQ with CQE version 1, else 0).
    pub user_index: u32,
    /// `uid` of the command (0: no DEVX context).
    pub uid: u16,
}

impl SrqCtx {
    /// The context of a queue of shape `s` of type `t` on PD `pd`, doorbell record at
    /// `db_record`, buffer pages of 4 KiB << `log_page_size` starting `page_offset`
    /// × 64 bytes in: an XRC SRQ names `xrcd` and `cqn` and, with CQE version 1,
    /// user index `uidx` (upstream sets it only then).
    #[expect(clippy::too_many_arguments, reason = "one value per context field")]
    pub fn new(
        t: SrqType,
        s: &SrqShape,
        pd: u32,
        db_record: u64,
        log_page_size: u8,
        page_offset: u8,
        wq_sig: bool,
        xrc: Option<(u32, u32, u32)>,
        cqe_version: u8,
    ) -> Self {
        // `wqe_shift` is at least 5 (32-byte WQEs), so the subtraction never wraps.
        let mut c = SrqCtx {
            log_size: s.log_size(),
            wqe_shift: (s.wqe_shift.saturating_sub(4)) as u8,
            log_page_size,
            page_offset,
            pd,
            db_record,
            wq_sig,
            ..SrqCtx::default()
        };
        if let (SrqType::Xrc, Some((xrcd, cqn, uidx))) = (t, xrc) {
            c.xrcd = xrcd;
            c.cqn = cqn;
            if cqe_version == 1 {
                c.user_index = uidx;
            }
        }
        c
    }
}

/// `enum ib_srq_attr_mask`: `IB_SRQ_MAX_WR`.
pub const IB_SRQ_MAX_WR: u32 = 1 << 0;
/// `enum ib_srq_attr_mask`: `IB_SRQ_LIMIT`.
pub const IB_SRQ_LIMIT: u32 = 1 << 1;

/// modify_srq: the limit to arm, if any. Resizing (`IB_SRQ_MAX_WR`) → `EINVAL` (upstream:
/// "not supported yet"); a limit at or above the ring size → `EINVAL`; other mask bits
/// are ignored, as upstream.
pub fn modify_limit(mask: u32, limit: u32, max: u32) -> Result<Option<u16>, UabiError> {
    if mask & IB_SRQ_MAX_WR != 0 {
        return Err(UabiError::inval(Reason::OutOfRange(
            "IB_SRQ_MAX_WR (resize)",
        )));
    }
    if mask & IB_SRQ_LIMIT == 0 {
        return Ok(None);
    }
    if limit >= max {
        return Err(UabiError::inval(Reason::OutOfRange("srq_limit")));
    }
    // Below `max` ≤ 2^16 (16-bit `lwm`).
    u16::try_from(limit)
        .map(Some)
        .map_err(|_| UabiError::inval(Reason::OutOfRange("srq_limit")))
}

/// The user response of create_srq (`mlx5_ib_create_srq_resp`).
pub fn create_srq_response(srqn: u32) -> CreateSrqResp {
    CreateSrqResp { srqn, reserved: 0 }
}

#[cfg(any(test, CONFIG_MLX5_RS_KUNIT_TEST))]
#[cfg_attr(CONFIG_RUST, kernel::macros::kunit_tests(mlx5_rs_ib_srq_plan))]
mod tests {
    use super::*;
    use crate::errno::Errno;

    const LIM: SrqLimits = SrqLimits {
        log_max_srq_sz: 15,
        max_wqe_sz_rq: 1024,
        cqe_version: 1,
    };

    #[test]
    fn shape_rounds_as_upstream() {
        let s = srq_shape(100, 3, &LIM).unwrap();
        // 101 → 128 entries; 16 + 3 × 16 = 64 bytes.
        assert_eq!((s.max, s.wqe_shift, s.max_avail_gather), (128, 6, 3));
        assert_eq!((s.buf_size, s.max_wr(), s.log_size()), (8192, 127, 7));
        assert_eq!(s.kernel_pages(), 2);
        // One SGE still takes the 32-byte minimum: room for one entry.
        let s = srq_shape(0, 1, &LIM).unwrap();
        assert_eq!(
            (s.max, s.wqe_shift, s.max_avail_gather, s.buf_size),
            (1, 5, 1, 32)
        );
        assert_eq!(s.kernel_pages(), 1);
        // No SGE: 32 bytes, one entry of room.
        let s = srq_shape(1, 0, &LIM).unwrap();
        assert_eq!((s.max, s.wqe_shift, s.max_avail_gather), (2, 5, 1));
        // Five SGEs: 96 → 128 bytes, room for 7.
        let s = srq_shape(7, 5, &LIM).unwrap();
        assert_eq!((s.max, s.wqe_shift, s.max_avail_gather), (8, 7, 7));
    }

    #[test]
    fn limits_refused_with_einval() {
        // max_wr must stay below 2^log_max_srq_sz.
        assert_eq!(srq_shape(32767, 1, &LIM).unwrap().max, 32768);
        let e = srq_shape(32768, 1, &LIM).unwrap_err();
        assert_eq!(e.errno, Errno::EINVAL);
        assert_eq!(
            srq_shape(u32::MAX, 1, &LIM).unwrap_err().errno,
            Errno::EINVAL
        );
        // max_sge up to max_wqe_sz_rq / 16.
        assert!(srq_shape(1, 64, &LIM).is_ok());
        assert_eq!(srq_shape(1, 65, &LIM).unwrap_err().errno, Errno::EINVAL);
        assert_eq!(
            srq_shape(1, u32::MAX, &LIM).unwrap_err().errno,
            Errno::EINVAL
        );
        // A device with log_max_srq_sz 0 and no WQE room: one WQE without scatter.
        let none = SrqLimits::default();
        assert_eq!(srq_shape(0, 0, &none).unwrap().max, 1);
        assert_eq!(srq_shape(1, 0, &none).unwrap_err().errno, Errno::EINVAL);
        assert_eq!(srq_shape(0, 1, &none).unwrap_err().errno, Errno::EINVAL);
    }

    #[test]
    fn srq_types() {
        assert_eq!(SrqType::from_ib(0), Ok(SrqType::Basic));
        assert_eq!(SrqType::from_ib(1), Ok(SrqType::Xrc));
        assert_eq!(SrqType::from_ib(2).unwrap_err().errno, Errno::EOPNOTSUPP);
        assert_eq!(SrqType::from_ib(77).unwrap_err().errno, Errno::EOPNOTSUPP);
    }

    #[test]
    fn kernel_layout_and_free_list() {
        let s = srq_shape(200, 2, &LIM).unwrap();
        // 256 × 64 bytes = 4 pages; WQE 64 starts page 1.
        assert_eq!((s.max, s.wqe_shift, s.kernel_pages()), (256, 6, 4));
        assert_eq!(s.kernel_wqe_at(0), (0, 0));
        assert_eq!(s.kernel_wqe_at(63), (0, 4032));
        assert_eq!(s.kernel_wqe_at(64), (1, 0));
        assert_eq!(s.next_wqe_index(0), 1);
        assert_eq!(s.next_wqe_index(254), 255);
        assert_eq!(s.next_wqe_index(255), 0);
    }

    #[test]
    fn context_of_each_type() {
        let s = srq_shape(100, 3, &LIM).unwrap();
        let b = SrqCtx::new(
            SrqType::Basic,
            &s,
            5,
            0x1000,
            0,
            0,
            false,
            Some((1, 2, 3)),
            1,
        );
        assert_eq!(
            (b.log_size, b.wqe_shift, b.pd, b.db_record),
            (7, 2, 5, 0x1000)
        );
        // A basic SRQ names neither XRC domain nor CQ, and no user index.
        assert_eq!((b.xrcd, b.cqn, b.user_index), (0, 0, 0));
        let x = SrqCtx::new(
            SrqType::Xrc,
            &s,
            5,
            0x1000,
            0,
            0,
            true,
            Some((9, 8, DEFAULT_UIDX)),
            1,
        );
        assert_eq!(
            (x.xrcd, x.cqn, x.user_index, x.wq_sig),
            (9, 8, DEFAULT_UIDX, true)
        );
        // CQE version 0: no user index in the context.
        let x0 = SrqCtx::new(SrqType::Xrc, &s, 5, 0x1000, 0, 0, false, Some((9, 8, 7)), 0);
        assert_eq!(x0.user_index, 0);
    }

    #[test]
    fn modify_checks() {
        assert_eq!(modify_limit(0, 5, 8), Ok(None));
        assert_eq!(modify_limit(IB_SRQ_LIMIT, 7, 8), Ok(Some(7)));
        assert_eq!(modify_limit(IB_SRQ_LIMIT, 0, 8), Ok(Some(0)));
        assert_eq!(
            modify_limit(IB_SRQ_LIMIT, 8, 8).unwrap_err().errno,
            Errno::EINVAL
        );
        let both = IB_SRQ_LIMIT | IB_SRQ_MAX_WR;
        assert_eq!(modify_limit(both, 1, 8).unwrap_err().errno, Errno::EINVAL);
        assert_eq!(
            modify_limit(IB_SRQ_MAX_WR, 1, 8).unwrap_err().errno,
            Errno::EINVAL
        );
        // Unknown bits are ignored.
        assert_eq!(modify_limit(IB_SRQ_LIMIT | 0x80, 3, 8), Ok(Some(3)));
        assert_eq!(create_srq_response(0x42).srqn, 0x42);
    }
}
