// SPDX-License-Identifier: GPL-2.0

//! What the devlink shim (`ffi/core/devlink.c`) prints, as values: `devlink dev info`
//! and the health reporters' buffer, derived as upstream mlx5_core's devlink.c and
//! health.c derive them (pure `core` code, host-tested). The `#[repr(C)]` structures
//! mirror those of `mlx5rs_ffi.h` (the shim checks the same sizes).

use core::ffi::CStr;

use super::buffer::{synd_name, HealthBuffer};

/// Room of the shim's strings, the NUL included (`MLX5RS_DEVLINK_STR_LEN`).
pub const STR_LEN: usize = 32;

/// `LOGLEVEL_ERR`: the severity upstream reports when the buffer's is not valid
/// (`mlx5_health_get_severity`).
pub const SEVERITY_DEFAULT: u8 = 3;

/// `struct mlx5rs_devlink_info`: the answer to `devlink dev info`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DevlinkInfo {
    /// `fw.psid` (fixed): the board id, NUL-terminated.
    pub psid: [u8; STR_LEN],
    /// `fw.version` / `fw` running, NUL-terminated; empty: not reported.
    pub fw_running: [u8; STR_LEN],
    /// `fw.version` / `fw` stored, NUL-terminated; empty: not reported.
    pub fw_stored: [u8; STR_LEN],
    /// Non-zero on a physical function (upstream reports nothing else for a VF).
    pub is_pf: u32,
}
const _: () = assert!(size_of::<DevlinkInfo>() == 100);

impl DevlinkInfo {
    /// The info of a function: `board_id` as QUERY_ADAPTER gave it (NUL-padded),
    /// the running firmware version from the initialization segment, no stored
    /// version (the driver does not read the MCQS/MCQI registers upstream reads it
    /// from).
    pub fn new(board_id: &[u8], fw: (u16, u16, u16), is_pf: bool) -> Self {
        let mut psid = [0u8; STR_LEN];
        let n = board_id
            .iter()
            .position(|b| *b == 0)
            .unwrap_or(board_id.len())
            .min(STR_LEN - 1);
        psid[..n].copy_from_slice(&board_id[..n]);
        Self {
            psid,
            fw_running: fw_version(fw.0, fw.1, fw.2),
            fw_stored: [0; STR_LEN],
            is_pf: u32::from(is_pf),
        }
    }
}

/// A firmware version as upstream's devlink prints it (`"%d.%d.%04d"`), NUL-terminated.
pub fn fw_version(major: u16, minor: u16, subminor: u16) -> [u8; STR_LEN] {
    let mut w = Fixed::default();
    // At most 5 + 1 + 5 + 1 + 5 characters: always fits.
    let _ = core::fmt::write(&mut w, format_args!("{major}.{minor}.{subminor:04}"));
    w.buf
}

/// `struct mlx5rs_health_buf`: the health buffer as the reporters print it.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HealthOut {
    /// `assert_var`.
    pub assert_var: [u32; 6],
    /// `assert_exit_ptr`.
    pub assert_exit_ptr: u32,
    /// `assert_callra`.
    pub assert_callra: u32,
    /// `time`.
    pub time: u32,
    /// `hw_id`.
    pub hw_id: u32,
    /// `ext_synd`.
    pub ext_synd: u32,
    /// `raw_fw_ver`.
    pub raw_fw_ver: u32,
    /// `rfr`: the reset-required bit.
    pub rfr: u8,
    /// `severity`: the buffer's when valid, else [`SEVERITY_DEFAULT`].
    pub severity: u8,
    /// `irisc_index`.
    pub irisc_index: u8,
    /// `synd`.
    pub synd: u8,
    /// The syndrome's description (diagnose's `Description`), NUL-terminated.
    pub synd_name: [u8; STR_LEN],
}
const _: () = assert!(size_of::<HealthOut>() == 84);

