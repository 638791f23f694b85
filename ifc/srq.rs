//! Shared receive queues: SRQ, XRC SRQ and RMP commands and their contexts
//! (`mlx5_ifc.h` `srqc`, `xrc_srqc`, `rmpc` with its `wq`).

prm_struct! {
    /// `srqc`.
    pub mod srqc / SRQC = "srqc", 0x200 {
        STATE: "state" @ 0x0, 0x4 => u8;
        LOG_SRQ_SIZE: "log_srq_size" @ 0x4, 0x4 => u8;
        WQ_SIGNATURE: "wq_signature" @ 0x20, 0x1 => bool;
        CONT_SRQ: "cont_srq" @ 0x21, 0x1 => bool;
        RLKY: "rlky" @ 0x23, 0x1 => bool;
        LOG_RQ_STRIDE: "log_rq_stride" @ 0x25, 0x3 => u8;
        XRCD: "xrcd" @ 0x28, 0x18 => u32;
        PAGE_OFFSET: "page_offset" @ 0x40, 0x6 => u8;
        CQN: "cqn" @ 0x48, 0x18 => u32;
        LOG_PAGE_SIZE: "log_page_size" @ 0x82, 0x6 => u8;
        PD: "pd" @ 0xc8, 0x18 => u32;
        LWM: "lwm" @ 0xe0, 0x10 => u16;
        WQE_CNT: "wqe_cnt" @ 0xf0, 0x10 => u16;
        DBR_ADDR: "dbr_addr" @ 0x140, 0x40 => u64;
    }
}

prm_struct! {
    /// `create_srq_in`.
    pub mod create_srq_in / CREATE_SRQ_IN = "create_srq_in", 0x880 {
        OPCODE: "opcode" @ 0x0, 0x10 => u16;
        UID: "uid" @ 0x10, 0x10 => u16;
        OP_MOD: "op_mod" @ 0x30, 0x10 => u16;
        SRQ_CONTEXT_ENTRY: "srq_context_entry" @ 0x80, 0x200 => Bytes;
        PAS: "pas" @ 0x880, 0x0 => Bytes;
    }
}

prm_struct! {
    /// `create_srq_out`.
    pub mod create_srq_out / CREATE_SRQ_OUT = "create_srq_out", 0x80 {
        STATUS: "status" @ 0x0, 0x8 => u8;
        SYNDROME: "syndrome" @ 0x20, 0x20 => u32;
        SRQN: "srqn" @ 0x48, 0x18 => u32;
    }
}

prm_struct! {
    /// `destroy_srq_in`.
    pub mod destroy_srq_in / DESTROY_SRQ_IN = "destroy_srq_in", 0x80 {
        OPCODE: "opcode" @ 0x0, 0x10 => u16;
        UID: "uid" @ 0x10, 0x10 => u16;
        OP_MOD: "op_mod" @ 0x30, 0x10 => u16;
        SRQN: "srqn" @ 0x48, 0x18 => u32;
    }
}

prm_struct! {
    /// `query_srq_in`.
    pub mod query_srq_in / QUERY_SRQ_IN = "query_srq_in", 0x80 {
        OPCODE: "opcode" @ 0x0, 0x10 => u16;
        OP_MOD: "op_mod" @ 0x30, 0x10 => u16;
        SRQN: "srqn" @ 0x48, 0x18 => u32;
    }
}

prm_struct! {
    /// `query_srq_out`.
    pub mod query_srq_out / QUERY_SRQ_OUT = "query_srq_out", 0x880 {
        STATUS: "status" @ 0x0, 0x8 => u8;
        SYNDROME: "syndrome" @ 0x20, 0x20 => u32;
        SRQ_CONTEXT_ENTRY: "srq_context_entry" @ 0x80, 0x200 => Bytes;
        PAS: "pas" @ 0x880, 0x0 => Bytes;
    }
}

prm_struct! {
    /// `arm_rq_in`.
    pub mod arm_rq_in / ARM_RQ_IN = "arm_rq_in", 0x80 {
        OPCODE: "opcode" @ 0x0, 0x10 => u16;
        UID: "uid" @ 0x10, 0x10 => u16;
        OP_MOD: "op_mod" @ 0x30, 0x10 => u16;
        SRQ_NUMBER: "srq_number" @ 0x48, 0x18 => u32;
        LWM: "lwm" @ 0x70, 0x10 => u16;
    }
}

