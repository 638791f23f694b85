//! HCA capabilities: QUERY_HCA_CAP / SET_HCA_CAP and the capability structures.
//!
//! The capability area is 4096 bytes at byte 0x10 of the QUERY output and SET input;
//! each cap structure we model (general, general 2, RoCE, atomic) is 256 bytes at its
//! start. Field tables are those of `mlx5_ifc.h`.

/// Size of the capability union in bytes.
#[cfg_attr(CONFIG_RUST, expect(dead_code, reason = "used by the emulator"))]
pub const CAP_UNION_BYTES: usize = 4096;
/// Byte offset of the capability area in QUERY_HCA_CAP output / SET_HCA_CAP input.
#[cfg_attr(
    CONFIG_RUST,
    expect(dead_code, reason = "used by the emulator and the host tests")
)]
pub const CAP_OFFSET: usize = query_hca_cap_out::CAPABILITY.raw().byte_off();

prm_struct! {
    /// QUERY_HCA_CAP input.
    pub mod query_hca_cap_in / QUERY_HCA_CAP_IN = "query_hca_cap_in", 0x80 {
        OPCODE: "opcode" @ 0x0, 0x10 => u16;
        OP_MOD: "op_mod" @ 0x30, 0x10 => u16;
        OTHER_FUNCTION: "other_function" @ 0x40, 0x1 => bool;
        EC_VF_FUNCTION: "ec_vf_function" @ 0x41, 0x1 => bool;
        FUNCTION_ID_TYPE: "function_id_type" @ 0x43, 0x1 => bool;
        FUNCTION_ID: "function_id" @ 0x50, 0x10 => u16;
    }
}

prm_struct! {
    /// QUERY_HCA_CAP output.
    pub mod query_hca_cap_out / QUERY_HCA_CAP_OUT = "query_hca_cap_out", 0x8080 {
        STATUS: "status" @ 0x0, 0x8 => u8;
        SYNDROME: "syndrome" @ 0x20, 0x20 => u32;
        CAPABILITY: "capability" @ 0x80, 0x8000 => Bytes;
    }
}

prm_struct! {
    /// SET_HCA_CAP input.
    pub mod set_hca_cap_in / SET_HCA_CAP_IN = "set_hca_cap_in", 0x8080 {
        OPCODE: "opcode" @ 0x0, 0x10 => u16;
        OP_MOD: "op_mod" @ 0x30, 0x10 => u16;
        OTHER_FUNCTION: "other_function" @ 0x40, 0x1 => bool;
        FUNCTION_ID: "function_id" @ 0x50, 0x10 => u16;
        CAPABILITY: "capability" @ 0x80, 0x8000 => Bytes;
    }
}

