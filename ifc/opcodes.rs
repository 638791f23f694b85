//! Command opcodes and op_mods, with their names for logs.

macro_rules! opcodes {
    ($( $(#[$m:meta])* $name:ident = $val:literal, )*) => {
        /// Command opcodes (`MLX5_CMD_OP_*`).
        #[expect(
            non_camel_case_types,
            reason = "variants are upstream's MLX5_CMD_OP_* names, which name() prints"
        )]
        // Item-level `allow`, not `expect`: clippy skips this lint on the host crates'
        // exported enum, where an expectation would be unfulfilled.
        #[allow(clippy::upper_case_acronyms, reason = "NOP is upstream's name")]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[repr(u16)]
        pub enum Opcode {
            $( $(#[$m])* $name = $val, )*
        }

        impl Opcode {
            /// Every known opcode.
            pub const ALL: &'static [Opcode] = &[ $( Opcode::$name, )* ];

            /// Decodes a raw opcode.
            pub const fn from_raw(v: u16) -> Option<Self> {
                match v {
                    $( $val => Some(Opcode::$name), )*
                    _ => None,
                }
            }

            /// Upper-case name as upstream logs it.
            pub const fn name(self) -> &'static str {
                match self {
                    $( Opcode::$name => stringify!($name), )*
                }
            }
        }
    };
}

opcodes! {
    /// Query HCA capabilities.
    QUERY_HCA_CAP = 0x100,
    /// Query adapter.
    QUERY_ADAPTER = 0x101,
    /// Initialize the HCA.
    INIT_HCA = 0x102,
    /// Tear the HCA down.
    TEARDOWN_HCA = 0x103,
    /// Enable the function.
    ENABLE_HCA = 0x104,
    /// Disable the function.
    DISABLE_HCA = 0x105,
    /// Query page demand.
    QUERY_PAGES = 0x107,
    /// Give / take pages.
    MANAGE_PAGES = 0x108,
    /// Set HCA capabilities.
    SET_HCA_CAP = 0x109,
    /// Query interface step sequence id.
    QUERY_ISSI = 0x10a,
    /// Set interface step sequence id.
    SET_ISSI = 0x10b,
    /// Set driver version string.
    SET_DRIVER_VERSION = 0x10d,
    /// Create memory key.
    CREATE_MKEY = 0x200,
    /// Query memory key.
    QUERY_MKEY = 0x201,
    /// Destroy memory key.
    DESTROY_MKEY = 0x202,
    /// Query special contexts.
    QUERY_SPECIAL_CONTEXTS = 0x203,
    /// Resume after page fault.
    PAGE_FAULT_RESUME = 0x204,
    /// Allocate MEMIC.
    ALLOC_MEMIC = 0x205,
    /// Deallocate MEMIC.
    DEALLOC_MEMIC = 0x206,
    /// Modify MEMIC.
    MODIFY_MEMIC = 0x207,
    /// Create EQ.
    CREATE_EQ = 0x301,
    /// Destroy EQ.
    DESTROY_EQ = 0x302,
    /// Query EQ.
    QUERY_EQ = 0x303,
    /// Generate an EQE.
    GEN_EQE = 0x304,
    /// Create CQ.
    CREATE_CQ = 0x400,
    /// Destroy CQ.
    DESTROY_CQ = 0x401,
    /// Query CQ.
    QUERY_CQ = 0x402,
    /// Modify CQ.
    MODIFY_CQ = 0x403,
    /// Create QP.
    CREATE_QP = 0x500,
    /// Destroy QP.
    DESTROY_QP = 0x501,
    /// RST to INIT.
    RST2INIT_QP = 0x502,
    /// INIT to RTR.
    INIT2RTR_QP = 0x503,
    /// RTR to RTS.
    RTR2RTS_QP = 0x504,
    /// RTS to RTS.
    RTS2RTS_QP = 0x505,
    /// SQ error to RTS.
    SQERR2RTS_QP = 0x506,
    /// Any to error.
    _2ERR_QP = 0x507,
    /// Any to reset.
    _2RST_QP = 0x50a,
    /// Query QP.
    QUERY_QP = 0x50b,
    /// SQD to RTS.
    SQD_RTS_QP = 0x50c,
    /// MAD interface.
    MAD_IFC = 0x50d,
    /// INIT to INIT.
    INIT2INIT_QP = 0x50e,
    /// Create SRQ.
    CREATE_SRQ = 0x700,
    /// Destroy SRQ.
    DESTROY_SRQ = 0x701,
    /// Query SRQ.
    QUERY_SRQ = 0x702,
    /// Arm RQ.
    ARM_RQ = 0x703,
    /// Create XRC SRQ.
    CREATE_XRC_SRQ = 0x705,
    /// Destroy XRC SRQ.
    DESTROY_XRC_SRQ = 0x706,
    /// Query XRC SRQ.
    QUERY_XRC_SRQ = 0x707,
    /// Arm XRC SRQ.
    ARM_XRC_SRQ = 0x708,
    /// Query vport state.
    QUERY_VPORT_STATE = 0x750,
    /// Modify vport state.
    MODIFY_VPORT_STATE = 0x751,
    /// Query eswitch vport context.
    QUERY_ESW_VPORT_CONTEXT = 0x752,
    /// Modify eswitch vport context.
    MODIFY_ESW_VPORT_CONTEXT = 0x753,
    /// Query NIC vport context.
    QUERY_NIC_VPORT_CONTEXT = 0x754,
    /// Modify NIC vport context.
    MODIFY_NIC_VPORT_CONTEXT = 0x755,
    /// Query RoCE address.
    QUERY_ROCE_ADDRESS = 0x760,
    /// Set RoCE address.
    SET_ROCE_ADDRESS = 0x761,
    /// Query HCA vport context.
    QUERY_HCA_VPORT_CONTEXT = 0x762,
    /// Modify HCA vport context.
    MODIFY_HCA_VPORT_CONTEXT = 0x763,
    /// Query HCA vport GID.
    QUERY_HCA_VPORT_GID = 0x764,
    /// Query HCA vport P_Key.
    QUERY_HCA_VPORT_PKEY = 0x765,
    /// Allocate Q counter.
    ALLOC_Q_COUNTER = 0x771,
    /// Deallocate Q counter.
    DEALLOC_Q_COUNTER = 0x772,
    /// Query Q counter.
    QUERY_Q_COUNTER = 0x773,
    /// Allocate PD.
    ALLOC_PD = 0x800,
    /// Deallocate PD.
    DEALLOC_PD = 0x801,
    /// Allocate UAR.
    ALLOC_UAR = 0x802,
    /// Deallocate UAR.
    DEALLOC_UAR = 0x803,
    /// Configure interrupt moderation.
    CONFIG_INT_MODERATION = 0x804,
    /// Access a register.
    ACCESS_REG = 0x805,
    /// Attach QP to multicast group.
    ATTACH_TO_MCG = 0x806,
    /// Detach QP from multicast group.
    DETACH_FROM_MCG = 0x807,
    /// No operation.
    NOP = 0x80d,
    /// Allocate XRC domain.
    ALLOC_XRCD = 0x80e,
    /// Deallocate XRC domain.
    DEALLOC_XRCD = 0x80f,
    /// Allocate transport domain.
    ALLOC_TRANSPORT_DOMAIN = 0x816,
    /// Deallocate transport domain.
    DEALLOC_TRANSPORT_DOMAIN = 0x817,
    /// Create RMP.
    CREATE_RMP = 0x90c,
    /// Modify RMP.
    MODIFY_RMP = 0x90d,
    /// Destroy RMP.
    DESTROY_RMP = 0x90e,
    /// Query RMP.
    QUERY_RMP = 0x90f,
    /// Create general object.
    CREATE_GENERAL_OBJECT = 0xa00,
    /// Modify general object.
    MODIFY_GENERAL_OBJECT = 0xa01,
    /// Query general object.
    QUERY_GENERAL_OBJECT = 0xa02,
    /// Destroy general object.
    DESTROY_GENERAL_OBJECT = 0xa03,
    /// Create user context.
    CREATE_UCTX = 0xa04,
    /// Destroy user context.
    DESTROY_UCTX = 0xa06,
    /// Create user memory.
    CREATE_UMEM = 0xa08,
    /// Destroy user memory.
    DESTROY_UMEM = 0xa0a,
}

/// Name of a raw opcode, `"UNKNOWN"` when not known.
pub const fn opcode_name(v: u16) -> &'static str {
    match Opcode::from_raw(v) {
        Some(o) => o.name(),
        None => "UNKNOWN",
    }
}

