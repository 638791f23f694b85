//! Memory keys: CREATE_MKEY, DESTROY_MKEY, QUERY_MKEY and the mkey context
//! (`mlx5_ifc.h` `mkc`).

prm_struct! {
    /// `mkc`.
    pub mod mkc / MKC = "mkc", 0x200 {
        FREE: "free" @ 0x1, 0x1 => bool;
        ACCESS_MODE_4_2: "access_mode_4_2" @ 0x3, 0x3 => u8;
        RELAXED_ORDERING_WRITE: "relaxed_ordering_write" @ 0xd, 0x1 => bool;
        SMALL_FENCE_ON_RDMA_READ_RESPONSE: "small_fence_on_rdma_read_response" @ 0xf, 0x1 => bool;
        UMR_EN: "umr_en" @ 0x10, 0x1 => bool;
        A: "a" @ 0x11, 0x1 => bool;
        RW: "rw" @ 0x12, 0x1 => bool;
        RR: "rr" @ 0x13, 0x1 => bool;
        LW: "lw" @ 0x14, 0x1 => bool;
        LR: "lr" @ 0x15, 0x1 => bool;
        ACCESS_MODE_1_0: "access_mode_1_0" @ 0x16, 0x2 => u8;
        MA_TRANSLATION_MODE: "ma_translation_mode" @ 0x1a, 0x2 => u8;
        QPN: "qpn" @ 0x20, 0x18 => u32;
        MKEY_7_0: "mkey_7_0" @ 0x38, 0x8 => u8;
        LENGTH64: "length64" @ 0x60, 0x1 => bool;
        BSF_EN: "bsf_en" @ 0x61, 0x1 => bool;
        SYNC_UMR: "sync_umr" @ 0x62, 0x1 => bool;
        EXPECTED_SIGERR_COUNT: "expected_sigerr_count" @ 0x65, 0x1 => bool;
        EN_RINVAL: "en_rinval" @ 0x67, 0x1 => bool;
        PD: "pd" @ 0x68, 0x18 => u32;
        START_ADDR: "start_addr" @ 0x80, 0x40 => u64;
        LEN: "len" @ 0xc0, 0x40 => u64;
        BSF_OCTWORD_SIZE: "bsf_octword_size" @ 0x100, 0x20 => u32;
        CROSSING_TARGET_VHCA_ID: "crossing_target_vhca_id" @ 0x180, 0x10 => u16;
        TRANSLATIONS_OCTWORD_SIZE: "translations_octword_size" @ 0x1a0, 0x20 => u32;
        RELAXED_ORDERING_READ: "relaxed_ordering_read" @ 0x1d9, 0x1 => bool;
        LOG_PAGE_SIZE: "log_page_size" @ 0x1da, 0x6 => u8;
        PCIE_TPH_EN: "pcie_tph_en" @ 0x1e5, 0x1 => bool;
        PCIE_TPH_PH: "pcie_tph_ph" @ 0x1e6, 0x2 => u8;
        PCIE_TPH_STEERING_TAG_INDEX: "pcie_tph_steering_tag_index" @ 0x1e8, 0x8 => u8;
    }
}

prm_struct! {
    /// `create_mkey_in`.
    pub mod create_mkey_in / CREATE_MKEY_IN = "create_mkey_in", 0x880 {
        OPCODE: "opcode" @ 0x0, 0x10 => u16;
        UID: "uid" @ 0x10, 0x10 => u16;
        OP_MOD: "op_mod" @ 0x30, 0x10 => u16;
        PG_ACCESS: "pg_access" @ 0x60, 0x1 => bool;
        MKEY_UMEM_VALID: "mkey_umem_valid" @ 0x61, 0x1 => bool;
        DATA_DIRECT: "data_direct" @ 0x62, 0x1 => bool;
        MEMORY_KEY_MKEY_ENTRY: "memory_key_mkey_entry" @ 0x80, 0x200 => Bytes;
        TRANSLATIONS_OCTWORD_ACTUAL_SIZE: "translations_octword_actual_size" @ 0x300, 0x20 => u32;
        KLM_PAS_MTT: "klm_pas_mtt" @ 0x880, 0x0 => Bytes;
    }
}

prm_struct! {
    /// `create_mkey_out`.
    pub mod create_mkey_out / CREATE_MKEY_OUT = "create_mkey_out", 0x80 {
        STATUS: "status" @ 0x0, 0x8 => u8;
        SYNDROME: "syndrome" @ 0x20, 0x20 => u32;
        MKEY_INDEX: "mkey_index" @ 0x48, 0x18 => u32;
    }
}

prm_struct! {
    /// `destroy_mkey_in`.
    pub mod destroy_mkey_in / DESTROY_MKEY_IN = "destroy_mkey_in", 0x80 {
        OPCODE: "opcode" @ 0x0, 0x10 => u16;
        UID: "uid" @ 0x10, 0x10 => u16;
        OP_MOD: "op_mod" @ 0x30, 0x10 => u16;
        MKEY_INDEX: "mkey_index" @ 0x48, 0x18 => u32;
    }
}

prm_struct! {
    /// `query_mkey_in`.
    pub mod query_mkey_in / QUERY_MKEY_IN = "query_mkey_in", 0x80 {
        OPCODE: "opcode" @ 0x0, 0x10 => u16;
        OP_MOD: "op_mod" @ 0x30, 0x10 => u16;
        MKEY_INDEX: "mkey_index" @ 0x48, 0x18 => u32;
        PG_ACCESS: "pg_access" @ 0x60, 0x1 => bool;
    }
}

prm_struct! {
    /// `query_mkey_out`.
    pub mod query_mkey_out / QUERY_MKEY_OUT = "query_mkey_out", 0x980 {
        STATUS: "status" @ 0x0, 0x8 => u8;
        SYNDROME: "syndrome" @ 0x20, 0x20 => u32;
        MEMORY_KEY_MKEY_ENTRY: "memory_key_mkey_entry" @ 0x80, 0x200 => Bytes;
        BSF0_KLM0_PAS_MTT0_1: "bsf0_klm0_pas_mtt0_1" @ 0x880, 0x80 => Bytes;
        BSF1_KLM1_PAS_MTT2_3: "bsf1_klm1_pas_mtt2_3" @ 0x900, 0x80 => Bytes;
    }
}
