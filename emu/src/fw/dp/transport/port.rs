//! The port: a packet to this port's own LIDs loops back to this device (handled in
//! the same firmware step by [`Firmware::dp_pump`]), any other goes to the wire as a
//! frame; a frame from the wire is taken only for a DLID of this port. Requests go to
//! the responder, responses to the requester. See [`super`].

use crate::fw::dp::mad;
use crate::fw::dp::packet::Packet;
use crate::fw::{Env, Firmware};

/// Most packets handled in one pump (a bound on the work one doorbell causes; the
/// rest stays queued for the next step).
const MAX_PUMP: usize = 1 << 16;

impl Firmware {
    /// Sends `pkt` toward `dlid`: this port's own LID (within its LMC range) is
    /// loopback, anything else goes to the wire.
    pub(crate) fn port_deliver(&mut self, _env: &Env<'_>, dlid: u16, pkt: Packet) {
        let lid = self.ib_port.lid;
        let lmc = self.ib_port.lmc.min(7);
        // dpmad: a directed-route SMP with hop count 0 is for this port whatever its
        // DLID (dp/mad.rs `stays_local`, IBTA 14.2.2).
        if (lid != 0 && dlid >> lmc == lid >> lmc) || mad::stays_local(&pkt) {
            self.dp.send.transport.loopback += 1;
            // dpmad: the port counts what it sends, looped back or not (PMA
            // PortCounters, dp/mad.rs).
            self.dp.mad.counters.count_tx(&pkt);
            self.dp.send.loopback.push_back(pkt);
            return;
        }
        let frame = pkt.encode();
        match self.wire_send(frame) {
            Ok(()) => {
                self.dp.send.transport.to_wire += 1;
                self.dp.mad.counters.count_tx(&pkt);
            }
            // No route: the packet is lost; an RC requester times out.
            Err(_) => self.dp.send.transport.no_route += 1,
        }
    }

    /// A frame from the peer device (the wire's delivery).
    pub(crate) fn receive_frame(&mut self, env: &Env<'_>, frame: &[u8]) {
        match Packet::decode(frame) {
            Ok(p) if !self.dlid_accepted(&p) => {
                self.dp.send.transport.drop_dlid += 1;
                log::debug!(
                    "wire frame for DLID {:#x} dropped (port LID {:#x}, LMC {})",
                    p.hdr.dlid,
                    self.ib_port.lid,
                    self.ib_port.lmc
                );
            }
            Ok(p) => {
                self.dp_receive(env, p);
                self.dp_pump(env);
            }
            Err(e) => {
                self.dp.send.transport.bad_frames += 1;
                log::debug!("wire frame: {}", e.0);
            }
        }
    }

    /// Whether this port takes a packet from the wire by its DLID: a unicast DLID
    /// must be one of the port's LIDs, base LID to base LID + 2^LMC − 1 (IBTA vol. 1
    /// ch. 7: the link layer's data packet check discards a packet whose DLID is not
    /// the port's, LIDs and LMC in 7.11; C7-66 as the IBTA compliance test
    /// TD_10.10.1.1.1 asserts it: every DLID the LMC covers, none outside); the
    /// permissive LID 0xffff
    /// only for a directed-route SMP to QP0 (IBTA 4.1.3 / 14.2.2: the permissive DLID
    /// serves directed-route SMPs); the reserved LID 0 never. Multicast DLIDs
    /// (0xc000…0xfffe) pass: no multicast groups are modelled, the QP lookup decides.
    fn dlid_accepted(&self, p: &Packet) -> bool {
        const PERMISSIVE: u16 = 0xffff;
        const MULTICAST: u16 = 0xc000;
        let dlid = p.hdr.dlid;
        let (lid, lmc) = (self.ib_port.lid, self.ib_port.lmc.min(7));
        match dlid {
            0 => false,
            PERMISSIVE => p.hdr.dqpn == 0 && mad::is_directed_route_smp(p),
            d if d >= MULTICAST => true,
            d => lid != 0 && d >> lmc == lid >> lmc,
        }
    }

    /// Handles the packets queued for this port (loopback), answers included.
    pub(crate) fn dp_pump(&mut self, env: &Env<'_>) {
        for _ in 0..MAX_PUMP {
            let Some(p) = self.dp.send.loopback.pop_front() else {
                return;
            };
            self.dp_receive(env, p);
        }
    }

    fn dp_receive(&mut self, env: &Env<'_>, p: Packet) {
        // dpmad: the port counts what it receives (PMA PortCounters, dp/mad.rs).
        self.dp.mad.counters.count_rx(&p);
        if p.is_request() {
            self.responder(env, p);
        } else {
            self.on_response(env, p);
        }
    }
}
