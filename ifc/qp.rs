//! Queue pairs: CREATE_QP, DESTROY_QP, QUERY_QP, the state-transition commands, the QP
//! context (`mlx5_ifc.h` `qpc`) and its address path (`ads`).

prm_struct! {
    /// `ads`.
    pub mod ads / ADS = "ads", 0x160 {
        FL: "fl" @ 0x0, 0x1 => bool;
        FREE_AR: "free_ar" @ 0x1, 0x1 => bool;
        PKEY_INDEX: "pkey_index" @ 0x10, 0x10 => u16;
        PLANE_INDEX: "plane_index" @ 0x20, 0x8 => u8;
        GRH: "grh" @ 0x28, 0x1 => bool;
        MLID: "mlid" @ 0x29, 0x7 => u8;
        RLID: "rlid" @ 0x30, 0x10 => u16;
        ACK_TIMEOUT: "ack_timeout" @ 0x40, 0x5 => u8;
        SRC_ADDR_INDEX: "src_addr_index" @ 0x48, 0x8 => u8;
        STAT_RATE: "stat_rate" @ 0x54, 0x4 => u8;
        HOP_LIMIT: "hop_limit" @ 0x58, 0x8 => u8;
        TCLASS: "tclass" @ 0x64, 0x8 => u8;
        FLOW_LABEL: "flow_label" @ 0x6c, 0x14 => u32;
        RGID_RIP: "rgid_rip" @ 0x80, 0x80 => Bytes;
        F_DSCP: "f_dscp" @ 0x104, 0x1 => bool;
        F_ECN: "f_ecn" @ 0x105, 0x1 => bool;
        F_ETH_PRIO: "f_eth_prio" @ 0x107, 0x1 => bool;
        ECN: "ecn" @ 0x108, 0x2 => u8;
        DSCP: "dscp" @ 0x10a, 0x6 => u8;
        UDP_SPORT: "udp_sport" @ 0x110, 0x10 => u16;
        DEI_CFI: "dei_cfi" @ 0x120, 0x1 => bool;
        ETH_PRIO: "eth_prio" @ 0x121, 0x3 => u8;
        SL: "sl" @ 0x124, 0x4 => u8;
        VHCA_PORT_NUM: "vhca_port_num" @ 0x128, 0x8 => u8;
        RMAC_47_32: "rmac_47_32" @ 0x130, 0x10 => u16;
        RMAC_31_0: "rmac_31_0" @ 0x140, 0x20 => u32;
    }
}