prm_struct! {
    /// `cmd_hca_cap` (GENERAL capability), every named field.
    pub mod cmd_hca_cap / CMD_HCA_CAP = "cmd_hca_cap", 0x800 {
        PAGE_REQUEST_DISABLE: "page_request_disable" @ 0x6, 0x1 => bool;
        ABS_NATIVE_PORT_NUM: "abs_native_port_num" @ 0x7, 0x1 => bool;
        SHARED_OBJECT_TO_USER_OBJECT_ALLOWED: "shared_object_to_user_object_allowed" @ 0x10, 0x1 => bool;
        VHCA_RESOURCE_MANAGER: "vhca_resource_manager" @ 0x1f, 0x1 => bool;
        HCA_CAP_2: "hca_cap_2" @ 0x20, 0x1 => bool;
        CREATE_LAG_WHEN_NOT_MASTER_UP: "create_lag_when_not_master_up" @ 0x21, 0x1 => bool;
        DTOR: "dtor" @ 0x22, 0x1 => bool;
        EVENT_ON_VHCA_STATE_TEARDOWN_REQUEST: "event_on_vhca_state_teardown_request" @ 0x23, 0x1 => bool;
        EVENT_ON_VHCA_STATE_IN_USE: "event_on_vhca_state_in_use" @ 0x24, 0x1 => bool;
        EVENT_ON_VHCA_STATE_ACTIVE: "event_on_vhca_state_active" @ 0x25, 0x1 => bool;
        EVENT_ON_VHCA_STATE_ALLOCATED: "event_on_vhca_state_allocated" @ 0x26, 0x1 => bool;
        EVENT_ON_VHCA_STATE_INVALID: "event_on_vhca_state_invalid" @ 0x27, 0x1 => bool;
        VHCA_ID: "vhca_id" @ 0x30, 0x10 => u16;
        LOG_MAX_SRQ_SZ: "log_max_srq_sz" @ 0x80, 0x8 => u8;
        LOG_MAX_QP_SZ: "log_max_qp_sz" @ 0x88, 0x8 => u8;
        EVENT_CAP: "event_cap" @ 0x90, 0x1 => bool;
        ISOLATE_VL_TC_NEW: "isolate_vl_tc_new" @ 0x93, 0x1 => bool;
        PRIO_TAG_REQUIRED: "prio_tag_required" @ 0x98, 0x1 => bool;
        LOG_MAX_QP: "log_max_qp" @ 0x9b, 0x5 => u8;
        ECE_SUPPORT: "ece_support" @ 0xa3, 0x1 => bool;
        REG_C_PRESERVE: "reg_c_preserve" @ 0xa9, 0x1 => bool;
        LOG_MAX_SRQ: "log_max_srq" @ 0xab, 0x5 => u8;
        UPLINK_FOLLOW: "uplink_follow" @ 0xb1, 0x1 => bool;
        TS_CQE_TO_DEST_CQN: "ts_cqe_to_dest_cqn" @ 0xb2, 0x1 => bool;
        GO_BACK_N: "go_back_n" @ 0xb9, 0x1 => bool;
        MAX_SGL_FOR_OPTIMIZED_PERFORMANCE: "max_sgl_for_optimized_performance" @ 0xc0, 0x8 => u8;
        LOG_MAX_CQ_SZ: "log_max_cq_sz" @ 0xc8, 0x8 => u8;
        RELAXED_ORDERING_WRITE_UMR: "relaxed_ordering_write_umr" @ 0xd0, 0x1 => bool;
        RELAXED_ORDERING_READ_UMR: "relaxed_ordering_read_umr" @ 0xd1, 0x1 => bool;
        VIRTIO_NET_DEVICE_EMUALTION_MANAGER: "virtio_net_device_emualtion_manager" @ 0xd9, 0x1 => bool;
        VIRTIO_BLK_DEVICE_EMUALTION_MANAGER: "virtio_blk_device_emualtion_manager" @ 0xda, 0x1 => bool;
        LOG_MAX_CQ: "log_max_cq" @ 0xdb, 0x5 => u8;
        LOG_MAX_EQ_SZ: "log_max_eq_sz" @ 0xe0, 0x8 => u8;
        RELAXED_ORDERING_WRITE: "relaxed_ordering_write" @ 0xe8, 0x1 => bool;
        RELAXED_ORDERING_READ_PCI_ENABLED: "relaxed_ordering_read_pci_enabled" @ 0xe9, 0x1 => bool;
        LOG_MAX_MKEY: "log_max_mkey" @ 0xea, 0x6 => u8;
        TERMINATE_SCATTER_LIST_MKEY: "terminate_scatter_list_mkey" @ 0xf6, 0x1 => bool;
        REPEATED_MKEY: "repeated_mkey" @ 0xf7, 0x1 => bool;
        DUMP_FILL_MKEY: "dump_fill_mkey" @ 0xf8, 0x1 => bool;
        FAST_TEARDOWN: "fast_teardown" @ 0xfb, 0x1 => bool;
        LOG_MAX_EQ: "log_max_eq" @ 0xfc, 0x4 => u8;
        MAX_INDIRECTION: "max_indirection" @ 0x100, 0x8 => u8;
        FIXED_BUFFER_SIZE: "fixed_buffer_size" @ 0x108, 0x1 => bool;
        LOG_MAX_MRW_SZ: "log_max_mrw_sz" @ 0x109, 0x7 => u8;
        FORCE_TEARDOWN: "force_teardown" @ 0x110, 0x1 => bool;
        LOG_MAX_BSF_LIST_SIZE: "log_max_bsf_list_size" @ 0x112, 0x6 => u8;
        UMR_EXTENDED_TRANSLATION_OFFSET: "umr_extended_translation_offset" @ 0x118, 0x1 => bool;
        NULL_MKEY: "null_mkey" @ 0x119, 0x1 => bool;
        LOG_MAX_KLM_LIST_SIZE: "log_max_klm_list_size" @ 0x11a, 0x6 => u8;
        QPC_EXTENSION: "qpc_extension" @ 0x122, 0x1 => bool;
        LOG_MAX_RA_REQ_DC: "log_max_ra_req_dc" @ 0x12a, 0x6 => u8;
        ETH_WQE_TOO_SMALL: "eth_wqe_too_small" @ 0x132, 0x1 => bool;
        VNIC_ENV_CQ_OVERRUN: "vnic_env_cq_overrun" @ 0x139, 0x1 => bool;
        LOG_MAX_RA_RES_DC: "log_max_ra_res_dc" @ 0x13a, 0x6 => u8;
        RELEASE_ALL_PAGES: "release_all_pages" @ 0x145, 0x1 => bool;
        MUST_NOT_USE: "must_not_use" @ 0x146, 0x1 => bool;
        ROCE_ACCL: "roce_accl" @ 0x149, 0x1 => bool;
        LOG_MAX_RA_REQ_QP: "log_max_ra_req_qp" @ 0x14a, 0x6 => u8;
        LOG_MAX_RA_RES_QP: "log_max_ra_res_qp" @ 0x15a, 0x6 => u8;
        END_PAD: "end_pad" @ 0x160, 0x1 => bool;
        CC_QUERY_ALLOWED: "cc_query_allowed" @ 0x161, 0x1 => bool;
        CC_MODIFY_ALLOWED: "cc_modify_allowed" @ 0x162, 0x1 => bool;
        START_PAD: "start_pad" @ 0x163, 0x1 => bool;
        CACHE_LINE_128BYTE: "cache_line_128byte" @ 0x164, 0x1 => bool;
        RTS2RTS_QP_COUNTERS_SET_ID: "rts2rts_qp_counters_set_id" @ 0x169, 0x1 => bool;
        VNIC_ENV_INT_RQ_OOB: "vnic_env_int_rq_oob" @ 0x16c, 0x1 => bool;
        SBCAM_REG: "sbcam_reg" @ 0x16d, 0x1 => bool;
        QCAM_REG: "qcam_reg" @ 0x16f, 0x1 => bool;
        GID_TABLE_SIZE: "gid_table_size" @ 0x170, 0x10 => u16;
        OUT_OF_SEQ_CNT: "out_of_seq_cnt" @ 0x180, 0x1 => bool;
        VPORT_COUNTERS: "vport_counters" @ 0x181, 0x1 => bool;
        RETRANSMISSION_Q_COUNTERS: "retransmission_q_counters" @ 0x182, 0x1 => bool;
        DEBUG: "debug" @ 0x183, 0x1 => bool;
        MODIFY_RQ_COUNTER_SET_ID: "modify_rq_counter_set_id" @ 0x184, 0x1 => bool;
        RQ_DELAY_DROP: "rq_delay_drop" @ 0x185, 0x1 => bool;
        MAX_QP_CNT: "max_qp_cnt" @ 0x186, 0xa => u16;
        PKEY_TABLE_SIZE: "pkey_table_size" @ 0x190, 0x10 => u16;
        VPORT_GROUP_MANAGER: "vport_group_manager" @ 0x1a0, 0x1 => bool;
        VHCA_GROUP_MANAGER: "vhca_group_manager" @ 0x1a1, 0x1 => bool;
        IB_VIRT: "ib_virt" @ 0x1a2, 0x1 => bool;
        ETH_VIRT: "eth_virt" @ 0x1a3, 0x1 => bool;
        VNIC_ENV_QUEUE_COUNTERS: "vnic_env_queue_counters" @ 0x1a4, 0x1 => bool;
        ETS: "ets" @ 0x1a5, 0x1 => bool;
        NIC_FLOW_TABLE: "nic_flow_table" @ 0x1a6, 0x1 => bool;
        ESWITCH_MANAGER: "eswitch_manager" @ 0x1a7, 0x1 => bool;
        DEVICE_MEMORY: "device_memory" @ 0x1a8, 0x1 => bool;
        MCAM_REG: "mcam_reg" @ 0x1a9, 0x1 => bool;
        PCAM_REG: "pcam_reg" @ 0x1aa, 0x1 => bool;
        LOCAL_CA_ACK_DELAY: "local_ca_ack_delay" @ 0x1ab, 0x5 => u8;
        PORT_MODULE_EVENT: "port_module_event" @ 0x1b0, 0x1 => bool;
        ENHANCED_ERROR_Q_COUNTERS: "enhanced_error_q_counters" @ 0x1b1, 0x1 => bool;
        PORTS_CHECK: "ports_check" @ 0x1b2, 0x1 => bool;
        DISABLE_LINK_UP: "disable_link_up" @ 0x1b4, 0x1 => bool;
        BEACON_LED: "beacon_led" @ 0x1b5, 0x1 => bool;
        PORT_TYPE: "port_type" @ 0x1b6, 0x2 => u8;
        NUM_PORTS: "num_ports" @ 0x1b8, 0x8 => u8;
        PPS: "pps" @ 0x1c1, 0x1 => bool;
        PPS_MODIFY: "pps_modify" @ 0x1c2, 0x1 => bool;
        LOG_MAX_MSG: "log_max_msg" @ 0x1c3, 0x5 => u8;
        MAX_TC: "max_tc" @ 0x1cc, 0x4 => u8;
        TEMP_WARN_EVENT: "temp_warn_event" @ 0x1d0, 0x1 => bool;
        DCBX: "dcbx" @ 0x1d1, 0x1 => bool;
        GENERAL_NOTIFICATION_EVENT: "general_notification_event" @ 0x1d2, 0x1 => bool;
        FPGA: "fpga" @ 0x1d5, 0x1 => bool;
        ROL_S: "rol_s" @ 0x1d6, 0x1 => bool;
        ROL_G: "rol_g" @ 0x1d7, 0x1 => bool;
        WOL_S: "wol_s" @ 0x1d9, 0x1 => bool;
        WOL_G: "wol_g" @ 0x1da, 0x1 => bool;
        WOL_A: "wol_a" @ 0x1db, 0x1 => bool;
        WOL_B: "wol_b" @ 0x1dc, 0x1 => bool;
        WOL_M: "wol_m" @ 0x1dd, 0x1 => bool;
        WOL_U: "wol_u" @ 0x1de, 0x1 => bool;
        WOL_P: "wol_p" @ 0x1df, 0x1 => bool;
        STAT_RATE_SUPPORT: "stat_rate_support" @ 0x1e0, 0x10 => u16;
        PCI_SYNC_FOR_FW_UPDATE_EVENT: "pci_sync_for_fw_update_event" @ 0x1f1, 0x1 => bool;
        INIT2_LAG_TX_PORT_AFFINITY: "init2_lag_tx_port_affinity" @ 0x1f8, 0x1 => bool;
        WQE_BASED_FLOW_TABLE_UPDATE_CAP: "wqe_based_flow_table_update_cap" @ 0x1fb, 0x1 => bool;
        CQE_VERSION: "cqe_version" @ 0x1fc, 0x4 => u8;
        COMPACT_ADDRESS_VECTOR: "compact_address_vector" @ 0x200, 0x1 => bool;
        STRIDING_RQ: "striding_rq" @ 0x201, 0x1 => bool;
        IPOIB_ENHANCED_OFFLOADS: "ipoib_enhanced_offloads" @ 0x203, 0x1 => bool;
        IPOIB_BASIC_OFFLOADS: "ipoib_basic_offloads" @ 0x204, 0x1 => bool;
        REPEATED_BLOCK_DISABLED: "repeated_block_disabled" @ 0x206, 0x1 => bool;
        UMR_MODIFY_ENTITY_SIZE_DISABLED: "umr_modify_entity_size_disabled" @ 0x207, 0x1 => bool;
        UMR_MODIFY_ATOMIC_DISABLED: "umr_modify_atomic_disabled" @ 0x208, 0x1 => bool;
        UMR_INDIRECT_MKEY_DISABLED: "umr_indirect_mkey_disabled" @ 0x209, 0x1 => bool;
        UMR_FENCE: "umr_fence" @ 0x20a, 0x2 => u8;
        DC_REQ_SCAT_DATA_CQE: "dc_req_scat_data_cqe" @ 0x20c, 0x1 => bool;
        DRAIN_SIGERR: "drain_sigerr" @ 0x20f, 0x1 => bool;
        CMDIF_CHECKSUM: "cmdif_checksum" @ 0x210, 0x2 => u8;
        SIGERR_CQE: "sigerr_cqe" @ 0x212, 0x1 => bool;
        WQ_SIGNATURE: "wq_signature" @ 0x214, 0x1 => bool;
        SCTR_DATA_CQE: "sctr_data_cqe" @ 0x215, 0x1 => bool;
        SHO: "sho" @ 0x217, 0x1 => bool;
        TPH: "tph" @ 0x218, 0x1 => bool;
        RF: "rf" @ 0x219, 0x1 => bool;
        DCT: "dct" @ 0x21a, 0x1 => bool;
        QOS: "qos" @ 0x21b, 0x1 => bool;
        ETH_NET_OFFLOADS: "eth_net_offloads" @ 0x21c, 0x1 => bool;
        ROCE: "roce" @ 0x21d, 0x1 => bool;
        ATOMIC: "atomic" @ 0x21e, 0x1 => bool;
        CQ_OI: "cq_oi" @ 0x220, 0x1 => bool;
        CQ_RESIZE: "cq_resize" @ 0x221, 0x1 => bool;
        CQ_MODERATION: "cq_moderation" @ 0x222, 0x1 => bool;
        CQ_PERIOD_MODE_MODIFY: "cq_period_mode_modify" @ 0x223, 0x1 => bool;
        CQ_EQ_REMAP: "cq_eq_remap" @ 0x226, 0x1 => bool;
        PG: "pg" @ 0x227, 0x1 => bool;
        BLOCK_LB_MC: "block_lb_mc" @ 0x228, 0x1 => bool;
        SCQE_BREAK_MODERATION: "scqe_break_moderation" @ 0x22a, 0x1 => bool;
        CQ_PERIOD_START_FROM_CQE: "cq_period_start_from_cqe" @ 0x22b, 0x1 => bool;
        CD: "cd" @ 0x22c, 0x1 => bool;
        APM: "apm" @ 0x22e, 0x1 => bool;
        VECTOR_CALC: "vector_calc" @ 0x22f, 0x1 => bool;
        UMR_PTR_RLKY: "umr_ptr_rlky" @ 0x230, 0x1 => bool;
        IMAICL: "imaicl" @ 0x231, 0x1 => bool;
        QP_PACKET_BASED: "qp_packet_based" @ 0x232, 0x1 => bool;
        QKV: "qkv" @ 0x236, 0x1 => bool;
        PKV: "pkv" @ 0x237, 0x1 => bool;
        SET_DETH_SQPN: "set_deth_sqpn" @ 0x238, 0x1 => bool;
        XRC: "xrc" @ 0x23c, 0x1 => bool;
        UD: "ud" @ 0x23d, 0x1 => bool;
        UC: "uc" @ 0x23e, 0x1 => bool;
        RC: "rc" @ 0x23f, 0x1 => bool;
        UAR_4K: "uar_4k" @ 0x240, 0x1 => bool;
        FL_RC_QP_WHEN_ROCE_DISABLED: "fl_rc_qp_when_roce_disabled" @ 0x248, 0x1 => bool;
        REGEXP_PARAMS: "regexp_params" @ 0x249, 0x1 => bool;
        UAR_SZ: "uar_sz" @ 0x24a, 0x6 => u8;
        PORT_SELECTION_CAP: "port_selection_cap" @ 0x250, 0x1 => bool;
        NIC_CAP_REG: "nic_cap_reg" @ 0x251, 0x1 => bool;
        UMEM_UID_0: "umem_uid_0" @ 0x252, 0x1 => bool;
        LOG_PG_SZ: "log_pg_sz" @ 0x258, 0x8 => u8;
        BF: "bf" @ 0x260, 0x1 => bool;
        DRIVER_VERSION: "driver_version" @ 0x261, 0x1 => bool;
        PAD_TX_ETH_PACKET: "pad_tx_eth_packet" @ 0x262, 0x1 => bool;
        MKEY_BY_NAME: "mkey_by_name" @ 0x266, 0x1 => bool;
        LOG_BF_REG_SIZE: "log_bf_reg_size" @ 0x26b, 0x5 => u8;
        DISCIPLINED_FR_COUNTER: "disciplined_fr_counter" @ 0x270, 0x1 => bool;
        QP_ERROR_SYNDROME: "qp_error_syndrome" @ 0x273, 0x1 => bool;
        LAG_DCT: "lag_dct" @ 0x276, 0x2 => u8;
        LAG_TX_PORT_AFFINITY: "lag_tx_port_affinity" @ 0x278, 0x1 => bool;
        LAG_NATIVE_FDB_SELECTION: "lag_native_fdb_selection" @ 0x279, 0x1 => bool;
        LAG_MASTER: "lag_master" @ 0x27b, 0x1 => bool;
        NUM_LAG_PORTS: "num_lag_ports" @ 0x27c, 0x4 => u8;
        MAX_WQE_SZ_SQ: "max_wqe_sz_sq" @ 0x290, 0x10 => u16;
        ICM_MNG_FUNCTION_ID_MODE: "icm_mng_function_id_mode" @ 0x2a0, 0x1 => bool;
        MKEY_PCIE_TPH: "mkey_pcie_tph" @ 0x2a7, 0x1 => bool;
        TIS_TIR_TD_ORDER: "tis_tir_td_order" @ 0x2a9, 0x1 => bool;
        PSP: "psp" @ 0x2aa, 0x1 => bool;
        SHAMPO: "shampo" @ 0x2ab, 0x1 => bool;
        MAX_WQE_SZ_RQ: "max_wqe_sz_rq" @ 0x2b0, 0x10 => u16;
        MAX_FLOW_COUNTER_31_16: "max_flow_counter_31_16" @ 0x2c0, 0x10 => u16;
        MAX_WQE_SZ_SQ_DC: "max_wqe_sz_sq_dc" @ 0x2d0, 0x10 => u16;
        QUERY_HOST_NET_FUNCTION_NUM_MAX: "query_host_net_function_num_max" @ 0x2e0, 0x5 => u8;
        MAX_QP_MCG: "max_qp_mcg" @ 0x2e7, 0x19 => u32;
        FLOW_COUNTER_BULK_ALLOC: "flow_counter_bulk_alloc" @ 0x310, 0x8 => u8;
        LOG_MAX_MCG: "log_max_mcg" @ 0x318, 0x8 => u8;
        LOG_MAX_TRANSPORT_DOMAIN: "log_max_transport_domain" @ 0x323, 0x5 => u8;
        RELAXED_ORDERING_READ: "relaxed_ordering_read" @ 0x32a, 0x1 => bool;
        LOG_MAX_PD: "log_max_pd" @ 0x32b, 0x5 => u8;
        DP_ORDERING_OOO_ALL_UD: "dp_ordering_ooo_all_ud" @ 0x330, 0x1 => bool;
        DP_ORDERING_OOO_ALL_UC: "dp_ordering_ooo_all_uc" @ 0x331, 0x1 => bool;
        DP_ORDERING_OOO_ALL_XRC: "dp_ordering_ooo_all_xrc" @ 0x332, 0x1 => bool;
        DP_ORDERING_OOO_ALL_DC: "dp_ordering_ooo_all_dc" @ 0x333, 0x1 => bool;
        DP_ORDERING_OOO_ALL_RC: "dp_ordering_ooo_all_rc" @ 0x334, 0x1 => bool;
        PCIE_RESET_USING_HOTRESET_METHOD: "pcie_reset_using_hotreset_method" @ 0x335, 0x1 => bool;
        PCI_SYNC_FOR_FW_UPDATE_WITH_DRIVER_UNLOAD: "pci_sync_for_fw_update_with_driver_unload" @ 0x336, 0x1 => bool;
        VNIC_ENV_CNT_STEERING_FAIL: "vnic_env_cnt_steering_fail" @ 0x337, 0x1 => bool;
        VPORT_COUNTER_LOCAL_LOOPBACK: "vport_counter_local_loopback" @ 0x338, 0x1 => bool;
        Q_COUNTER_AGGREGATION: "q_counter_aggregation" @ 0x339, 0x1 => bool;
        Q_COUNTER_OTHER_VPORT: "q_counter_other_vport" @ 0x33a, 0x1 => bool;
        LOG_MAX_XRCD: "log_max_xrcd" @ 0x33b, 0x5 => u8;
        NIC_RECEIVE_STEERING_DISCARD: "nic_receive_steering_discard" @ 0x340, 0x1 => bool;
        RECEIVE_DISCARD_VPORT_DOWN: "receive_discard_vport_down" @ 0x341, 0x1 => bool;
        TRANSMIT_DISCARD_VPORT_DOWN: "transmit_discard_vport_down" @ 0x342, 0x1 => bool;
        EQ_OVERRUN_COUNT: "eq_overrun_count" @ 0x343, 0x1 => bool;
        INVALID_COMMAND_COUNT: "invalid_command_count" @ 0x345, 0x1 => bool;
        QUOTA_EXCEEDED_COUNT: "quota_exceeded_count" @ 0x346, 0x1 => bool;
        LOG_MAX_FLOW_COUNTER_BULK: "log_max_flow_counter_bulk" @ 0x348, 0x8 => u8;
        MAX_FLOW_COUNTER_15_0: "max_flow_counter_15_0" @ 0x350, 0x10 => u16;
        LOG_MAX_RQ: "log_max_rq" @ 0x363, 0x5 => u8;
        FT_ALIAS_SW_VHCA_ID: "ft_alias_sw_vhca_id" @ 0x368, 0x1 => bool;
        LOG_MAX_SQ: "log_max_sq" @ 0x36b, 0x5 => u8;
        LOG_MAX_TIR: "log_max_tir" @ 0x373, 0x5 => u8;
        LOG_MAX_TIS: "log_max_tis" @ 0x37b, 0x5 => u8;
        BASIC_CYCLIC_RCV_WQE: "basic_cyclic_rcv_wqe" @ 0x380, 0x1 => bool;
        LOG_MAX_RMP: "log_max_rmp" @ 0x383, 0x5 => u8;
        SD_GROUP_SIZE: "sd_group_size" @ 0x388, 0x1 => bool;
        LOG_MAX_RQT: "log_max_rqt" @ 0x38b, 0x5 => u8;
        LOG_MAX_RQT_SIZE: "log_max_rqt_size" @ 0x393, 0x5 => u8;
        TLP_DEVICE_EMULATION_MANAGER: "tlp_device_emulation_manager" @ 0x398, 0x1 => bool;
        VNIC_ENV_CNT_BAR_UAR_ACCESS: "vnic_env_cnt_bar_uar_access" @ 0x399, 0x1 => bool;
        VNIC_ENV_CNT_ODP_PAGE_FAULT: "vnic_env_cnt_odp_page_fault" @ 0x39a, 0x1 => bool;
        LOG_MAX_TIS_PER_SQ: "log_max_tis_per_sq" @ 0x39b, 0x5 => u8;
        EXT_STRIDE_NUM_RANGE: "ext_stride_num_range" @ 0x3a0, 0x1 => bool;
        ROCE_RW_SUPPORTED: "roce_rw_supported" @ 0x3a1, 0x1 => bool;
        LOG_MAX_CURRENT_UC_LIST_WR_SUPPORTED: "log_max_current_uc_list_wr_supported" @ 0x3a2, 0x1 => bool;
        LOG_MAX_STRIDE_SZ_RQ: "log_max_stride_sz_rq" @ 0x3a3, 0x5 => u8;
        LOG_MIN_STRIDE_SZ_RQ: "log_min_stride_sz_rq" @ 0x3ab, 0x5 => u8;
        QP_LATENCY_SENSITIVE_DISABLE: "qp_latency_sensitive_disable" @ 0x3b2, 0x1 => bool;
        LOG_MAX_STRIDE_SZ_SQ: "log_max_stride_sz_sq" @ 0x3b3, 0x5 => u8;
        LOG_MIN_STRIDE_SZ_SQ: "log_min_stride_sz_sq" @ 0x3bb, 0x5 => u8;
        HAIRPIN: "hairpin" @ 0x3c0, 0x1 => bool;
        LOG_MAX_HAIRPIN_QUEUES: "log_max_hairpin_queues" @ 0x3c3, 0x5 => u8;
        LOG_MAX_HAIRPIN_WQ_DATA_SZ: "log_max_hairpin_wq_data_sz" @ 0x3cb, 0x5 => u8;
        LOG_MAX_HAIRPIN_NUM_PACKETS: "log_max_hairpin_num_packets" @ 0x3d3, 0x5 => u8;
        LOG_MAX_WQ_SZ: "log_max_wq_sz" @ 0x3db, 0x5 => u8;
        NIC_VPORT_CHANGE_EVENT: "nic_vport_change_event" @ 0x3e0, 0x1 => bool;
        DISABLE_LOCAL_LB_UC: "disable_local_lb_uc" @ 0x3e1, 0x1 => bool;
        DISABLE_LOCAL_LB_MC: "disable_local_lb_mc" @ 0x3e2, 0x1 => bool;
        LOG_MIN_HAIRPIN_WQ_DATA_SZ: "log_min_hairpin_wq_data_sz" @ 0x3e3, 0x5 => u8;
        SILENT_MODE_SET: "silent_mode_set" @ 0x3e9, 0x1 => bool;
        VHCA_STATE: "vhca_state" @ 0x3ea, 0x1 => bool;
        LOG_MAX_VLAN_LIST: "log_max_vlan_list" @ 0x3eb, 0x5 => u8;
        LOG_MAX_CURRENT_MC_LIST: "log_max_current_mc_list" @ 0x3f3, 0x5 => u8;
        SILENT_MODE_QUERY: "silent_mode_query" @ 0x3f9, 0x1 => bool;
        QUERY_HOST_NET_FUNCTION_V1: "query_host_net_function_v1" @ 0x3fa, 0x1 => bool;
        LOG_MAX_CURRENT_UC_LIST: "log_max_current_uc_list" @ 0x3fb, 0x5 => u8;
        GENERAL_OBJ_TYPES: "general_obj_types" @ 0x400, 0x40 => u64;
        SQ_TS_FORMAT: "sq_ts_format" @ 0x440, 0x2 => u8;
        RQ_TS_FORMAT: "rq_ts_format" @ 0x442, 0x2 => u8;
        STEERING_FORMAT_VERSION: "steering_format_version" @ 0x444, 0x4 => u8;
        CREATE_QP_START_HINT: "create_qp_start_hint" @ 0x448, 0x18 => u32;
        ATS: "ats" @ 0x461, 0x1 => bool;
        CROSS_VHCA_RQT: "cross_vhca_rqt" @ 0x462, 0x1 => bool;
        LOG_MAX_UCTX: "log_max_uctx" @ 0x463, 0x5 => u8;
        CRYPTO: "crypto" @ 0x469, 0x1 => bool;
        IPSEC_OFFLOAD: "ipsec_offload" @ 0x46a, 0x1 => bool;
        LOG_MAX_UMEM: "log_max_umem" @ 0x46b, 0x5 => u8;
        MAX_NUM_EQS: "max_num_eqs" @ 0x470, 0x10 => u16;
        TLS_TX: "tls_tx" @ 0x481, 0x1 => bool;
        TLS_RX: "tls_rx" @ 0x482, 0x1 => bool;
        LOG_MAX_L2_TABLE: "log_max_l2_table" @ 0x483, 0x5 => u8;
        LOG_UAR_PAGE_SZ: "log_uar_page_sz" @ 0x490, 0x10 => u16;
        DEVICE_FREQUENCY_MHZ: "device_frequency_mhz" @ 0x4c0, 0x20 => u32;
        DEVICE_FREQUENCY_KHZ: "device_frequency_khz" @ 0x4e0, 0x20 => u32;
        NUM_OF_UARS_PER_PAGE: "num_of_uars_per_page" @ 0x520, 0x20 => u32;
        FLEX_PARSER_PROTOCOLS: "flex_parser_protocols" @ 0x540, 0x20 => u32;
        MAX_GENEVE_TLV_OPTIONS: "max_geneve_tlv_options" @ 0x560, 0x8 => u8;
        MAX_GENEVE_TLV_OPTION_DATA_LEN: "max_geneve_tlv_option_data_len" @ 0x56b, 0x5 => u8;
        ADV_RDMA: "adv_rdma" @ 0x571, 0x1 => bool;
        ADV_VIRTUALIZATION: "adv_virtualization" @ 0x579, 0x1 => bool;
        LOG_MAX_DCI_STREAM_CHANNELS: "log_max_dci_stream_channels" @ 0x58b, 0x5 => u8;
        LOG_MAX_DCI_ERRORED_STREAMS: "log_max_dci_errored_streams" @ 0x593, 0x5 => u8;
        ENHANCED_CQE_COMPRESSION: "enhanced_cqe_compression" @ 0x5b0, 0x1 => bool;
        CROSSING_VHCA_MKEY: "crossing_vhca_mkey" @ 0x5b2, 0x1 => bool;
        LOG_MAX_DEK: "log_max_dek" @ 0x5b3, 0x5 => u8;
        MINI_CQE_RESP_STRIDE_INDEX: "mini_cqe_resp_stride_index" @ 0x5bc, 0x1 => bool;
        CQE_128_ALWAYS: "cqe_128_always" @ 0x5bd, 0x1 => bool;
        CQE_COMPRESSION_128: "cqe_compression_128" @ 0x5be, 0x1 => bool;
        CQE_COMPRESSION: "cqe_compression" @ 0x5bf, 0x1 => bool;
        CQE_COMPRESSION_TIMEOUT: "cqe_compression_timeout" @ 0x5c0, 0x10 => u16;
        CQE_COMPRESSION_MAX_NUM: "cqe_compression_max_num" @ 0x5d0, 0x10 => u16;
        FLEX_PARSER_ID_GTPU_DW_0: "flex_parser_id_gtpu_dw_0" @ 0x5e8, 0x4 => u8;
        TAG_MATCHING: "tag_matching" @ 0x5f0, 0x1 => bool;
        RNDV_OFFLOAD_RC: "rndv_offload_rc" @ 0x5f1, 0x1 => bool;
        RNDV_OFFLOAD_DC: "rndv_offload_dc" @ 0x5f2, 0x1 => bool;
        LOG_TAG_MATCHING_LIST_SZ: "log_tag_matching_list_sz" @ 0x5f3, 0x5 => u8;
        LOG_MAX_XRQ: "log_max_xrq" @ 0x5fb, 0x5 => u8;
        AFFILIATE_NIC_VPORT_CRITERIA: "affiliate_nic_vport_criteria" @ 0x600, 0x8 => u8;
        NATIVE_PORT_NUM: "native_port_num" @ 0x608, 0x8 => u8;
        NUM_VHCA_PORTS: "num_vhca_ports" @ 0x610, 0x8 => u8;
        FLEX_PARSER_ID_GTPU_TEID: "flex_parser_id_gtpu_teid" @ 0x618, 0x4 => u8;
        SW_OWNER_ID: "sw_owner_id" @ 0x61e, 0x1 => bool;
        MAX_NUM_OF_MONITOR_COUNTERS: "max_num_of_monitor_counters" @ 0x620, 0x10 => u16;
        NUM_PPCNT_MONITOR_COUNTERS: "num_ppcnt_monitor_counters" @ 0x630, 0x10 => u16;
        MAX_NUM_SF: "max_num_sf" @ 0x640, 0x10 => u16;
        NUM_Q_MONITOR_COUNTERS: "num_q_monitor_counters" @ 0x650, 0x10 => u16;
        SF: "sf" @ 0x680, 0x1 => bool;
        SF_SET_PARTITION: "sf_set_partition" @ 0x681, 0x1 => bool;
        LOG_MAX_SF: "log_max_sf" @ 0x683, 0x5 => u8;
        APU: "apu" @ 0x688, 0x1 => bool;
        MIGRATION: "migration" @ 0x68d, 0x1 => bool;
        LOG_MIN_SF_SIZE: "log_min_sf_size" @ 0x690, 0x8 => u8;
        MAX_NUM_SF_PARTITIONS: "max_num_sf_partitions" @ 0x698, 0x8 => u8;
        UCTX_CAP: "uctx_cap" @ 0x6a0, 0x20 => u32;
        FLEX_PARSER_ID_GENEVE_TLV_OPTION_0: "flex_parser_id_geneve_tlv_option_0" @ 0x6c4, 0x4 => u8;
        FLEX_PARSER_ID_ICMP_DW1: "flex_parser_id_icmp_dw1" @ 0x6c8, 0x4 => u8;
        FLEX_PARSER_ID_ICMP_DW0: "flex_parser_id_icmp_dw0" @ 0x6cc, 0x4 => u8;
        FLEX_PARSER_ID_ICMPV6_DW1: "flex_parser_id_icmpv6_dw1" @ 0x6d0, 0x4 => u8;
        FLEX_PARSER_ID_ICMPV6_DW0: "flex_parser_id_icmpv6_dw0" @ 0x6d4, 0x4 => u8;
        FLEX_PARSER_ID_OUTER_FIRST_MPLS_OVER_GRE: "flex_parser_id_outer_first_mpls_over_gre" @ 0x6d8, 0x4 => u8;
        FLEX_PARSER_ID_OUTER_FIRST_MPLS_OVER_UDP_LABEL: "flex_parser_id_outer_first_mpls_over_udp_label" @ 0x6dc, 0x4 => u8;
        MAX_NUM_MATCH_DEFINER: "max_num_match_definer" @ 0x6e0, 0x10 => u16;
        SF_BASE_ID: "sf_base_id" @ 0x6f0, 0x10 => u16;
        FLEX_PARSER_ID_GTPU_DW_2: "flex_parser_id_gtpu_dw_2" @ 0x700, 0x4 => u8;
        FLEX_PARSER_ID_GTPU_FIRST_EXT_DW_0: "flex_parser_id_gtpu_first_ext_dw_0" @ 0x704, 0x4 => u8;
        NUM_TOTAL_DYNAMIC_VF_MSIX: "num_total_dynamic_vf_msix" @ 0x708, 0x18 => u32;
        DYNAMIC_MSIX_TABLE_SIZE: "dynamic_msix_table_size" @ 0x734, 0xc => u16;
        MIN_DYNAMIC_VF_MSIX_TABLE_SIZE: "min_dynamic_vf_msix_table_size" @ 0x74c, 0x4 => u8;
        DATA_DIRECT: "data_direct" @ 0x752, 0x1 => bool;
        MAX_DYNAMIC_VF_MSIX_TABLE_SIZE: "max_dynamic_vf_msix_table_size" @ 0x754, 0xc => u16;
        LOG_MAX_NUM_HEADER_MODIFY_ARGUMENT: "log_max_num_header_modify_argument" @ 0x763, 0x5 => u8;
        LOG_HEADER_MODIFY_ARGUMENT_GRANULARITY_OFFSET: "log_header_modify_argument_granularity_offset" @ 0x768, 0x4 => u8;
        LOG_HEADER_MODIFY_ARGUMENT_GRANULARITY: "log_header_modify_argument_granularity" @ 0x76c, 0x4 => u8;
        LOG_HEADER_MODIFY_ARGUMENT_MAX_ALLOC: "log_header_modify_argument_max_alloc" @ 0x773, 0x5 => u8;
        VHCA_TUNNEL_COMMANDS: "vhca_tunnel_commands" @ 0x780, 0x40 => u64;
        MATCH_DEFINER_FORMAT_SUPPORTED: "match_definer_format_supported" @ 0x7c0, 0x40 => u64;
    }
}

