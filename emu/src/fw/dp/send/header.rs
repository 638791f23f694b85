//! The packet header a send carries: connected QPs to their remote QP and primary
//! path, datagrams to their address vector; the port's LID, P_Key and GIDs. See
//! [`super`].

use crate::fw::dp::packet::{Grh, Header};
use crate::fw::qp_state::st;
use crate::fw::Firmware;
use crate::ifc::qp::{ads, qpc};

impl Firmware {
    /// The header of a packet QP `qpn` sends: connected QPs to their remote QP and
    /// path (`qpc.remote_qpn`, `primary_address_path`), datagrams to `av`.
    pub(super) fn tx_header(
        &self,
        qpn: u32,
        psn: u32,
        solicited: bool,
        av: Option<&crate::ifc::av::Av>,
    ) -> Header {
        let qp = &self.objs.qps[&qpn];
        let f = |fl: crate::ifc::field::Field| fl.get(&qp.ctx).unwrap_or(0);
        let p = qpc::PRIMARY_ADDRESS_PATH.raw().byte_off();
        let path = qp.ctx.get(p..).unwrap_or(&[]);
        let pf = |fl: crate::ifc::field::Field| fl.get(path).unwrap_or(0);
        let pkey_index = pf(ads::PKEY_INDEX.raw()) as usize;
        let pkey = self
            .ib_port
            .pkeys
            .get(pkey_index)
            .copied()
            .unwrap_or(0xffff);
        let sgid_of = |idx: usize| -> [u8; 16] {
            let mut g = [0u8; 16];
            g[..8].copy_from_slice(&self.ib_port.subnet_prefix.to_be_bytes());
            g[8..].copy_from_slice(
                &self
                    .ib_port
                    .guids
                    .get(idx)
                    .copied()
                    .unwrap_or(0)
                    .to_be_bytes(),
            );
            g
        };
        let (dlid, dqpn, sl, grh) = match av {
            Some(av) => {
                let g = av.grh_gid_fl.get();
                let grh = (g & crate::ifc::av::AV_GRH != 0).then(|| Grh {
                    sgid: sgid_of(((g >> 20) & 0xff) as usize),
                    dgid: av.rgid,
                    tclass: av.tclass,
                    flow_label: g & 0xf_ffff,
                    hop_limit: av.hop_limit,
                });
                (
                    av.rlid.get(),
                    av.dqp_dct.get() & 0xff_ffff,
                    av.stat_rate_sl & 0xf,
                    grh,
                )
            }
            None => {
                let grh = (pf(ads::GRH.raw()) != 0).then(|| {
                    let mut dgid = [0u8; 16];
                    if let Some(b) = ads::RGID_RIP.raw().bytes(path) {
                        dgid.copy_from_slice(&b[..16]);
                    }
                    Grh {
                        sgid: sgid_of(pf(ads::SRC_ADDR_INDEX.raw()) as usize),
                        dgid,
                        tclass: pf(ads::TCLASS.raw()) as u8,
                        flow_label: pf(ads::FLOW_LABEL.raw()) as u32,
                        hop_limit: pf(ads::HOP_LIMIT.raw()) as u8,
                    }
                });
                (
                    pf(ads::RLID.raw()) as u16,
                    f(qpc::REMOTE_QPN.raw()) as u32,
                    pf(ads::SL.raw()) as u8,
                    grh,
                )
            }
        };
        // The source QPN a datagram carries (DETH): 0 / 1 for the MAD QPs, the
        // context's `deth_sqpn` when set (upstream's GSI send QPs, `set_deth_sqpn`),
        // else the QP's number (IBTA 9.6.1.4 / 13.5).
        let sqpn = match qp.st {
            st::QP0 => 0,
            st::QP1 => 1,
            _ => match f(qpc::DETH_SQPN.raw()) as u32 {
                0 => qpn,
                n => n,
            },
        };
        let mlid = pf(ads::MLID.raw()) as u16;
        Header {
            slid: self.ib_port.lid | (mlid & ((1u16 << self.ib_port.lmc) - 1)),
            dlid,
            sl,
            grh,
            pkey,
            dqpn,
            sqpn,
            psn,
            solicited,
        }
    }
}
