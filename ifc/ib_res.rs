//! Verbs resources without a context: protection domains, XRC domains, transport
//! domains, queue counters and the special-context mkeys (`mlx5_ifc.h`
//! `alloc_pd_in` … `query_special_contexts_out`).

prm_struct! {
    /// `alloc_pd_in`.
    pub mod alloc_pd_in / ALLOC_PD_IN = "alloc_pd_in", 0x80 {
        OPCODE: "opcode" @ 0x0, 0x10 => u16;
        UID: "uid" @ 0x10, 0x10 => u16;
        OP_MOD: "op_mod" @ 0x30, 0x10 => u16;
    }
}

prm_struct! {
    /// `alloc_pd_out`.
    pub mod alloc_pd_out / ALLOC_PD_OUT = "alloc_pd_out", 0x80 {
        STATUS: "status" @ 0x0, 0x8 => u8;
        SYNDROME: "syndrome" @ 0x20, 0x20 => u32;
        PD: "pd" @ 0x48, 0x18 => u32;
    }
}

prm_struct! {
    /// `dealloc_pd_in`.
    pub mod dealloc_pd_in / DEALLOC_PD_IN = "dealloc_pd_in", 0x80 {
        OPCODE: "opcode" @ 0x0, 0x10 => u16;
        UID: "uid" @ 0x10, 0x10 => u16;
        OP_MOD: "op_mod" @ 0x30, 0x10 => u16;
        PD: "pd" @ 0x48, 0x18 => u32;
    }
}

prm_struct! {
    /// `alloc_xrcd_in`.
    pub mod alloc_xrcd_in / ALLOC_XRCD_IN = "alloc_xrcd_in", 0x80 {
        OPCODE: "opcode" @ 0x0, 0x10 => u16;
        UID: "uid" @ 0x10, 0x10 => u16;
        OP_MOD: "op_mod" @ 0x30, 0x10 => u16;
    }
}

prm_struct! {
    /// `alloc_xrcd_out`.
    pub mod alloc_xrcd_out / ALLOC_XRCD_OUT = "alloc_xrcd_out", 0x80 {
        STATUS: "status" @ 0x0, 0x8 => u8;
        SYNDROME: "syndrome" @ 0x20, 0x20 => u32;
        XRCD: "xrcd" @ 0x48, 0x18 => u32;
    }
}

prm_struct! {
    /// `dealloc_xrcd_in`.
    pub mod dealloc_xrcd_in / DEALLOC_XRCD_IN = "dealloc_xrcd_in", 0x80 {
        OPCODE: "opcode" @ 0x0, 0x10 => u16;
        UID: "uid" @ 0x10, 0x10 => u16;
        OP_MOD: "op_mod" @ 0x30, 0x10 => u16;
        XRCD: "xrcd" @ 0x48, 0x18 => u32;
    }
}

prm_struct! {
    /// `alloc_transport_domain_in`.
    pub mod alloc_transport_domain_in / ALLOC_TRANSPORT_DOMAIN_IN = "alloc_transport_domain_in", 0x80 {
        OPCODE: "opcode" @ 0x0, 0x10 => u16;
        UID: "uid" @ 0x10, 0x10 => u16;
        OP_MOD: "op_mod" @ 0x30, 0x10 => u16;
    }
}

prm_struct! {
    /// `alloc_transport_domain_out`.
    pub mod alloc_transport_domain_out / ALLOC_TRANSPORT_DOMAIN_OUT = "alloc_transport_domain_out", 0x80 {
        STATUS: "status" @ 0x0, 0x8 => u8;
        SYNDROME: "syndrome" @ 0x20, 0x20 => u32;
        TRANSPORT_DOMAIN: "transport_domain" @ 0x48, 0x18 => u32;
    }
}

prm_struct! {
    /// `dealloc_transport_domain_in`.
    pub mod dealloc_transport_domain_in / DEALLOC_TRANSPORT_DOMAIN_IN = "dealloc_transport_domain_in", 0x80 {
        OPCODE: "opcode" @ 0x0, 0x10 => u16;
        UID: "uid" @ 0x10, 0x10 => u16;
        OP_MOD: "op_mod" @ 0x30, 0x10 => u16;
        TRANSPORT_DOMAIN: "transport_domain" @ 0x48, 0x18 => u32;
    }
}