prm_struct! {
    /// `xrc_srqc`.
    pub mod xrc_srqc / XRC_SRQC = "xrc_srqc", 0x200 {
        STATE: "state" @ 0x0, 0x4 => u8;
        LOG_XRC_SRQ_SIZE: "log_xrc_srq_size" @ 0x4, 0x4 => u8;
        WQ_SIGNATURE: "wq_signature" @ 0x20, 0x1 => bool;
        CONT_SRQ: "cont_srq" @ 0x21, 0x1 => bool;
        RLKY: "rlky" @ 0x23, 0x1 => bool;
        BASIC_CYCLIC_RCV_WQE: "basic_cyclic_rcv_wqe" @ 0x24, 0x1 => bool;
        LOG_RQ_STRIDE: "log_rq_stride" @ 0x25, 0x3 => u8;
        XRCD: "xrcd" @ 0x28, 0x18 => u32;
        PAGE_OFFSET: "page_offset" @ 0x40, 0x6 => u8;
        DBR_UMEM_VALID: "dbr_umem_valid" @ 0x47, 0x1 => bool;
        CQN: "cqn" @ 0x48, 0x18 => u32;
        USER_INDEX_EQUAL_XRC_SRQN: "user_index_equal_xrc_srqn" @ 0x80, 0x1 => bool;
        LOG_PAGE_SIZE: "log_page_size" @ 0x82, 0x6 => u8;
        USER_INDEX: "user_index" @ 0x88, 0x18 => u32;
        PD: "pd" @ 0xc8, 0x18 => u32;
        LWM: "lwm" @ 0xe0, 0x10 => u16;
        WQE_CNT: "wqe_cnt" @ 0xf0, 0x10 => u16;
        DB_RECORD_ADDR_H: "db_record_addr_h" @ 0x140, 0x20 => u32;
        DB_RECORD_ADDR_L: "db_record_addr_l" @ 0x160, 0x1e => u32;
    }
}

prm_struct! {
    /// `create_xrc_srq_in`.
    pub mod create_xrc_srq_in / CREATE_XRC_SRQ_IN = "create_xrc_srq_in", 0x880 {
        OPCODE: "opcode" @ 0x0, 0x10 => u16;
        UID: "uid" @ 0x10, 0x10 => u16;
        OP_MOD: "op_mod" @ 0x30, 0x10 => u16;
        XRC_SRQ_CONTEXT_ENTRY: "xrc_srq_context_entry" @ 0x80, 0x200 => Bytes;
        XRC_SRQ_UMEM_VALID: "xrc_srq_umem_valid" @ 0x2e0, 0x1 => bool;
        PAS: "pas" @ 0x880, 0x0 => Bytes;
    }
}

prm_struct! {
    /// `create_xrc_srq_out`.
    pub mod create_xrc_srq_out / CREATE_XRC_SRQ_OUT = "create_xrc_srq_out", 0x80 {
        STATUS: "status" @ 0x0, 0x8 => u8;
        SYNDROME: "syndrome" @ 0x20, 0x20 => u32;
        XRC_SRQN: "xrc_srqn" @ 0x48, 0x18 => u32;
    }
}

prm_struct! {
    /// `destroy_xrc_srq_in`.
    pub mod destroy_xrc_srq_in / DESTROY_XRC_SRQ_IN = "destroy_xrc_srq_in", 0x80 {
        OPCODE: "opcode" @ 0x0, 0x10 => u16;
        UID: "uid" @ 0x10, 0x10 => u16;
        OP_MOD: "op_mod" @ 0x30, 0x10 => u16;
        XRC_SRQN: "xrc_srqn" @ 0x48, 0x18 => u32;
    }
}

prm_struct! {
    /// `query_xrc_srq_in`.
    pub mod query_xrc_srq_in / QUERY_XRC_SRQ_IN = "query_xrc_srq_in", 0x80 {
        OPCODE: "opcode" @ 0x0, 0x10 => u16;
        OP_MOD: "op_mod" @ 0x30, 0x10 => u16;
        XRC_SRQN: "xrc_srqn" @ 0x48, 0x18 => u32;
    }
}

prm_struct! {
    /// `query_xrc_srq_out`.
    pub mod query_xrc_srq_out / QUERY_XRC_SRQ_OUT = "query_xrc_srq_out", 0x880 {
        STATUS: "status" @ 0x0, 0x8 => u8;
        SYNDROME: "syndrome" @ 0x20, 0x20 => u32;
        XRC_SRQ_CONTEXT_ENTRY: "xrc_srq_context_entry" @ 0x80, 0x200 => Bytes;
        PAS: "pas" @ 0x880, 0x0 => Bytes;
    }
}

