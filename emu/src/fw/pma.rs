//! The performance management agent behind MAD_IFC: PerfMgmt Get ClassPortInfo,
//! PortCounters and PortCountersExtended, Set of the two counter attributes (a clear).
//!
//! Nothing moves data yet, so every counter reads 0. Upstream sends PMA MADs to the
//! firmware when cap `vport_counters` is 0 (mlx5_ib mad.c `mlx5_ib_process_mad`);
//! with it set it builds the answers itself. Sources: emu/README.md.

use super::port::PORT_NUM;
use super::sma::MadResult;
use super::Firmware;
use crate::ifc::field::{Msg, MsgMut};
use crate::ifc::mad::{mad_status, method, smp, BASE_VERSION};
use crate::ifc::pma::{
    class_port_info as cpi, pma_attr, pma_cap, pma_mad, port_counters as pc,
    port_counters_ext as pcx, PMA_CLASS_VERSION,
};

impl Firmware {
    /// Answers a PerfMgmt MAD into `resp` (a copy of the request); returns the MAD
    /// status, the data zeroed on a refusal.
    pub(super) fn answer_pma(&self, q: &Msg<'_, smp::Layout>, resp: &mut [u8]) -> u16 {
        let Some(mut r) = MsgMut::<pma_mad::Layout>::new(resp) else {
            return mad_status::INVALID_ATTRIB_VALUE;
        };
        let res = Self::pma(q, r.bytes_mut(pma_mad::DATA));
        match res {
            Ok(()) => mad_status::SUCCESS,
            Err(st) => {
                r.bytes_mut(pma_mad::DATA).fill(0);
                st
            }
        }
    }

    fn pma(q: &Msg<'_, smp::Layout>, data: &mut [u8]) -> MadResult {
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
                // Get reads, Set clears the selected counters: every counter is 0.
                data.fill(0);
                let mut c =
                    MsgMut::<pc::Layout>::new(data).ok_or(mad_status::INVALID_ATTRIB_VALUE)?;
                c.set(pc::PORT_SELECT, port).map_err(bad)?;
                c.set(pc::COUNTER_SELECT, select).map_err(bad)
            }
            pma_attr::PORT_COUNTERS_EXT => {
                let c = Msg::<pcx::Layout>::new(data).ok_or(mad_status::INVALID_ATTRIB_VALUE)?;
                let (port, select) = (c.get(pcx::PORT_SELECT), c.get(pcx::COUNTER_SELECT));
                if port != PORT_NUM {
                    return Err(mad_status::INVALID_ATTRIB_VALUE);
                }
                data.fill(0);
                let mut c =
                    MsgMut::<pcx::Layout>::new(data).ok_or(mad_status::INVALID_ATTRIB_VALUE)?;
                c.set(pcx::PORT_SELECT, port).map_err(bad)?;
                c.set(pcx::COUNTER_SELECT, select).map_err(bad)
            }
            _ => Err(mad_status::UNSUPPORTED_METHOD_ATTRIB),
        }
    }
}