prm_struct! {
    /// `alloc_q_counter_in`.
    pub mod alloc_q_counter_in / ALLOC_Q_COUNTER_IN = "alloc_q_counter_in", 0x80 {
        OPCODE: "opcode" @ 0x0, 0x10 => u16;
        UID: "uid" @ 0x10, 0x10 => u16;
        OP_MOD: "op_mod" @ 0x30, 0x10 => u16;
    }
}

prm_struct! {
    /// `alloc_q_counter_out`.
    pub mod alloc_q_counter_out / ALLOC_Q_COUNTER_OUT = "alloc_q_counter_out", 0x80 {
        STATUS: "status" @ 0x0, 0x8 => u8;
        SYNDROME: "syndrome" @ 0x20, 0x20 => u32;
        COUNTER_SET_ID: "counter_set_id" @ 0x58, 0x8 => u8;
    }
}

prm_struct! {
    /// `dealloc_q_counter_in`.
    pub mod dealloc_q_counter_in / DEALLOC_Q_COUNTER_IN = "dealloc_q_counter_in", 0x80 {
        OPCODE: "opcode" @ 0x0, 0x10 => u16;
        OP_MOD: "op_mod" @ 0x30, 0x10 => u16;
        COUNTER_SET_ID: "counter_set_id" @ 0x58, 0x8 => u8;
    }
}

prm_struct! {
    /// `query_q_counter_in`.
    pub mod query_q_counter_in / QUERY_Q_COUNTER_IN = "query_q_counter_in", 0x100 {
        OPCODE: "opcode" @ 0x0, 0x10 => u16;
        OP_MOD: "op_mod" @ 0x30, 0x10 => u16;
        OTHER_VPORT: "other_vport" @ 0x40, 0x1 => bool;
        VPORT_NUMBER: "vport_number" @ 0x50, 0x10 => u16;
        CLEAR: "clear" @ 0xc0, 0x1 => bool;
        AGGREGATE: "aggregate" @ 0xc1, 0x1 => bool;
        COUNTER_SET_ID: "counter_set_id" @ 0xf8, 0x8 => u8;
    }
}

prm_struct! {
    /// `query_q_counter_out` (the counters we report).
    pub mod query_q_counter_out / QUERY_Q_COUNTER_OUT = "query_q_counter_out", 0x800 {
        STATUS: "status" @ 0x0, 0x8 => u8;
        SYNDROME: "syndrome" @ 0x20, 0x20 => u32;
        RX_WRITE_REQUESTS: "rx_write_requests" @ 0x80, 0x20 => u32;
        RX_READ_REQUESTS: "rx_read_requests" @ 0xc0, 0x20 => u32;
        OUT_OF_BUFFER: "out_of_buffer" @ 0x180, 0x20 => u32;
        OUT_OF_SEQUENCE: "out_of_sequence" @ 0x1c0, 0x20 => u32;
        DUPLICATE_REQUEST: "duplicate_request" @ 0x200, 0x20 => u32;
    }
}

prm_struct! {
    /// `query_special_contexts_in`.
    pub mod query_special_contexts_in / QUERY_SPECIAL_CONTEXTS_IN = "query_special_contexts_in", 0x80 {
        OPCODE: "opcode" @ 0x0, 0x10 => u16;
        OP_MOD: "op_mod" @ 0x30, 0x10 => u16;
    }
}

prm_struct! {
    /// `query_special_contexts_out`.
    pub mod query_special_contexts_out / QUERY_SPECIAL_CONTEXTS_OUT = "query_special_contexts_out", 0x100 {
        STATUS: "status" @ 0x0, 0x8 => u8;
        SYNDROME: "syndrome" @ 0x20, 0x20 => u32;
        DUMP_FILL_MKEY: "dump_fill_mkey" @ 0x40, 0x20 => u32;
        RESD_LKEY: "resd_lkey" @ 0x60, 0x20 => u32;
        NULL_MKEY: "null_mkey" @ 0x80, 0x20 => u32;
        TERMINATE_SCATTER_LIST_MKEY: "terminate_scatter_list_mkey" @ 0xa0, 0x20 => u32;
        REPEATED_MKEY: "repeated_mkey" @ 0xc0, 0x20 => u32;
    }
}