prm_struct! {
    /// `arm_xrc_srq_in`.
    pub mod arm_xrc_srq_in / ARM_XRC_SRQ_IN = "arm_xrc_srq_in", 0x80 {
        OPCODE: "opcode" @ 0x0, 0x10 => u16;
        UID: "uid" @ 0x10, 0x10 => u16;
        OP_MOD: "op_mod" @ 0x30, 0x10 => u16;
        XRC_SRQN: "xrc_srqn" @ 0x48, 0x18 => u32;
        LWM: "lwm" @ 0x70, 0x10 => u16;
    }
}

prm_struct! {
    /// `wq`.
    pub mod wq / WQ = "wq", 0x600 {
        WQ_TYPE: "wq_type" @ 0x0, 0x4 => u8;
        WQ_SIGNATURE: "wq_signature" @ 0x4, 0x1 => bool;
        END_PADDING_MODE: "end_padding_mode" @ 0x5, 0x2 => u8;
        CD_SLAVE: "cd_slave" @ 0x7, 0x1 => bool;
        HDS_SKIP_FIRST_SGE: "hds_skip_first_sge" @ 0x20, 0x1 => bool;
        LOG2_HDS_BUF_SIZE: "log2_hds_buf_size" @ 0x21, 0x3 => u8;
        PAGE_OFFSET: "page_offset" @ 0x2b, 0x5 => u8;
        LWM: "lwm" @ 0x30, 0x10 => u16;
        PD: "pd" @ 0x48, 0x18 => u32;
        UAR_PAGE: "uar_page" @ 0x68, 0x18 => u32;
        DBR_ADDR: "dbr_addr" @ 0x80, 0x40 => u64;
        HW_COUNTER: "hw_counter" @ 0xc0, 0x20 => u32;
        SW_COUNTER: "sw_counter" @ 0xe0, 0x20 => u32;
        LOG_WQ_STRIDE: "log_wq_stride" @ 0x10c, 0x4 => u8;
        LOG_WQ_PG_SZ: "log_wq_pg_sz" @ 0x113, 0x5 => u8;
        LOG_WQ_SZ: "log_wq_sz" @ 0x11b, 0x5 => u8;
        DBR_UMEM_VALID: "dbr_umem_valid" @ 0x120, 0x1 => bool;
        WQ_UMEM_VALID: "wq_umem_valid" @ 0x121, 0x1 => bool;
        LOG_HAIRPIN_NUM_PACKETS: "log_hairpin_num_packets" @ 0x123, 0x5 => u8;
        LOG_HAIRPIN_DATA_SZ: "log_hairpin_data_sz" @ 0x12b, 0x5 => u8;
        LOG_WQE_NUM_OF_STRIDES: "log_wqe_num_of_strides" @ 0x134, 0x4 => u8;
        TWO_BYTE_SHIFT_EN: "two_byte_shift_en" @ 0x138, 0x1 => bool;
        LOG_WQE_STRIDE_SIZE: "log_wqe_stride_size" @ 0x13d, 0x3 => u8;
        DBR_UMEM_ID: "dbr_umem_id" @ 0x140, 0x20 => u32;
        WQ_UMEM_ID: "wq_umem_id" @ 0x160, 0x20 => u32;
        WQ_UMEM_OFFSET: "wq_umem_offset" @ 0x180, 0x40 => u64;
        HEADERS_MKEY: "headers_mkey" @ 0x1c0, 0x20 => u32;
        SHAMPO_ENABLE: "shampo_enable" @ 0x1e0, 0x1 => bool;
        SHAMPO_MODE: "shampo_mode" @ 0x1e2, 0x2 => u8;
        LOG_RESERVATION_SIZE: "log_reservation_size" @ 0x1e5, 0x3 => u8;
        LOG_MAX_NUM_OF_PACKETS_PER_RESERVATION: "log_max_num_of_packets_per_reservation" @ 0x1ed, 0x3 => u8;
        LOG_HEADERS_ENTRY_SIZE: "log_headers_entry_size" @ 0x1f6, 0x2 => u8;
        LOG_HEADERS_BUFFER_ENTRY_NUM: "log_headers_buffer_entry_num" @ 0x1fc, 0x4 => u8;
        PAS: "pas" @ 0x600, 0x0 => Bytes;
    }
}

prm_struct! {
    /// `rmpc`.
    pub mod rmpc / RMPC = "rmpc", 0x780 {
        STATE: "state" @ 0x8, 0x4 => u8;
        BASIC_CYCLIC_RCV_WQE: "basic_cyclic_rcv_wqe" @ 0x20, 0x1 => bool;
        WQ: "wq" @ 0x180, 0x600 => Bytes;
    }
}