impl HealthOut {
    /// The values upstream's reporters print for buffer `b`.
    pub fn new(b: &HealthBuffer) -> Self {
        let mut name = Fixed::default();
        // Every description is shorter than STR_LEN - 1; a longer one is cut.
        let _ = core::fmt::Write::write_str(&mut name, synd_name(b.synd));
        Self {
            assert_var: b.assert_var,
            assert_exit_ptr: b.assert_exit_ptr,
            assert_callra: b.assert_callra,
            time: b.time,
            hw_id: b.hw_id,
            ext_synd: u32::from(b.ext_synd),
            raw_fw_ver: b.fw_ver,
            rfr: u8::from(b.rfr()),
            severity: b.severity().unwrap_or(SEVERITY_DEFAULT),
            irisc_index: b.irisc_index,
            synd: b.synd,
            synd_name: name.buf,
        }
    }
}

/// The smallest EQ depth the driverinit parameters `io_eq_size` and `event_eq_size`
/// take (`MLX5RS_EQ_DEPTH_MIN`, upstream's `mlx5_devlink_eq_depth_validate`).
pub const EQ_DEPTH_MIN: u32 = 64;
/// The largest (`MLX5RS_EQ_DEPTH_MAX`).
pub const EQ_DEPTH_MAX: u32 = 4096;

/// `struct mlx5rs_devlink_driverinit`: the driverinit parameters' values, what a load
/// of the function uses (set with `devlink dev param set ... cmode driverinit`, taken
/// at the next `devlink dev reload`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DriverInit {
    /// `io_eq_size`: entries of each completion EQ.
    pub io_eq_size: u32,
    /// `event_eq_size`: entries of the async EQ.
    pub event_eq_size: u32,
    /// `enable_rdma`: non-zero to register the IB device.
    pub enable_rdma: u32,
}
const _: () = assert!(size_of::<DriverInit>() == 12);

impl DriverInit {
    /// Upstream's defaults: `MLX5_COMP_EQ_SIZE` (1024), `MLX5_NUM_ASYNC_EQE` (0x1000),
    /// the IB device registered.
    pub const DEFAULT: Self = Self {
        io_eq_size: 1024,
        event_eq_size: 0x1000,
        enable_rdma: 1,
    };

    /// Whether `n` is an EQ depth the parameters take.
    pub const fn eq_depth_ok(n: u32) -> bool {
        n >= EQ_DEPTH_MIN && n <= EQ_DEPTH_MAX
    }

    /// These values if both EQ depths are within the bounds (the shim validates what a
    /// user sets; this guards what reaches the EQs), else the defaults.
    pub const fn checked(self) -> Self {
        if Self::eq_depth_ok(self.io_eq_size) && Self::eq_depth_ok(self.event_eq_size) {
            self
        } else {
            Self::DEFAULT
        }
    }
}

/// `struct mlx5rs_fw_report`: a report's context.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FwReport {
    /// The syndrome at the report.
    pub synd: u32,
    /// Consecutive polls the health counter did not move.
    pub miss_counter: u32,
}
const _: () = assert!(size_of::<FwReport>() == 8);

/// What the `fw` reporter is told after a poll, as upstream's `poll_health` and
/// `mlx5_fw_reporter_err_work` decide it: a new non-zero syndrome or the miss count
/// reached is reported, "FW syndrome reported" when the buffer holds a syndrome,
/// else "FW miss counter reported".
pub fn fw_report_msg(r: &FwReport) -> Option<&'static CStr> {
    if r.synd != 0 {
        Some(c"FW syndrome reported")
    } else if r.miss_counter != 0 {
        Some(c"FW miss counter reported")
    } else {
        None
    }
}

/// The message of a `fw_fatal` report (upstream's).
pub const FW_FATAL_MSG: &CStr = c"FW fatal error reported";

/// A NUL-terminated string of at most `STR_LEN - 1` bytes, cut on overflow.
#[derive(Default)]
struct Fixed {
    buf: [u8; STR_LEN],
    len: usize,
}

impl core::fmt::Write for Fixed {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        let room = STR_LEN - 1 - self.len;
        let n = s.len().min(room);
        self.buf[self.len..self.len + n].copy_from_slice(&s.as_bytes()[..n]);
        self.len += n;
        if n < s.len() {
            Err(core::fmt::Error)
        } else {
            Ok(())
        }
    }
}