prm_struct! {
    /// `qpc`.
    pub mod qpc / QPC = "qpc", 0x740 {
        STATE: "state" @ 0x0, 0x4 => u8;
        LAG_TX_PORT_AFFINITY: "lag_tx_port_affinity" @ 0x4, 0x4 => u8;
        ST: "st" @ 0x8, 0x8 => u8;
        ISOLATE_VL_TC: "isolate_vl_tc" @ 0x12, 0x1 => bool;
        PM_STATE: "pm_state" @ 0x13, 0x2 => u8;
        REQ_E2E_CREDIT_MODE: "req_e2e_credit_mode" @ 0x16, 0x2 => u8;
        OFFLOAD_TYPE: "offload_type" @ 0x18, 0x4 => u8;
        END_PADDING_MODE: "end_padding_mode" @ 0x1c, 0x2 => u8;
        WQ_SIGNATURE: "wq_signature" @ 0x20, 0x1 => bool;
        BLOCK_LB_MC: "block_lb_mc" @ 0x21, 0x1 => bool;
        ATOMIC_LIKE_WRITE_EN: "atomic_like_write_en" @ 0x22, 0x1 => bool;
        LATENCY_SENSITIVE: "latency_sensitive" @ 0x23, 0x1 => bool;
        DRAIN_SIGERR: "drain_sigerr" @ 0x25, 0x1 => bool;
        DP_ORDERING_FORCE: "dp_ordering_force" @ 0x27, 0x1 => bool;
        PD: "pd" @ 0x28, 0x18 => u32;
        MTU: "mtu" @ 0x40, 0x3 => u8;
        LOG_MSG_MAX: "log_msg_max" @ 0x43, 0x5 => u8;
        LOG_RQ_SIZE: "log_rq_size" @ 0x49, 0x4 => u8;
        LOG_RQ_STRIDE: "log_rq_stride" @ 0x4d, 0x3 => u8;
        NO_SQ: "no_sq" @ 0x50, 0x1 => bool;
        LOG_SQ_SIZE: "log_sq_size" @ 0x51, 0x4 => u8;
        RETRY_MODE: "retry_mode" @ 0x56, 0x2 => u8;
        TS_FORMAT: "ts_format" @ 0x58, 0x2 => u8;
        RLKY: "rlky" @ 0x5b, 0x1 => bool;
        ULP_STATELESS_OFFLOAD_MODE: "ulp_stateless_offload_mode" @ 0x5c, 0x4 => u8;
        COUNTER_SET_ID: "counter_set_id" @ 0x60, 0x8 => u8;
        UAR_PAGE: "uar_page" @ 0x68, 0x18 => u32;
        USER_INDEX: "user_index" @ 0x88, 0x18 => u32;
        LOG_PAGE_SIZE: "log_page_size" @ 0xa3, 0x5 => u8;
        REMOTE_QPN: "remote_qpn" @ 0xa8, 0x18 => u32;
        PRIMARY_ADDRESS_PATH: "primary_address_path" @ 0xc0, 0x160 => Bytes;
        SECONDARY_ADDRESS_PATH: "secondary_address_path" @ 0x220, 0x160 => Bytes;
        LOG_ACK_REQ_FREQ: "log_ack_req_freq" @ 0x380, 0x4 => u8;
        LOG_SRA_MAX: "log_sra_max" @ 0x388, 0x3 => u8;
        RETRY_COUNT: "retry_count" @ 0x38d, 0x3 => u8;
        RNR_RETRY: "rnr_retry" @ 0x390, 0x3 => u8;
        FRE: "fre" @ 0x394, 0x1 => bool;
        CUR_RNR_RETRY: "cur_rnr_retry" @ 0x395, 0x3 => u8;
        CUR_RETRY_COUNT: "cur_retry_count" @ 0x398, 0x3 => u8;
        PACKET_PACING_RATE_LIMIT_INDEX: "packet_pacing_rate_limit_index" @ 0x3b0, 0x10 => u16;
        NEXT_SEND_PSN: "next_send_psn" @ 0x3c8, 0x18 => u32;
        LOG_NUM_DCI_STREAM_CHANNELS: "log_num_dci_stream_channels" @ 0x3e3, 0x5 => u8;
        CQN_SND: "cqn_snd" @ 0x3e8, 0x18 => u32;
        LOG_NUM_DCI_ERRORED_STREAMS: "log_num_dci_errored_streams" @ 0x403, 0x5 => u8;
        DETH_SQPN: "deth_sqpn" @ 0x408, 0x18 => u32;
        LAST_ACKED_PSN: "last_acked_psn" @ 0x448, 0x18 => u32;
        SSN: "ssn" @ 0x468, 0x18 => u32;
        LOG_RRA_MAX: "log_rra_max" @ 0x488, 0x3 => u8;
        ATOMIC_MODE: "atomic_mode" @ 0x48c, 0x4 => u8;
        RRE: "rre" @ 0x490, 0x1 => bool;
        RWE: "rwe" @ 0x491, 0x1 => bool;
        RAE: "rae" @ 0x492, 0x1 => bool;
        PAGE_OFFSET: "page_offset" @ 0x494, 0x6 => u8;
        DP_ORDERING_1: "dp_ordering_1" @ 0x49c, 0x1 => bool;
        CD_SLAVE_RECEIVE: "cd_slave_receive" @ 0x49d, 0x1 => bool;
        CD_SLAVE_SEND: "cd_slave_send" @ 0x49e, 0x1 => bool;
        CD_MASTER: "cd_master" @ 0x49f, 0x1 => bool;
        MIN_RNR_NAK: "min_rnr_nak" @ 0x4a3, 0x5 => u8;
        NEXT_RCV_PSN: "next_rcv_psn" @ 0x4a8, 0x18 => u32;
        XRCD: "xrcd" @ 0x4c8, 0x18 => u32;
        CQN_RCV: "cqn_rcv" @ 0x4e8, 0x18 => u32;
        DBR_ADDR: "dbr_addr" @ 0x500, 0x40 => u64;
        Q_KEY: "q_key" @ 0x540, 0x20 => u32;
        RQ_TYPE: "rq_type" @ 0x565, 0x3 => u8;
        SRQN_RMPN_XRQN: "srqn_rmpn_xrqn" @ 0x568, 0x18 => u32;
        RMSN: "rmsn" @ 0x588, 0x18 => u32;
        HW_SQ_WQEBB_COUNTER: "hw_sq_wqebb_counter" @ 0x5a0, 0x10 => u16;
        SW_SQ_WQEBB_COUNTER: "sw_sq_wqebb_counter" @ 0x5b0, 0x10 => u16;
        HW_RQ_COUNTER: "hw_rq_counter" @ 0x5c0, 0x20 => u32;
        SW_RQ_COUNTER: "sw_rq_counter" @ 0x5e0, 0x20 => u32;
        CGS: "cgs" @ 0x62f, 0x1 => bool;
        CS_REQ: "cs_req" @ 0x630, 0x8 => u8;
        CS_RES: "cs_res" @ 0x638, 0x8 => u8;
        DC_ACCESS_KEY: "dc_access_key" @ 0x640, 0x40 => u64;
        DBR_UMEM_VALID: "dbr_umem_valid" @ 0x683, 0x1 => bool;
    }
}

