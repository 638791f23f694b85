// SPDX-License-Identifier: GPL-2.0

//! Address handles, the pure part: an InfiniBand `rdma_ah_attr` as the software
//! address vector (`struct mlx5_av`) a UD send carries, and back, as upstream
//! `create_ib_ah` / `mlx5_ib_query_ah` (`ah.c`) do; no command is involved. The static
//! rate becomes the device's rate code as upstream `mlx5r_ib_rate` (`qp.c`) maps it:
//! the fastest rate not above the one asked for that cap `stat_rate_support`
//! offers, else 0 (the port's current rate).
//!
//! Pure `core` code, compiled into the kernel module and into the host test crate.

use crate::ib::abi::error::{Reason, UabiError};
use crate::{
    ffi::rdma::ib_ah_abi::AhAttr,
    ifc::av::{Av, AV_GRH},
};

/// `RDMA_AH_ATTR_TYPE_IB`.
pub const AH_TYPE_IB: u32 = 1;

/// `enum ib_rate` values the mapping names (`include/rdma/ib_verbs.h`).
mod ib_rate {
    pub(super) const PORT_CURRENT: u8 = 0;
    pub(super) const R2_5: u8 = 2;
    pub(super) const R25: u8 = 15;
    pub(super) const R56: u8 = 12;
    pub(super) const R100: u8 = 16;
    pub(super) const R200: u8 = 17;
    pub(super) const R50: u8 = 20;
    pub(super) const R400: u8 = 21;
    pub(super) const R800: u8 = 23;
    pub(super) const R1600: u8 = 25;
}

/// `MLX5_STAT_RATE_OFFSET` (`device.h`): the device code of the older rates.
const STAT_RATE_OFFSET: u8 = 5;

/// The device's code of `enum ib_rate` value `rate` (upstream `ib_to_mlx5_rate_map`).
fn rate_map(rate: u8) -> u8 {
    match rate {
        ib_rate::PORT_CURRENT => 0,
        ib_rate::R56 => 1,
        ib_rate::R25 => 2,
        ib_rate::R100 => 3,
        ib_rate::R200 => 4,
        ib_rate::R50 => 5,
        ib_rate::R400 => 6,
        r => r.saturating_add(STAT_RATE_OFFSET),
    }
}

/// The device's rate code for `rate` on a device offering `stat_rate_support`
/// (upstream `mlx5r_ib_rate`): current, 800 and 1600 Gb/s → 0; below 2.5 Gb/s or
/// above 1600 → `EINVAL`; else the first rate at or below `rate` the device offers.
pub fn rate_code(rate: u8, stat_rate_support: u16) -> Result<u8, UabiError> {
    if matches!(rate, ib_rate::PORT_CURRENT | ib_rate::R800 | ib_rate::R1600) {
        return Ok(0);
    }
    if !(ib_rate::R2_5..=ib_rate::R1600).contains(&rate) {
        return Err(UabiError::inval(Reason::OutOfRange("static_rate")));
    }
    let support = u32::from(stat_rate_support);
    let mut r = rate;
    while r != ib_rate::PORT_CURRENT && (1u32 << rate_map(r)) & support == 0 {
        r -= 1;
    }
    Ok(rate_map(r))
}

/// create_ah of an InfiniBand address: the address vector. Only InfiniBand attributes
/// (`EINVAL` otherwise: RoCE needs a GRH and a MAC this provider has no netdev for).
pub fn encode(a: &AhAttr, stat_rate_support: u16) -> Result<Av, UabiError> {
    if a.ah_type != AH_TYPE_IB {
        return Err(UabiError::inval(Reason::OutOfRange(
            "ah type (not InfiniBand)",
        )));
    }
    let mut av = Av::default();
    if a.is_global != 0 {
        av.rgid = a.dgid;
        // Upstream ORs the 32-bit flow label in unmasked; the core hands 20 bits.
        av.grh_gid_fl
            .set(a.flow_label | AV_GRH | (u32::from(a.sgid_index) << 20));
        av.hop_limit = a.hop_limit;
        av.tclass = a.traffic_class;
    }
    av.stat_rate_sl = (rate_code(a.static_rate, stat_rate_support)? << 4) | (a.sl & 0xf);
    av.rlid.set(a.dlid);
    av.fl_mlid = a.src_path_bits & 0x7f;
    Ok(av)
}

/// query_ah: the attributes of address vector `av` of an address handle of type
/// `ah_type`, as upstream reads them back (the static rate is the device's code, the
/// source path bits are not reported).
pub fn decode(av: &Av, ah_type: u32) -> AhAttr {
    let mut a = AhAttr {
        ah_type,
        ..AhAttr::default()
    };
    let g = av.grh_gid_fl.get();
    if g & AV_GRH != 0 {
        a.is_global = 1;
        a.flow_label = g & 0xf_ffff;
        a.sgid_index = ((g >> 20) & 0xff) as u8;
        a.hop_limit = av.hop_limit;
        a.traffic_class = av.tclass;
        a.dgid = av.rgid;
    }
    a.dlid = av.rlid.get();
    a.static_rate = av.stat_rate_sl >> 4;
    a.sl = av.stat_rate_sl & 0xf;
    a
}

