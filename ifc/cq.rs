//! Completion queues: CREATE_CQ, DESTROY_CQ, QUERY_CQ, MODIFY_CQ and the CQ context
//! (`mlx5_ifc.h` `cqc`).

prm_struct! {
    /// `cqc`.
    pub mod cqc / CQC = "cqc", 0x200 {
        STATUS: "status" @ 0x0, 0x4 => u8;
        DBR_UMEM_VALID: "dbr_umem_valid" @ 0x6, 0x1 => bool;
        APU_CQ: "apu_cq" @ 0x7, 0x1 => bool;
        CQE_SZ: "cqe_sz" @ 0x8, 0x3 => u8;
        CC: "cc" @ 0xb, 0x1 => bool;
        SCQE_BREAK_MODERATION_EN: "scqe_break_moderation_en" @ 0xd, 0x1 => bool;
        OI: "oi" @ 0xe, 0x1 => bool;
        CQ_PERIOD_MODE: "cq_period_mode" @ 0xf, 0x2 => u8;
        CQE_COMP_EN: "cqe_comp_en" @ 0x11, 0x1 => bool;
        MINI_CQE_RES_FORMAT: "mini_cqe_res_format" @ 0x12, 0x2 => u8;
        ST: "st" @ 0x14, 0x4 => u8;
        CQE_COMPRESSION_LAYOUT: "cqe_compression_layout" @ 0x1e, 0x2 => u8;
        PAGE_OFFSET: "page_offset" @ 0x54, 0x6 => u8;
        LOG_CQ_SIZE: "log_cq_size" @ 0x63, 0x5 => u8;
        UAR_PAGE: "uar_page" @ 0x68, 0x18 => u32;
        CQ_PERIOD: "cq_period" @ 0x84, 0xc => u16;
        CQ_MAX_COUNT: "cq_max_count" @ 0x90, 0x10 => u16;
        C_EQN_OR_APU_ELEMENT: "c_eqn_or_apu_element" @ 0xa0, 0x20 => u32;
        LOG_PAGE_SIZE: "log_page_size" @ 0xc3, 0x5 => u8;
        LAST_NOTIFIED_INDEX: "last_notified_index" @ 0x108, 0x18 => u32;
        LAST_SOLICIT_INDEX: "last_solicit_index" @ 0x128, 0x18 => u32;
        CONSUMER_COUNTER: "consumer_counter" @ 0x148, 0x18 => u32;
        PRODUCER_COUNTER: "producer_counter" @ 0x168, 0x18 => u32;
        DBR_ADDR: "dbr_addr" @ 0x1c0, 0x40 => u64;
    }
}

prm_struct! {
    /// `create_cq_in`.
    pub mod create_cq_in / CREATE_CQ_IN = "create_cq_in", 0x880 {
        OPCODE: "opcode" @ 0x0, 0x10 => u16;
        UID: "uid" @ 0x10, 0x10 => u16;
        OP_MOD: "op_mod" @ 0x30, 0x10 => u16;
        CQ_CONTEXT: "cq_context" @ 0x80, 0x200 => Bytes;
        CQ_UMEM_VALID: "cq_umem_valid" @ 0x2e0, 0x1 => bool;
        PAS: "pas" @ 0x880, 0x0 => Bytes;
    }
}

prm_struct! {
    /// `create_cq_out`.
    pub mod create_cq_out / CREATE_CQ_OUT = "create_cq_out", 0x80 {
        STATUS: "status" @ 0x0, 0x8 => u8;
        SYNDROME: "syndrome" @ 0x20, 0x20 => u32;
        CQN: "cqn" @ 0x48, 0x18 => u32;
    }
}

prm_struct! {
    /// `destroy_cq_in`.
    pub mod destroy_cq_in / DESTROY_CQ_IN = "destroy_cq_in", 0x80 {
        OPCODE: "opcode" @ 0x0, 0x10 => u16;
        UID: "uid" @ 0x10, 0x10 => u16;
        OP_MOD: "op_mod" @ 0x30, 0x10 => u16;
        CQN: "cqn" @ 0x48, 0x18 => u32;
    }
}

prm_struct! {
    /// `query_cq_in`.
    pub mod query_cq_in / QUERY_CQ_IN = "query_cq_in", 0x80 {
        OPCODE: "opcode" @ 0x0, 0x10 => u16;
        OP_MOD: "op_mod" @ 0x30, 0x10 => u16;
        CQN: "cqn" @ 0x48, 0x18 => u32;
    }
}

prm_struct! {
    /// `query_cq_out`.
    pub mod query_cq_out / QUERY_CQ_OUT = "query_cq_out", 0x880 {
        STATUS: "status" @ 0x0, 0x8 => u8;
        SYNDROME: "syndrome" @ 0x20, 0x20 => u32;
        CQ_CONTEXT: "cq_context" @ 0x80, 0x200 => Bytes;
        PAS: "pas" @ 0x880, 0x0 => Bytes;
    }
}

prm_struct! {
    /// `modify_cq_in`.
    pub mod modify_cq_in / MODIFY_CQ_IN = "modify_cq_in", 0x880 {
        OPCODE: "opcode" @ 0x0, 0x10 => u16;
        UID: "uid" @ 0x10, 0x10 => u16;
        OP_MOD: "op_mod" @ 0x30, 0x10 => u16;
        CQN: "cqn" @ 0x48, 0x18 => u32;
        MODIFY_FIELD_SELECT_RESIZE_FIELD_SELECT: "modify_field_select_resize_field_select" @ 0x60, 0x20 => Bytes;
        CQ_CONTEXT: "cq_context" @ 0x80, 0x200 => Bytes;
        CQ_UMEM_VALID: "cq_umem_valid" @ 0x2e0, 0x1 => bool;
        PAS: "pas" @ 0x880, 0x0 => Bytes;
    }
}