prm_struct! {
    /// `create_qp_in`.
    pub mod create_qp_in / CREATE_QP_IN = "create_qp_in", 0x880 {
        OPCODE: "opcode" @ 0x0, 0x10 => u16;
        UID: "uid" @ 0x10, 0x10 => u16;
        OP_MOD: "op_mod" @ 0x30, 0x10 => u16;
        QPC_EXT: "qpc_ext" @ 0x40, 0x1 => bool;
        INPUT_QPN: "input_qpn" @ 0x48, 0x18 => u32;
        OPT_PARAM_MASK: "opt_param_mask" @ 0x80, 0x20 => u32;
        ECE: "ece" @ 0xa0, 0x20 => u32;
        QPC: "qpc" @ 0xc0, 0x740 => Bytes;
        WQ_UMEM_OFFSET: "wq_umem_offset" @ 0x800, 0x40 => u64;
        WQ_UMEM_ID: "wq_umem_id" @ 0x840, 0x20 => u32;
        WQ_UMEM_VALID: "wq_umem_valid" @ 0x860, 0x1 => bool;
        PAS: "pas" @ 0x880, 0x0 => Bytes;
    }
}

prm_struct! {
    /// `create_qp_out`.
    pub mod create_qp_out / CREATE_QP_OUT = "create_qp_out", 0x80 {
        STATUS: "status" @ 0x0, 0x8 => u8;
        SYNDROME: "syndrome" @ 0x20, 0x20 => u32;
        QPN: "qpn" @ 0x48, 0x18 => u32;
        ECE: "ece" @ 0x60, 0x20 => u32;
    }
}

prm_struct! {
    /// `destroy_qp_in`.
    pub mod destroy_qp_in / DESTROY_QP_IN = "destroy_qp_in", 0x80 {
        OPCODE: "opcode" @ 0x0, 0x10 => u16;
        UID: "uid" @ 0x10, 0x10 => u16;
        OP_MOD: "op_mod" @ 0x30, 0x10 => u16;
        QPN: "qpn" @ 0x48, 0x18 => u32;
    }
}

prm_struct! {
    /// `query_qp_in`.
    pub mod query_qp_in / QUERY_QP_IN = "query_qp_in", 0x80 {
        OPCODE: "opcode" @ 0x0, 0x10 => u16;
        OP_MOD: "op_mod" @ 0x30, 0x10 => u16;
        QPC_EXT: "qpc_ext" @ 0x40, 0x1 => bool;
        QPN: "qpn" @ 0x48, 0x18 => u32;
    }
}

prm_struct! {
    /// `query_qp_out`.
    pub mod query_qp_out / QUERY_QP_OUT = "query_qp_out", 0xe80 {
        STATUS: "status" @ 0x0, 0x8 => u8;
        SYNDROME: "syndrome" @ 0x20, 0x20 => u32;
        OPT_PARAM_MASK: "opt_param_mask" @ 0x80, 0x20 => u32;
        ECE: "ece" @ 0xa0, 0x20 => u32;
        QPC: "qpc" @ 0xc0, 0x740 => Bytes;
        QP_PAS_OR_QPC_EXT_AND_PAS: "qp_pas_or_qpc_ext_and_pas" @ 0x880, 0x600 => Bytes;
    }
}

prm_struct! {
    /// `rst2init_qp_in`.
    pub mod rst2init_qp_in / RST2INIT_QP_IN = "rst2init_qp_in", 0x880 {
        OPCODE: "opcode" @ 0x0, 0x10 => u16;
        UID: "uid" @ 0x10, 0x10 => u16;
        OP_MOD: "op_mod" @ 0x30, 0x10 => u16;
        QPN: "qpn" @ 0x48, 0x18 => u32;
        OPT_PARAM_MASK: "opt_param_mask" @ 0x80, 0x20 => u32;
        ECE: "ece" @ 0xa0, 0x20 => u32;
        QPC: "qpc" @ 0xc0, 0x740 => Bytes;
    }
}

prm_struct! {
    /// `init2init_qp_in`.
    pub mod init2init_qp_in / INIT2INIT_QP_IN = "init2init_qp_in", 0x880 {
        OPCODE: "opcode" @ 0x0, 0x10 => u16;
        UID: "uid" @ 0x10, 0x10 => u16;
        OP_MOD: "op_mod" @ 0x30, 0x10 => u16;
        QPN: "qpn" @ 0x48, 0x18 => u32;
        OPT_PARAM_MASK: "opt_param_mask" @ 0x80, 0x20 => u32;
        ECE: "ece" @ 0xa0, 0x20 => u32;
        QPC: "qpc" @ 0xc0, 0x740 => Bytes;
    }
}