/// QUERY_PAGES op_mods.
#[cfg_attr(
    CONFIG_RUST,
    expect(dead_code, reason = "used by the emulator, not the driver")
)]
pub mod query_pages_op_mod {
    /// Boot pages.
    pub const BOOT: u16 = 1;
    /// Init pages.
    pub const INIT: u16 = 2;
    /// Regular pages.
    pub const REGULAR: u16 = 3;
}

/// MANAGE_PAGES op_mods.
pub mod manage_pages_op_mod {
    /// Driver could not satisfy a page request.
    pub const ALLOCATION_FAIL: u16 = 0;
    /// Give pages.
    pub const ALLOCATION_SUCCESS: u16 = 1;
    /// Take pages back.
    pub const HCA_RETURN_PAGES: u16 = 2;
}

/// ACCESS_REG op_mods.
pub mod access_reg_op_mod {
    /// Write the register.
    pub const WRITE: u16 = 0;
    /// Read the register.
    pub const READ: u16 = 1;
}

/// TEARDOWN_HCA profiles.
pub mod teardown_profile {
    /// Graceful close.
    pub const GRACEFUL_CLOSE: u16 = 0;
    /// Force close.
    pub const FORCE_CLOSE: u16 = 1;
    /// Prepare fast teardown.
    pub const PREPARE_FAST_TEARDOWN: u16 = 2;
}

