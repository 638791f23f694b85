//! The performance management agent behind MAD_IFC: PerfMgmt Get ClassPortInfo,
//! PortCounters and PortCountersExtended, Set of the two counter attributes (a clear).
//!
//! The data and packet counters are the port's traffic as the data path moves it
//! (`dp/mad.rs` [`PortCounters`]); the error counters read 0 (no link errors are
//! modelled). The agent answers MAD_IFC and PerfMgmt MADs arriving on QP1 (the data
//! path's MAD QPs). Upstream sends PMA MADs to the firmware when cap `vport_counters`
//! is 0 (mlx5_ib mad.c `mlx5_ib_process_mad`); with it set it builds the answers
//! itself. Sources: emu/README.md.

use super::dp::mad::PortCounters;
use super::port::PORT_NUM;
use super::sma::MadResult;
use super::Firmware;
use crate::ifc::field::{Msg, MsgMut};
use crate::ifc::mad::{mad_status, method, smp, BASE_VERSION};
use crate::ifc::pma::{
    class_port_info as cpi, counter_select as sel, counter_select_ext as selx, pma_attr, pma_cap,
    pma_mad, port_counters as pc, port_counters_ext as pcx, PMA_CLASS_VERSION,
};

impl Firmware {
    /// Answers a PerfMgmt MAD into `resp` (a copy of the request); returns the MAD
    /// status, the data zeroed on a refusal.
    pub(super) fn answer_pma(&mut self, q: &Msg<'_, smp::Layout>, resp: &mut [u8]) -> u16 {
        let Some(mut r) = MsgMut::<pma_mad::Layout>::new(resp) else {
            return mad_status::INVALID_ATTRIB_VALUE;
        };
        let res = self.pma(q, r.bytes_mut(pma_mad::DATA));
        match res {
            Ok(()) => mad_status::SUCCESS,
            Err(st) => {
                r.bytes_mut(pma_mad::DATA).fill(0);
                st
            }
        }
    }

    fn pma(&mut self, q: &Msg<'_, smp::Layout>, data: &mut [u8]) -> MadResult {
        if q.get(smp::BASE_VERSION) != BASE_VERSION
            || q.get(smp::CLASS_VERSION) != PMA_CLASS_VERSION
        {
            return Err(mad_status::BAD_VERSION);
        }
        let m = q.get(smp::METHOD);
        if m != method::GET && m != method::SET {
            return Err(mad_status::UNSUPPORTED_METHOD);
        }
        let bad = |_| mad_status::INVALID_ATTRIB_VALUE;
        match q.get(smp::ATTR_ID) {
            pma_attr::CLASS_PORT_INFO if m == method::GET => {
                data.fill(0);
                let mut c =
                    MsgMut::<cpi::Layout>::new(data).ok_or(mad_status::INVALID_ATTRIB_VALUE)?;
                c.set(cpi::BASE_VERSION, BASE_VERSION).map_err(bad)?;
                c.set(cpi::CLASS_VERSION, PMA_CLASS_VERSION).map_err(bad)?;
                c.set(cpi::CAPABILITY_MASK, pma_cap::EXT_WIDTH)
                    .map_err(bad)?;
                c.set(cpi::RESP_TIME_VALUE, 18).map_err(bad)
            }
            pma_attr::PORT_COUNTERS => {
                let c = Msg::<pc::Layout>::new(data).ok_or(mad_status::INVALID_ATTRIB_VALUE)?;
                let (port, select) = (c.get(pc::PORT_SELECT), c.get(pc::COUNTER_SELECT));
                if port != PORT_NUM {
                    return Err(mad_status::INVALID_ATTRIB_VALUE);
                }
                // Set clears the counters CounterSelect names, then answers like Get
                // (IBTA 16.1.3.5); the 32-bit counters stop at their maximum.
                if m == method::SET {
                    self.dp.mad.counters.clear(
                        select & sel::XMIT_DATA != 0,
                        select & sel::RCV_DATA != 0,
                        select & sel::XMIT_PACKETS != 0,
                        select & sel::RCV_PACKETS != 0,
                    );
                }
                let k: &PortCounters = &self.dp.mad.counters;
                let sat = |v: u64| u32::try_from(v).unwrap_or(u32::MAX);
                data.fill(0);
                let mut c =
                    MsgMut::<pc::Layout>::new(data).ok_or(mad_status::INVALID_ATTRIB_VALUE)?;
                c.set(pc::PORT_SELECT, port).map_err(bad)?;
                c.set(pc::COUNTER_SELECT, select).map_err(bad)?;
                c.set(pc::PORT_XMIT_DATA, sat(k.xmit_words)).map_err(bad)?;
                c.set(pc::PORT_RCV_DATA, sat(k.rcv_words)).map_err(bad)?;
                c.set(pc::PORT_XMIT_PACKETS, sat(k.xmit_pkts))
                    .map_err(bad)?;
                c.set(pc::PORT_RCV_PACKETS, sat(k.rcv_pkts)).map_err(bad)
            }
            pma_attr::PORT_COUNTERS_EXT => {
                let c = Msg::<pcx::Layout>::new(data).ok_or(mad_status::INVALID_ATTRIB_VALUE)?;
                let (port, select) = (c.get(pcx::PORT_SELECT), c.get(pcx::COUNTER_SELECT));
                if port != PORT_NUM {
                    return Err(mad_status::INVALID_ATTRIB_VALUE);
                }
                // The same counters, 64 bits wide (IBTA 16.1.4.11).
                if m == method::SET {
                    self.dp.mad.counters.clear(
                        select & selx::XMIT_DATA != 0,
                        select & selx::RCV_DATA != 0,
                        select & selx::XMIT_PACKETS != 0,
                        select & selx::RCV_PACKETS != 0,
                    );
                }
                let k: &PortCounters = &self.dp.mad.counters;
                data.fill(0);
                let mut c =
                    MsgMut::<pcx::Layout>::new(data).ok_or(mad_status::INVALID_ATTRIB_VALUE)?;
                c.set(pcx::PORT_SELECT, port).map_err(bad)?;
                c.set(pcx::COUNTER_SELECT, select).map_err(bad)?;
                c.set(pcx::PORT_XMIT_DATA, k.xmit_words).map_err(bad)?;
                c.set(pcx::PORT_RCV_DATA, k.rcv_words).map_err(bad)?;
                c.set(pcx::PORT_XMIT_PACKETS, k.xmit_pkts).map_err(bad)?;
                c.set(pcx::PORT_RCV_PACKETS, k.rcv_pkts).map_err(bad)
            }
            _ => Err(mad_status::UNSUPPORTED_METHOD_ATTRIB),
        }
    }
}
