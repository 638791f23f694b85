//! Capability values the emulated device reports (QUERY_HCA_CAP) and accepts
//! (SET_HCA_CAP).
//!
//! Only what is modelled is advertised: no Ethernet offloads, flow tables, eswitch,
//! SR-IOV, RoCE or ODP. Atomics are advertised as a ConnectX-5 does (the ATOMIC page:
//! 8-byte compare-swap and fetch-add, requester endianness settable to the host's):
//! the emulator accepts what they configure (QPs' remote-atomic enable and atomic
//! mode, mkeys' `a`); it executes no work request of any kind yet. Other capability
//! types read back all zero
//! ("absent"). The values are our model of a ConnectX-5 IB port (our choice); the
//! field layout is `mlx5_ifc_cmd_hca_cap_bits`, checked by tests/ifc_vs_header.rs.

use crate::config::EmuConfig;
use crate::ifc::caps::atomic_caps as at;
use crate::ifc::caps::cmd_hca_cap as g;
use crate::ifc::field::Field;
use crate::ifc::opcodes::cap_type;

/// Size of one capability structure.
pub const CAP_BYTES: usize = 256;

/// Current and maximum values of every modelled capability type.
#[derive(Clone, Debug)]
pub struct Caps {
    /// GENERAL, current.
    pub gen_cur: [u8; CAP_BYTES],
    /// GENERAL, maximum.
    pub gen_max: [u8; CAP_BYTES],
    /// ATOMIC, current.
    pub atomic_cur: [u8; CAP_BYTES],
    /// ATOMIC, maximum.
    pub atomic_max: [u8; CAP_BYTES],
}

/// `atomic_operations`: compare-swap, fetch-add, and their masked forms (upstream
/// `MLX5_ATOMIC_OPS_*`, bits 0 to 3).
pub const ATOMIC_OPERATIONS: u16 = 0b1111;
/// `atomic_size_qp` / `atomic_size_dc`: 8-byte operands (upstream mlx5_ib
/// `MLX5_ATOMIC_SIZE_QP_8BYTES`, bit 3).
pub const ATOMIC_SIZE_8B: u16 = 1 << 3;
/// `atomic_req_8B_endianness_mode` value "host endianness" (upstream mlx5_core
/// `MLX5_ATOMIC_REQ_MODE_HOST_ENDIANNESS`); 0 is big endian, the power-up value.
pub const ATOMIC_REQ_MODE_HOST: u64 = 1;

/// Capability types that read back as all zero (feature absent).
pub const ZERO_TYPES: &[u16] = &[
    cap_type::ETHERNET_OFFLOADS,
    cap_type::ODP,
    cap_type::ROCE,
    cap_type::IPOIB_OFFLOADS,
    cap_type::IPOIB_ENHANCED_OFFLOADS,
    cap_type::FLOW_TABLE,
    cap_type::ESWITCH_FLOW_TABLE,
    cap_type::ESWITCH,
    cap_type::QOS,
    cap_type::DEBUG,
    cap_type::DEV_MEM,
    cap_type::TLS,
    cap_type::VDPA_EMULATION,
    cap_type::DEV_EVENT,
    cap_type::IPSEC,
    cap_type::CRYPTO,
    cap_type::SHAMPO,
    cap_type::PSP,
    cap_type::MACSEC,
    cap_type::GENERAL_2,
    cap_type::PORT_SELECTION,
    cap_type::ADV_VIRTUALIZATION,
    cap_type::ADV_RDMA,
    cap_type::TLP_EMULATION,
];