/// QUERY_HCA_CAP op_mod mode bit: 1 = current, 0 = maximum.
pub const HCA_CAP_OPMOD_CUR: u16 = 1;

/// Capability types (QUERY_HCA_CAP op_mod = type << 1 | mode).
#[cfg_attr(
    CONFIG_RUST,
    expect(dead_code, reason = "used by the emulator, not the driver")
)]
pub mod cap_type {
    /// General device caps.
    pub const GENERAL: u16 = 0x00;
    /// Ethernet offloads.
    pub const ETHERNET_OFFLOADS: u16 = 0x01;
    /// On-demand paging.
    pub const ODP: u16 = 0x02;
    /// Atomics.
    pub const ATOMIC: u16 = 0x03;
    /// RoCE.
    pub const ROCE: u16 = 0x04;
    /// IPoIB offloads.
    pub const IPOIB_OFFLOADS: u16 = 0x05;
    /// IPoIB enhanced offloads.
    pub const IPOIB_ENHANCED_OFFLOADS: u16 = 0x06;
    /// NIC flow table.
    pub const FLOW_TABLE: u16 = 0x07;
    /// E-switch flow table.
    pub const ESWITCH_FLOW_TABLE: u16 = 0x08;
    /// E-switch.
    pub const ESWITCH: u16 = 0x09;
    /// QoS.
    pub const QOS: u16 = 0x0c;
    /// Debug.
    pub const DEBUG: u16 = 0x0d;
    /// Device memory.
    pub const DEV_MEM: u16 = 0x0f;
    /// TLS.
    pub const TLS: u16 = 0x11;
    /// vDPA emulation.
    pub const VDPA_EMULATION: u16 = 0x13;
    /// Device events.
    pub const DEV_EVENT: u16 = 0x14;
    /// IPsec.
    pub const IPSEC: u16 = 0x15;
    /// Crypto.
    pub const CRYPTO: u16 = 0x1a;
    /// SHAMPO.
    pub const SHAMPO: u16 = 0x1d;
    /// PSP.
    pub const PSP: u16 = 0x1e;
    /// MACsec.
    pub const MACSEC: u16 = 0x1f;
    /// General caps 2.
    pub const GENERAL_2: u16 = 0x20;
    /// Port selection.
    pub const PORT_SELECTION: u16 = 0x25;
    /// Advanced virtualization.
    pub const ADV_VIRTUALIZATION: u16 = 0x26;
    /// Advanced RDMA.
    pub const ADV_RDMA: u16 = 0x28;
    /// TLP emulation.
    pub const TLP_EMULATION: u16 = 0x2a;
}