prm_struct! {
    /// `create_rmp_in`.
    pub mod create_rmp_in / CREATE_RMP_IN = "create_rmp_in", 0x880 {
        OPCODE: "opcode" @ 0x0, 0x10 => u16;
        UID: "uid" @ 0x10, 0x10 => u16;
        OP_MOD: "op_mod" @ 0x30, 0x10 => u16;
        CTX: "ctx" @ 0x100, 0x780 => Bytes;
        /// The page list after the context (`rmpc.wq.pas`, flexible).
        WQ_PAS: "ctx.wq.pas" @ 0x880, 0x0 => Bytes;
    }
}

prm_struct! {
    /// `create_rmp_out`.
    pub mod create_rmp_out / CREATE_RMP_OUT = "create_rmp_out", 0x80 {
        STATUS: "status" @ 0x0, 0x8 => u8;
        SYNDROME: "syndrome" @ 0x20, 0x20 => u32;
        RMPN: "rmpn" @ 0x48, 0x18 => u32;
    }
}

prm_struct! {
    /// `destroy_rmp_in`.
    pub mod destroy_rmp_in / DESTROY_RMP_IN = "destroy_rmp_in", 0x80 {
        OPCODE: "opcode" @ 0x0, 0x10 => u16;
        UID: "uid" @ 0x10, 0x10 => u16;
        OP_MOD: "op_mod" @ 0x30, 0x10 => u16;
        RMPN: "rmpn" @ 0x48, 0x18 => u32;
    }
}

prm_struct! {
    /// `query_rmp_in`.
    pub mod query_rmp_in / QUERY_RMP_IN = "query_rmp_in", 0x80 {
        OPCODE: "opcode" @ 0x0, 0x10 => u16;
        OP_MOD: "op_mod" @ 0x30, 0x10 => u16;
        RMPN: "rmpn" @ 0x48, 0x18 => u32;
    }
}

prm_struct! {
    /// `query_rmp_out`.
    pub mod query_rmp_out / QUERY_RMP_OUT = "query_rmp_out", 0x880 {
        STATUS: "status" @ 0x0, 0x8 => u8;
        SYNDROME: "syndrome" @ 0x20, 0x20 => u32;
        RMP_CONTEXT: "rmp_context" @ 0x100, 0x780 => Bytes;
    }
}

prm_struct! {
    /// `modify_rmp_in`.
    pub mod modify_rmp_in / MODIFY_RMP_IN = "modify_rmp_in", 0x880 {
        OPCODE: "opcode" @ 0x0, 0x10 => u16;
        UID: "uid" @ 0x10, 0x10 => u16;
        OP_MOD: "op_mod" @ 0x30, 0x10 => u16;
        RMP_STATE: "rmp_state" @ 0x40, 0x4 => u8;
        RMPN: "rmpn" @ 0x48, 0x18 => u32;
        BITMASK: "bitmask" @ 0x80, 0x40 => Bytes;
        CTX: "ctx" @ 0x100, 0x780 => Bytes;
    }
}

prm_struct! {
    /// `rmp_bitmask`: which `rmpc` fields MODIFY_RMP changes.
    pub mod rmp_bitmask / RMP_BITMASK = "rmp_bitmask", 0x40 {
        LWM: "lwm" @ 0x3f, 0x1 => bool;
    }
}

/// `rmpc.state` of a ready RMP (`mlx5_ifc.h` `MLX5_RMPC_STATE_RDY`).
#[cfg_attr(
    all(CONFIG_RUST, not(CONFIG_MLX5_RS_INFINIBAND)),
    expect(dead_code, reason = "used by the InfiniBand provider only")
)]
pub const RMPC_STATE_RDY: u8 = 0x1;
/// `xrc_srqc.state` / `srqc.state` of a good queue (`MLX5_XRC_SRQC_STATE_GOOD`).
#[cfg_attr(
    all(CONFIG_RUST, not(CONFIG_MLX5_RS_INFINIBAND)),
    expect(dead_code, reason = "used by the InfiniBand provider only")
)]
pub const SRQC_STATE_GOOD: u8 = 0x0;
/// ARM_XRC_SRQ op_mod of an XRC SRQ (`MLX5_ARM_XRC_SRQ_IN_OP_MOD_XRC_SRQ`).
#[cfg_attr(
    all(CONFIG_RUST, not(CONFIG_MLX5_RS_INFINIBAND)),
    expect(dead_code, reason = "used by the InfiniBand provider only")
)]
pub const ARM_XRC_SRQ_OP_MOD_XRC_SRQ: u16 = 0x1;