/// GENERAL fields the driver may change with SET_HCA_CAP, each only up to its maximum
/// value: the fields upstream `handle_hca_cap` writes (plus a few it may), other
/// fields of the request are ignored (permissive: firmware keeps what it does not let
/// software change).
pub const SETTABLE: &[Field] = &[
    g::PKEY_TABLE_SIZE.raw(),
    g::LOG_MAX_QP.raw(),
    g::CMDIF_CHECKSUM.raw(),
    g::UAR_4K.raw(),
    g::LOG_UAR_PAGE_SZ.raw(),
    g::CACHE_LINE_128BYTE.raw(),
    g::DCT.raw(),
    g::NUM_VHCA_PORTS.raw(),
    g::RELEASE_ALL_PAGES.raw(),
    g::ICM_MNG_FUNCTION_ID_MODE.raw(),
    g::MKEY_BY_NAME.raw(),
    g::ROCE.raw(),
    g::LOG_MAX_CURRENT_UC_LIST.raw(),
    g::ABS_NATIVE_PORT_NUM.raw(),
    g::PCI_SYNC_FOR_FW_UPDATE_EVENT.raw(),
    g::PCI_SYNC_FOR_FW_UPDATE_WITH_DRIVER_UNLOAD.raw(),
    g::PCIE_RESET_USING_HOTRESET_METHOD.raw(),
    g::NUM_TOTAL_DYNAMIC_VF_MSIX.raw(),
    g::VHCA_STATE.raw(),
];

fn set(buf: &mut [u8], f: Field, v: u64) {
    // Values below are constants that fit their fields; a miss would only drop a cap.
    let _ = f.set(buf, v);
}