prm_struct! {
    /// `cmd_hca_cap_2` (GENERAL_2 capability).
    pub mod cmd_hca_cap_2 / CMD_HCA_CAP_2 = "cmd_hca_cap_2", 0x800 {
        SF_EQ_USAGE: "sf_eq_usage" @ 0xd2, 0x1 => bool;
        GENERAL_OBJ_TYPES_127_64: "general_obj_types_127_64" @ 0x1c0, 0x40 => u64;
        SW_VHCA_ID_VALID: "sw_vhca_id_valid" @ 0x221, 0x1 => bool;
        SW_VHCA_ID: "sw_vhca_id" @ 0x222, 0xe => u16;
        MAX_NUM_EQS_24B: "max_num_eqs_24b" @ 0x448, 0x18 => u32;
        LAG_PER_MP_GROUP: "lag_per_mp_group" @ 0x5c4, 0x1 => bool;
    }
}

prm_struct! {
    /// `roce_cap` (RoCE capability).
    pub mod roce_cap / ROCE_CAP = "roce_cap", 0x800 {
        ROCE_APM: "roce_apm" @ 0x0, 0x1 => bool;
        SW_R_ROCE_SRC_UDP_PORT: "sw_r_roce_src_udp_port" @ 0x4, 0x1 => bool;
        FL_RC_QP_WHEN_ROCE_DISABLED: "fl_rc_qp_when_roce_disabled" @ 0x5, 0x1 => bool;
        FL_RC_QP_WHEN_ROCE_ENABLED: "fl_rc_qp_when_roce_enabled" @ 0x6, 0x1 => bool;
        ROCE_CC_GENERAL: "roce_cc_general" @ 0x7, 0x1 => bool;
        QP_OOO_TRANSMIT_DEFAULT: "qp_ooo_transmit_default" @ 0x8, 0x1 => bool;
        QP_TS_FORMAT: "qp_ts_format" @ 0x1e, 0x2 => u8;
        L3_TYPE: "l3_type" @ 0x8c, 0x4 => u8;
        ROCE_VERSION: "roce_version" @ 0x98, 0x8 => u8;
        R_ROCE_DEST_UDP_PORT: "r_roce_dest_udp_port" @ 0xb0, 0x10 => u16;
        R_ROCE_MAX_SRC_UDP_PORT: "r_roce_max_src_udp_port" @ 0xc0, 0x10 => u16;
        R_ROCE_MIN_SRC_UDP_PORT: "r_roce_min_src_udp_port" @ 0xd0, 0x10 => u16;
        ROCE_ADDRESS_TABLE_SIZE: "roce_address_table_size" @ 0xf0, 0x10 => u16;
    }
}

prm_struct! {
    /// `atomic_caps` (atomic capability).
    pub mod atomic_caps / ATOMIC_CAPS = "atomic_caps", 0x800 {
        ATOMIC_REQ_8B_ENDIANNESS_MODE: "atomic_req_8B_endianness_mode" @ 0x40, 0x2 => u8;
        SUPPORTED_ATOMIC_REQ_8B_ENDIANNESS_MODE_1: "supported_atomic_req_8B_endianness_mode_1" @ 0x46, 0x1 => bool;
        ATOMIC_OPERATIONS: "atomic_operations" @ 0x90, 0x10 => u16;
        ATOMIC_SIZE_QP: "atomic_size_qp" @ 0xb0, 0x10 => u16;
        ATOMIC_SIZE_DC: "atomic_size_dc" @ 0xd0, 0x10 => u16;
    }
}