prm_struct! {
    /// `init2rtr_qp_in`.
    pub mod init2rtr_qp_in / INIT2RTR_QP_IN = "init2rtr_qp_in", 0x880 {
        OPCODE: "opcode" @ 0x0, 0x10 => u16;
        UID: "uid" @ 0x10, 0x10 => u16;
        OP_MOD: "op_mod" @ 0x30, 0x10 => u16;
        QPN: "qpn" @ 0x48, 0x18 => u32;
        OPT_PARAM_MASK: "opt_param_mask" @ 0x80, 0x20 => u32;
        ECE: "ece" @ 0xa0, 0x20 => u32;
        QPC: "qpc" @ 0xc0, 0x740 => Bytes;
    }
}

prm_struct! {
    /// `rtr2rts_qp_in`.
    pub mod rtr2rts_qp_in / RTR2RTS_QP_IN = "rtr2rts_qp_in", 0x880 {
        OPCODE: "opcode" @ 0x0, 0x10 => u16;
        UID: "uid" @ 0x10, 0x10 => u16;
        OP_MOD: "op_mod" @ 0x30, 0x10 => u16;
        QPN: "qpn" @ 0x48, 0x18 => u32;
        OPT_PARAM_MASK: "opt_param_mask" @ 0x80, 0x20 => u32;
        ECE: "ece" @ 0xa0, 0x20 => u32;
        QPC: "qpc" @ 0xc0, 0x740 => Bytes;
    }
}

prm_struct! {
    /// `rts2rts_qp_in`.
    pub mod rts2rts_qp_in / RTS2RTS_QP_IN = "rts2rts_qp_in", 0x880 {
        OPCODE: "opcode" @ 0x0, 0x10 => u16;
        UID: "uid" @ 0x10, 0x10 => u16;
        OP_MOD: "op_mod" @ 0x30, 0x10 => u16;
        QPN: "qpn" @ 0x48, 0x18 => u32;
        OPT_PARAM_MASK: "opt_param_mask" @ 0x80, 0x20 => u32;
        ECE: "ece" @ 0xa0, 0x20 => u32;
        QPC: "qpc" @ 0xc0, 0x740 => Bytes;
    }
}

prm_struct! {
    /// `sqerr2rts_qp_in`.
    pub mod sqerr2rts_qp_in / SQERR2RTS_QP_IN = "sqerr2rts_qp_in", 0x880 {
        OPCODE: "opcode" @ 0x0, 0x10 => u16;
        UID: "uid" @ 0x10, 0x10 => u16;
        OP_MOD: "op_mod" @ 0x30, 0x10 => u16;
        QPN: "qpn" @ 0x48, 0x18 => u32;
        OPT_PARAM_MASK: "opt_param_mask" @ 0x80, 0x20 => u32;
        QPC: "qpc" @ 0xc0, 0x740 => Bytes;
    }
}

prm_struct! {
    /// `sqd2rts_qp_in`.
    pub mod sqd2rts_qp_in / SQD2RTS_QP_IN = "sqd2rts_qp_in", 0x880 {
        OPCODE: "opcode" @ 0x0, 0x10 => u16;
        UID: "uid" @ 0x10, 0x10 => u16;
        OP_MOD: "op_mod" @ 0x30, 0x10 => u16;
        QPN: "qpn" @ 0x48, 0x18 => u32;
        OPT_PARAM_MASK: "opt_param_mask" @ 0x80, 0x20 => u32;
        QPC: "qpc" @ 0xc0, 0x740 => Bytes;
    }
}

prm_struct! {
    /// `qp_2err_in`.
    pub mod qp_2err_in / QP_2ERR_IN = "qp_2err_in", 0x80 {
        OPCODE: "opcode" @ 0x0, 0x10 => u16;
        UID: "uid" @ 0x10, 0x10 => u16;
        OP_MOD: "op_mod" @ 0x30, 0x10 => u16;
        QPN: "qpn" @ 0x48, 0x18 => u32;
    }
}

prm_struct! {
    /// `qp_2rst_in`.
    pub mod qp_2rst_in / QP_2RST_IN = "qp_2rst_in", 0x80 {
        OPCODE: "opcode" @ 0x0, 0x10 => u16;
        UID: "uid" @ 0x10, 0x10 => u16;
        OP_MOD: "op_mod" @ 0x30, 0x10 => u16;
        QPN: "qpn" @ 0x48, 0x18 => u32;
    }
}