#[cfg(any(test, CONFIG_MLX5_RS_KUNIT_TEST))]
#[cfg_attr(CONFIG_RUST, kernel::macros::kunit_tests(mlx5_rs_ib_ah_av))]
mod tests {
    use super::*;
    use crate::errno::Errno;
    use zerocopy::IntoBytes;

    fn ib(dlid: u16, sl: u8, rate: u8) -> AhAttr {
        AhAttr {
            ah_type: AH_TYPE_IB,
            dlid,
            sl,
            static_rate: rate,
            port_num: 1,
            ..AhAttr::default()
        }
    }

    #[test]
    fn rates_as_upstream() {
        // No rate offered: every rate is the port's current one.
        for r in [0, 2, 3, 7, 16, 21, 22, 24] {
            assert_eq!(rate_code(r, 0), Ok(0));
        }
        // 800 and 1600 Gb/s and the current rate: 0 whatever is offered.
        assert_eq!(rate_code(23, 0xffff), Ok(0));
        assert_eq!(rate_code(25, 0xffff), Ok(0));
        // Out of the enum's range.
        assert_eq!(rate_code(1, 0).unwrap_err().errno, Errno::EINVAL);
        assert_eq!(rate_code(26, 0).unwrap_err().errno, Errno::EINVAL);
        assert_eq!(rate_code(255, 0).unwrap_err().errno, Errno::EINVAL);
        // 10 Gb/s (3) is code 8; offered, it is taken.
        assert_eq!(rate_code(3, 1 << 8), Ok(8));
        // 40 Gb/s (7, code 12) not offered, 20 (6, code 11) neither, 10 is.
        assert_eq!(rate_code(7, 1 << 8), Ok(8));
        // The newer rates have their own codes.
        assert_eq!(rate_code(12, 1 << 1), Ok(1));
        assert_eq!(rate_code(15, 1 << 2), Ok(2));
        assert_eq!(rate_code(16, 1 << 3), Ok(3));
        assert_eq!(rate_code(20, 1 << 5), Ok(5));
        assert_eq!(rate_code(21, 1 << 6), Ok(6));
    }

    #[test]
    fn ib_address_vector() {
        let av = encode(&ib(0x1234, 5, 0), 0).unwrap();
        assert_eq!((av.rlid.get(), av.stat_rate_sl, av.fl_mlid), (0x1234, 5, 0));
        assert_eq!(av.grh_gid_fl.get(), 0);
        // The bytes as a datagram segment carries them (rate/SL at 12, LID big-endian
        // at 14).
        let b = av.as_bytes();
        assert_eq!(b.len(), 48);
        assert_eq!((b[12], b[13], b[14], b[15]), (5, 0, 0x12, 0x34));
        // SL takes 4 bits, path bits 7.
        let mut a = ib(1, 0x1f, 0);
        a.src_path_bits = 0xff;
        let av = encode(&a, 0).unwrap();
        assert_eq!((av.stat_rate_sl, av.fl_mlid), (0xf, 0x7f));
        // A rate the device offers lands in bits 7:4.
        let av = encode(&ib(1, 2, 3), 1 << 8).unwrap();
        assert_eq!(av.stat_rate_sl, 0x82);
    }

    #[test]
    fn grh_fields() {
        let mut a = ib(7, 1, 0);
        a.is_global = 1;
        a.dgid = [0xfe, 0x80, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8];
        a.flow_label = 0xabcde;
        a.sgid_index = 3;
        a.hop_limit = 64;
        a.traffic_class = 0x20;
        let av = encode(&a, 0).unwrap();
        assert_eq!(av.grh_gid_fl.get(), (1 << 30) | (3 << 20) | 0xabcde);
        assert_eq!((av.hop_limit, av.tclass, av.rgid), (64, 0x20, a.dgid));
        let b = decode(&av, AH_TYPE_IB);
        assert_eq!(
            (
                b.is_global,
                b.flow_label,
                b.sgid_index,
                b.hop_limit,
                b.traffic_class
            ),
            (1, 0xabcde, 3, 64, 0x20)
        );
        assert_eq!((b.dgid, b.dlid, b.sl, b.static_rate), (a.dgid, 7, 1, 0));
    }

    #[test]
    fn query_without_grh_and_refusals() {
        let av = encode(&ib(0xbeef, 9, 0), 0).unwrap();
        let b = decode(&av, AH_TYPE_IB);
        assert_eq!((b.is_global, b.dlid, b.sl, b.dgid), (0, 0xbeef, 9, [0; 16]));
        // Not InfiniBand: refused.
        let mut roce = ib(1, 0, 0);
        roce.ah_type = 2;
        assert_eq!(encode(&roce, 0).unwrap_err().errno, Errno::EINVAL);
        roce.ah_type = 0;
        assert_eq!(encode(&roce, 0).unwrap_err().errno, Errno::EINVAL);
        // A bad rate fails the whole create.
        assert_eq!(encode(&ib(1, 0, 1), 0).unwrap_err().errno, Errno::EINVAL);
    }
}
