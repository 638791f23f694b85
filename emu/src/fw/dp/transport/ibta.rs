//! The IBTA's arithmetic the transport uses: packets per message, PSN distances, the
//! RNR and local ACK timer codes, the primary path in a QP context, P_Key matching.
//! See [`super`].

use crate::ifc::qp::qpc;
use std::time::Duration;

/// Packets of a `len`-byte message at path MTU code `mtu` (`qpc.mtu`: 1..5 = 256 ..
/// 4096 bytes; others as 4096); at least one (IBTA 9.7.1: a zero-length message is one
/// packet).
pub fn npkts(len: u64, mtu: u8) -> u32 {
    let m = if (1..=5).contains(&mtu) {
        128u64 << mtu
    } else {
        4096
    };
    len.div_ceil(m).clamp(1, 1 << 23) as u32
}

/// `a - b` in 24-bit PSN space, as a signed distance.
pub(super) fn psn_diff(a: u32, b: u32) -> i32 {
    ((a.wrapping_sub(b)) << 8) as i32 >> 8
}

/// The RNR NAK timer of code `c` (IBTA table 45, µs: 0 = 655.36 ms).
pub fn rnr_timer(c: u8) -> Duration {
    const US: [u32; 32] = [
        655_360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960, 1280, 1920, 2560, 3840,
        5120, 7680, 10240, 15360, 20480, 30720, 40960, 61440, 81920, 122_880, 163_840, 245_760,
        327_680, 491_520,
    ];
    Duration::from_micros(u64::from(US[usize::from(c & 31)]))
}

/// The local ACK timeout of code `c`: 4.096 µs × 2^c; 0 = infinite (IBTA 9.7.6.1.3,
/// `qpc.primary_address_path.ack_timeout`).
pub fn ack_timeout(c: u8) -> Option<Duration> {
    (c != 0).then(|| Duration::from_nanos(4096u64 << c.min(31)))
}

/// The primary address path (`ads`) inside a QP context (empty if the context is
/// short).
pub(super) fn primary_path(ctx: &[u8]) -> &[u8] {
    ctx.get(qpc::PRIMARY_ADDRESS_PATH.raw().byte_off()..)
        .unwrap_or(&[])
}

/// P_Key match (IBTA 10.9.3): equal base keys and at least one full member.
pub(crate) fn pkey_match(a: u16, b: u16) -> bool {
    (a & 0x7fff) == (b & 0x7fff) && (a | b) & 0x8000 != 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn psn_and_timers() {
        assert_eq!(psn_diff(0, 0xff_ffff), 1);
        assert_eq!(psn_diff(0xff_ffff, 0), -1);
        assert_eq!(npkts(0, 3), 1);
        assert_eq!(npkts(1024, 3), 1);
        assert_eq!(npkts(1025, 3), 2);
        assert_eq!(npkts(8192, 5), 2);
        assert_eq!(rnr_timer(0), Duration::from_micros(655_360));
        assert_eq!(rnr_timer(1), Duration::from_micros(10));
        assert_eq!(rnr_timer(31), Duration::from_micros(491_520));
        assert_eq!(ack_timeout(0), None);
        assert_eq!(ack_timeout(1), Some(Duration::from_nanos(8192)));
        assert!(pkey_match(0xffff, 0x7fff));
        assert!(!pkey_match(0x7fff, 0x7fff));
        assert!(!pkey_match(0xffff, 0x8001));
    }
}