impl Caps {
    /// The caps of an emulated ConnectX-5 (IB port) under `cfg`.
    pub fn new(cfg: &EmuConfig) -> Self {
        let mut m = [0u8; CAP_BYTES];
        let values: &[(Field, u64)] = &[
            (g::LOG_MAX_SRQ_SZ.raw(), 15),
            (g::LOG_MAX_QP_SZ.raw(), 15),
            (g::LOG_MAX_QP.raw(), 18),
            (g::LOG_MAX_SRQ.raw(), 23),
            (g::MAX_SGL_FOR_OPTIMIZED_PERFORMANCE.raw(), 8),
            (g::LOG_MAX_CQ_SZ.raw(), 22),
            (g::LOG_MAX_CQ.raw(), 24),
            (g::LOG_MAX_EQ_SZ.raw(), 22),
            (g::LOG_MAX_MKEY.raw(), 24),
            (g::LOG_MAX_EQ.raw(), 5),
            (g::MAX_INDIRECTION.raw(), 4),
            (g::FAST_TEARDOWN.raw(), 1),
            (g::FORCE_TEARDOWN.raw(), 1),
            (g::LOG_MAX_MRW_SZ.raw(), 64),
            (g::LOG_MAX_KLM_LIST_SIZE.raw(), 16),
            (g::LOG_MAX_RA_REQ_QP.raw(), 4),
            (g::LOG_MAX_RA_RES_QP.raw(), 4),
            (g::LOG_MAX_RA_REQ_DC.raw(), 4),
            (g::LOG_MAX_RA_RES_DC.raw(), 4),
            (g::CACHE_LINE_128BYTE.raw(), 1),
            (g::GID_TABLE_SIZE.raw(), 4),
            (g::PKEY_TABLE_SIZE.raw(), 0),
            (g::MCAM_REG.raw(), 1),
            (g::PCAM_REG.raw(), 1),
            (g::QCAM_REG.raw(), 1),
            (g::LOCAL_CA_ACK_DELAY.raw(), 16),
            (g::PORT_TYPE.raw(), 0),
            (g::NUM_PORTS.raw(), 1),
            (g::LOG_MAX_MSG.raw(), 30),
            (g::CQE_VERSION.raw(), 1),
            (g::CMDIF_CHECKSUM.raw(), 3),
            (g::RC.raw(), 1),
            (g::UC.raw(), 1),
            (g::UD.raw(), 1),
            (g::XRC.raw(), 1),
            (g::ATOMIC.raw(), 1),
            // Memory windows (cap `imaicl`), as a ConnectX-5 reports them (its
            // `ibv_devinfo -v` lists MEM_WINDOW and MEM_WINDOW_TYPE_2B): upstream
            // mlx5_ib then serves `alloc_mw` and advertises both (main.c). The windows
            // are UMR-bound KLM mkeys (fw/dp/umr.rs, fw/dp/xlate.rs).
            (g::IMAICL.raw(), 1),
            // Multicast loopback blocking of UD QPs (qpc `block_lb_mc`), as a
            // ConnectX-5 reports it; no multicast is modelled, so nothing loops back.
            (g::BLOCK_LB_MC.raw(), 1),
            (g::CQ_MODERATION.raw(), 1),
            (g::CQ_RESIZE.raw(), 1),
            (g::UAR_4K.raw(), 1),
            (g::LOG_PG_SZ.raw(), 12),
            (g::BF.raw(), 1),
            (g::DRIVER_VERSION.raw(), 1),
            (g::LOG_BF_REG_SIZE.raw(), 9),
            (g::MAX_WQE_SZ_SQ.raw(), 1024),
            (g::MAX_WQE_SZ_RQ.raw(), 512),
            (g::MAX_WQE_SZ_SQ_DC.raw(), 512),
            (g::MAX_QP_MCG.raw(), 240),
            (g::LOG_MAX_MCG.raw(), 21),
            (g::LOG_MAX_TRANSPORT_DOMAIN.raw(), 12),
            (g::LOG_MAX_PD.raw(), 18),
            (g::LOG_MAX_XRCD.raw(), 16),
            // RMPs (upstream's basic SRQs at ISSI 1): as many as SRQs.
            (g::LOG_MAX_RMP.raw(), 23),
            (g::LOG_UAR_PAGE_SZ.raw(), 0),
            (
                g::DEVICE_FREQUENCY_KHZ.raw(),
                u64::from(cfg.device_frequency_khz),
            ),
            (
                g::DEVICE_FREQUENCY_MHZ.raw(),
                u64::from(cfg.device_frequency_khz / 1000),
            ),
            (g::NUM_OF_UARS_PER_PAGE.raw(), 1),
            (g::NUM_VHCA_PORTS.raw(), 1),
            (g::SW_OWNER_ID.raw(), 1),
            (g::RELEASE_ALL_PAGES.raw(), 1),
            (g::IB_VIRT.raw(), u64::from(cfg.ib_virt)),
            // General events (upstream subscribes to GENERAL_EVENT only with it) and
            // sync reset: the event and the hot-reset method, both enabled by the
            // driver (upstream `handle_hca_cap` sets them when the maximum offers
            // them); emu/README.md "Sync reset".
            (g::GENERAL_NOTIFICATION_EVENT.raw(), 1),
            (g::PCI_SYNC_FOR_FW_UPDATE_EVENT.raw(), 1),
            (g::PCIE_RESET_USING_HOTRESET_METHOD.raw(), 1),
        ];
        for &(f, v) in values {
            set(&mut m, f, v);
        }
        let mut c = m;
        // Current values that differ from the maximum at power-up.
        set(&mut c, g::CMDIF_CHECKSUM.raw(), 0);
        set(&mut c, g::UAR_4K.raw(), 0);
        set(&mut c, g::CACHE_LINE_128BYTE.raw(), 0);
        set(&mut c, g::LOG_MAX_QP.raw(), 12);
        set(&mut c, g::RELEASE_ALL_PAGES.raw(), 0);
        set(&mut c, g::PCI_SYNC_FOR_FW_UPDATE_EVENT.raw(), 0);
        set(&mut c, g::PCIE_RESET_USING_HOTRESET_METHOD.raw(), 0);
        let mut am = [0u8; CAP_BYTES];
        set(
            &mut am,
            at::ATOMIC_OPERATIONS.raw(),
            ATOMIC_OPERATIONS.into(),
        );
        set(&mut am, at::ATOMIC_SIZE_QP.raw(), ATOMIC_SIZE_8B.into());
        set(&mut am, at::ATOMIC_SIZE_DC.raw(), ATOMIC_SIZE_8B.into());
        set(
            &mut am,
            at::SUPPORTED_ATOMIC_REQ_8B_ENDIANNESS_MODE_1.raw(),
            1,
        );
        set(
            &mut am,
            at::ATOMIC_REQ_8B_ENDIANNESS_MODE.raw(),
            ATOMIC_REQ_MODE_HOST,
        );
        let mut ac = am;
        // Big endian until the driver asks for its own (upstream handle_hca_cap_atomic).
        set(&mut ac, at::ATOMIC_REQ_8B_ENDIANNESS_MODE.raw(), 0);
        Caps {
            gen_cur: c,
            gen_max: m,
            atomic_cur: ac,
            atomic_max: am,
        }
    }

