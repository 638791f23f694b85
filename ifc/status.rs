//! Delivery statuses (entry `status_own` bits 7:1) and command statuses (output byte 0).

macro_rules! status_enum {
    ($(#[$em:meta])* $enum:ident { $( $(#[$m:meta])* $name:ident = $val:literal, )* }) => {
        $(#[$em])*
        #[expect(
            non_camel_case_types,
            reason = "variants are upstream's names (MLX5_CMD_STAT_*, delivery statuses), printed by name"
        )]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[repr(u8)]
        pub enum $enum {
            $( $(#[$m])* $name = $val, )*
        }

        impl $enum {
            /// Every known value.
            #[cfg_attr(
                CONFIG_RUST,
                expect(dead_code, reason = "PRM definition the emulator and the host tests use; the driver does not (yet)")
            )]
            pub const ALL: &'static [$enum] = &[ $( $enum::$name, )* ];

            /// Decodes a raw value.
            pub const fn from_raw(v: u8) -> Option<Self> {
                match v {
                    $( $val => Some($enum::$name), )*
                    _ => None,
                }
            }

            /// Upper-case name.
            pub const fn name(self) -> &'static str {
                match self {
                    $( $enum::$name => stringify!($name), )*
                }
            }
        }
    };
}

status_enum! {
    /// Delivery status written by the device into `status_own` bits 7:1.
    DeliveryStatus {
        /// Delivered.
        OK = 0x00,
        /// Signature error.
        SIGNATURE_ERR = 0x01,
        /// Token error.
        TOKEN_ERR = 0x02,
        /// Bad block number.
        BAD_BLK_NUM_ERR = 0x03,
        /// Output pointer not aligned to block size.
        BAD_OUTPUT_PTR_ERR = 0x04,
        /// Input pointer not aligned to block size.
        BAD_INPUT_PTR_ERR = 0x05,
        /// Firmware internal error.
        INTERNAL_ERR = 0x06,
        /// Input length error.
        INPUT_LEN_ERR = 0x07,
        /// Output length error.
        OUTPUT_LEN_ERR = 0x08,
        /// Reserved fields not cleared.
        RES_FLD_NOT_CLR_ERR = 0x09,
        /// Bad command descriptor type.
        CMD_DATA_ERR = 0x10,
    }
}

status_enum! {
    /// Command status in byte 0 of the output.
    CmdStatus {
        /// Success.
        OK = 0x00,
        /// Internal error.
        INT_ERR = 0x01,
        /// Bad operation.
        BAD_OP_ERR = 0x02,
        /// Bad parameter.
        BAD_PARAM_ERR = 0x03,
        /// Bad system state.
        BAD_SYS_STATE_ERR = 0x04,
        /// Bad resource.
        BAD_RES_ERR = 0x05,
        /// Resource busy.
        RES_BUSY = 0x06,
        /// Not ready.
        NOT_READY = 0x07,
        /// Limits exceeded.
        LIM_ERR = 0x08,
        /// Bad resource state.
        BAD_RES_STATE_ERR = 0x09,
        /// Bad index.
        IX_ERR = 0x0a,
        /// No resources.
        NO_RES_ERR = 0x0f,
        /// Bad QP state.
        BAD_QP_STATE_ERR = 0x10,
        /// Bad packet.
        BAD_PKT_ERR = 0x30,
        /// Too many outstanding CQEs.
        BAD_SIZE_OUTS_CQES_ERR = 0x40,
        /// Bad input length.
        BAD_INP_LEN_ERR = 0x50,
        /// Bad output length.
        BAD_OUTP_LEN_ERR = 0x51,
    }
}