#[cfg(any(test, CONFIG_MLX5_RS_KUNIT_TEST))]
#[cfg_attr(CONFIG_RUST, kernel::macros::kunit_tests(mlx5_rs_health_report))]
mod tests {
    use super::*;
    use crate::health::buffer::DWORDS;

    #[test]
    fn driverinit_defaults_and_bounds() {
        assert!(DriverInit::eq_depth_ok(DriverInit::DEFAULT.io_eq_size));
        assert!(DriverInit::eq_depth_ok(DriverInit::DEFAULT.event_eq_size));
        assert_ne!(DriverInit::DEFAULT.enable_rdma, 0);
        assert!(DriverInit::eq_depth_ok(64) && DriverInit::eq_depth_ok(4096));
        assert!(!DriverInit::eq_depth_ok(63) && !DriverInit::eq_depth_ok(4097));
        let small = DriverInit {
            io_eq_size: 64,
            event_eq_size: 128,
            enable_rdma: 0,
        };
        assert_eq!(small.checked(), small);
        let bad = DriverInit {
            io_eq_size: 0,
            ..small
        };
        assert_eq!(bad.checked(), DriverInit::DEFAULT);
        let bad = DriverInit {
            event_eq_size: 1 << 20,
            ..small
        };
        assert_eq!(bad.checked(), DriverInit::DEFAULT);
    }

    fn text(b: &[u8]) -> &[u8] {
        &b[..b.iter().position(|c| *c == 0).unwrap_or(b.len())]
    }

    #[test]
    fn fw_version_as_upstream() {
        assert_eq!(text(&fw_version(16, 35, 12)), b"16.35.0012");
        assert_eq!(text(&fw_version(22, 41, 1000)), b"22.41.1000");
        assert_eq!(text(&fw_version(65535, 65535, 65535)), b"65535.65535.65535");
    }

    #[test]
    fn info_psid_cut_at_nul() {
        let mut id = [0u8; 16];
        id[..13].copy_from_slice(b"MT_0000000222");
        let i = DevlinkInfo::new(&id, (20, 1, 7), true);
        assert_eq!(text(&i.psid), b"MT_0000000222");
        assert_eq!(text(&i.fw_running), b"20.1.0007");
        assert_eq!(text(&i.fw_stored), b"");
        assert_eq!(i.is_pf, 1);
        assert_eq!(
            DevlinkInfo::new(&[b'A'; 40], (0, 0, 0), false).psid[STR_LEN - 1],
            0
        );
    }

    #[test]
    fn health_out_as_upstream() {
        let mut d = [0u32; DWORDS];
        d[11] = 77; // time
        d[12] = 0x0014_0001; // fw_ver
        d[14] = 0x8a00_0000; // rfr, valid, severity 2
        d[15] = 0x0107_1234; // irisc 1, synd 7, ext_synd 0x1234
        let o = HealthOut::new(&HealthBuffer::from_dwords(&d));
        assert_eq!((o.rfr, o.severity, o.irisc_index, o.synd), (1, 2, 1, 7));
        assert_eq!(
            (o.ext_synd, o.raw_fw_ver, o.time),
            (0x1234, 0x0014_0001, 77)
        );
        assert_eq!(text(&o.synd_name), b"dead IRISC");
        // Severity not valid: upstream reports LOGLEVEL_ERR.
        d[14] = 0x0500_0000;
        let o = HealthOut::new(&HealthBuffer::from_dwords(&d));
        assert_eq!((o.rfr, o.severity), (0, SEVERITY_DEFAULT));
    }

    #[test]
    fn report_message_as_upstream() {
        let r = FwReport {
            synd: 0x10,
            miss_counter: 3,
        };
        assert_eq!(fw_report_msg(&r), Some(c"FW syndrome reported"));
        let r = FwReport {
            synd: 0,
            miss_counter: 3,
        };
        assert_eq!(fw_report_msg(&r), Some(c"FW miss counter reported"));
        assert_eq!(fw_report_msg(&FwReport::default()), None);
    }
}