    /// The capability block for `ty` (`cur` = current values), `None` if unknown.
    pub fn query(&self, ty: u16, cur: bool) -> Option<[u8; CAP_BYTES]> {
        match ty {
            cap_type::GENERAL => Some(if cur { self.gen_cur } else { self.gen_max }),
            cap_type::ATOMIC => Some(if cur {
                self.atomic_cur
            } else {
                self.atomic_max
            }),
            t if ZERO_TYPES.contains(&t) => Some([0; CAP_BYTES]),
            _ => None,
        }
    }

    /// Applies a SET_HCA_CAP of GENERAL: settable fields are taken from `new`,
    /// others ignored; a value above the maximum is rejected as a whole.
    pub fn set_general(&mut self, new: &[u8]) -> Result<(), &'static Field> {
        for f in SETTABLE {
            let v = f.get(new).unwrap_or(0);
            let max = f.get(&self.gen_max).unwrap_or(0);
            // log_uar_page_sz is a size, not a capability bound: upstream writes
            // PAGE_SHIFT - 12 whatever the maximum says; ours is the BAR's limit.
            let over = if *f == g::LOG_UAR_PAGE_SZ.raw() {
                v > u64::from(super::uar::MAX_LOG_UAR_PAGE_SZ)
            } else {
                v > max
            };
            if over {
                return Err(f);
            }
        }
        for f in SETTABLE {
            let v = f.get(new).unwrap_or(0);
            set(&mut self.gen_cur, *f, v);
        }
        // num_of_uars_per_page: the 4 KiB UARs of a system page with uar_4k, else 1.
        let per = u64::from(self.uar_layout().per_alloc());
        set(&mut self.gen_cur, g::NUM_OF_UARS_PER_PAGE.raw(), per);
        Ok(())
    }

    /// The UAR layout of the current caps.
    pub fn uar_layout(&self) -> super::uar::UarLayout {
        super::uar::UarLayout {
            uar_4k: self.cur(g::UAR_4K.raw()) != 0,
            // At most MAX_LOG_UAR_PAGE_SZ: set_general refuses more.
            log_uar_page_sz: self.cur(g::LOG_UAR_PAGE_SZ.raw()) as u32,
        }
    }

    /// Applies a SET_HCA_CAP of ATOMIC: only `atomic_req_8B_endianness_mode` is
    /// taken (what upstream `handle_hca_cap_atomic` writes), 0 (big endian) or, as
    /// `supported_atomic_req_8B_endianness_mode_1` allows, 1 (host); other values are
    /// rejected, other fields ignored.
    pub fn set_atomic(&mut self, new: &[u8]) -> Result<(), &'static str> {
        let f = at::ATOMIC_REQ_8B_ENDIANNESS_MODE.raw();
        let v = f.get(new).unwrap_or(0);
        let host_ok = at::SUPPORTED_ATOMIC_REQ_8B_ENDIANNESS_MODE_1
            .raw()
            .get(&self.atomic_max)
            .unwrap_or(0)
            != 0;
        if v > ATOMIC_REQ_MODE_HOST || (v == ATOMIC_REQ_MODE_HOST && !host_ok) {
            return Err(f.name);
        }
        set(&mut self.atomic_cur, f, v);
        Ok(())
    }

    /// Sets cap `ib_virt` (current and maximum): the port knob of `ib_port`.
    pub fn set_ib_virt(&mut self, on: bool) {
        set(&mut self.gen_cur, g::IB_VIRT.raw(), u64::from(on));
        set(&mut self.gen_max, g::IB_VIRT.raw(), u64::from(on));
    }

    /// Command-interface signatures enabled (cap `cmdif_checksum` non-zero).
    pub fn signatures(&self) -> bool {
        g::CMDIF_CHECKSUM.raw().get(&self.gen_cur).unwrap_or(0) != 0
    }

    /// A GENERAL current value.
    pub fn cur(&self, f: Field) -> u64 {
        f.get(&self.gen_cur).unwrap_or(0)
    }
}
