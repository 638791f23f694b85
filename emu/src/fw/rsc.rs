//! Verbs objects: the object tables, their numbering, the device memory they cost,
//! and the commands of the context-less resources (PD, XRC domain, transport domain,
//! queue counter, special contexts).
//!
//! Rules and sources are listed in emu/README.md, "Verbs objects".

use super::util::{bad_param, get, put, CmdErr, CmdResult};
use super::{syndrome, Env, Firmware};
use crate::ifc::caps::cmd_hca_cap as g;
use crate::ifc::field::Field;
use crate::ifc::ib_res::{
    alloc_pd_out, alloc_q_counter_out, alloc_transport_domain_out, alloc_xrcd_out, dealloc_pd_in,
    dealloc_q_counter_in, dealloc_transport_domain_in, dealloc_xrcd_in, query_q_counter_in,
    query_special_contexts_out,
};
use crate::ifc::status::CmdStatus;
use std::collections::{BTreeMap, BTreeSet};

/// Special mkeys QUERY_SPECIAL_CONTEXTS reports (ours: fixed keys in the mkey indices
/// below [`FIRST_MKEY_INDEX`], which CREATE_MKEY never hands out). `resd_lkey` /
/// terminate = 0x100 is the value upstream assumes when the cap is absent
/// (`MLX5_TERMINATE_SCATTER_LIST_LKEY`).
pub mod special_mkeys {
    /// Reserved lkey and terminate-scatter-list mkey.
    pub const RESD_LKEY: u32 = 0x100;
    /// Null mkey.
    pub const NULL_MKEY: u32 = 0x200;
    /// Dump-fill mkey.
    pub const DUMP_FILL_MKEY: u32 = 0x300;
    /// Repeated mkey.
    pub const REPEATED_MKEY: u32 = 0x400;
}

/// First mkey index CREATE_MKEY hands out (lower indices hold the special mkeys).
pub const FIRST_MKEY_INDEX: u32 = 8;

/// Default objects per page of firmware object memory (`object_pages` knob).
pub const DEFAULT_OBJECTS_PER_PAGE: u32 = 64;

/// A number space: numbers handed out lowest free first, from `first` up to the field
/// width.
#[derive(Clone, Debug)]
pub struct Numbers {
    first: u32,
    last: u32,
    used: BTreeSet<u32>,
}

impl Numbers {
    /// Numbers `first..=last`.
    pub const fn new(first: u32, last: u32) -> Self {
        Numbers {
            first,
            last,
            used: BTreeSet::new(),
        }
    }

    /// Allocates the lowest free number, at most `limit` in use at once.
    pub fn alloc(&mut self, limit: u64) -> Result<u32, CmdErr> {
        if self.used.len() as u64 >= limit {
            return Err((CmdStatus::LIM_ERR, syndrome::LIMIT));
        }
        let mut n = self.first;
        for &u in self.used.range(self.first..) {
            if u != n {
                break;
            }
            n += 1;
        }
        if n > self.last {
            return Err((CmdStatus::NO_RES_ERR, syndrome::LIMIT));
        }
        self.used.insert(n);
        Ok(n)
    }

    /// Frees `n`; false when it was not allocated.
    pub fn free(&mut self, n: u32) -> bool {
        self.used.remove(&n)
    }

    /// Whether `n` is allocated.
    pub fn contains(&self, n: u32) -> bool {
        self.used.contains(&n)
    }

    /// Numbers in use.
    pub fn len(&self) -> usize {
        self.used.len()
    }

    /// No number in use.
    pub fn is_empty(&self) -> bool {
        self.used.is_empty()
    }

    /// The numbers in use.
    pub fn iter(&self) -> impl Iterator<Item = &u32> {
        self.used.iter()
    }

    fn clear(&mut self) {
        self.used.clear();
    }
}

/// Firmware object memory: objects cost pages the firmware asks the driver for.
#[derive(Clone, Debug)]
pub struct PageCost {
    /// Objects per 4 KiB page (0 = objects cost nothing). The first page's worth is
    /// covered by the init pages; each further `objects_per_page` objects make the
    /// firmware raise a +1 page request, and freeing them a −1 request.
    pub objects_per_page: u32,
    /// Pages requested for objects and not released yet.
    pub charged: u32,
    /// Page requests raised for objects (give, take).
    pub requests: (u64, u64),
    /// Requests that could not be raised (no pages EQ, function stopped).
    pub not_raised: u64,
}

impl Default for PageCost {
    fn default() -> Self {
        PageCost {
            objects_per_page: DEFAULT_OBJECTS_PER_PAGE,
            charged: 0,
            requests: (0, 0),
            not_raised: 0,
        }
    }
}

/// A completion queue.
#[derive(Clone, Debug)]
pub struct Cq {
    /// The CQ context as created (`cqc`), device-owned fields kept up to date.
    pub ctx: Vec<u8>,
    /// Buffer pages.
    pub pas: Vec<u64>,
    /// EQ its completion events go to.
    pub eqn: u8,
    /// UAR page of its doorbell.
    pub uar: u32,
    /// log2 of the number of CQEs.
    pub log_size: u8,
    /// CQE size in bytes (64 or 128).
    pub cqe_bytes: u32,
    /// Doorbell record address.
    pub dbr: u64,
    /// log2 of the buffer page size in 4 KiB units.
    pub log_page_size: u8,
    /// CQEs written so far (producer counter).
    pub pi: u32,
    /// Armed through the UAR doorbell (next completion raises an EQE).
    pub armed: bool,
    /// Armed for solicited completions only.
    pub solicited_only: bool,
    /// Data-path state (`dp/cqe.rs`).
    pub dp: super::dp::cqe::CqState,
}

/// A queue pair.
#[derive(Clone, Debug)]
pub struct Qp {
    /// Service type (`qpc.st`).
    pub st: u8,
    /// Current state (`MLX5_QP_STATE_*`).
    pub state: u8,
    /// The QP context (`qpc`) as created and modified.
    pub ctx: Vec<u8>,
    /// Buffer pages.
    pub pas: Vec<u64>,
    /// Protection domain.
    pub pd: u32,
    /// Send CQ (None without SQ).
    pub cqn_snd: Option<u32>,
    /// Receive CQ (None with a zero-length RQ).
    pub cqn_rcv: Option<u32>,
    /// SRQ / RMP (rq_type SRQ).
    pub srqn: Option<u32>,
    /// XRC domain (XRC service type or SRQ receive).
    pub xrcd: Option<u32>,
    /// Send WQEs consumed so far (send path).
    pub sq_consumed: u16,
    /// Requester and responder state (`dp/send/state.rs`, `dp/transport/state.rs`).
    pub dp_send: super::dp::send::state::SqState,
    /// Receive queue state (`dp/recv.rs`).
    pub dp_recv: super::dp::recv::RqState,
}

/// Kind of a shared receive queue (one number space for the three, as upstream's
/// `mlx5_ib` SRQ table keys them all by number and a QP's `srqn_rmpn_xrqn` names any).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SrqKind {
    /// CREATE_SRQ.
    Basic,
    /// CREATE_XRC_SRQ.
    Xrc,
    /// CREATE_RMP.
    Rmp,
}

impl SrqKind {
    /// Name in `stats`.
    pub fn name(self) -> &'static str {
        match self {
            SrqKind::Basic => "srq",
            SrqKind::Xrc => "xrc_srq",
            SrqKind::Rmp => "rmp",
        }
    }
}

/// A shared receive queue.
#[derive(Clone, Debug)]
pub struct Srq {
    /// Which command created it.
    pub kind: SrqKind,
    /// Its context (`srqc`, `xrc_srqc` or `rmpc`) as created.
    pub ctx: Vec<u8>,
    /// Buffer pages.
    pub pas: Vec<u64>,
    /// Protection domain.
    pub pd: u32,
    /// Completion queue (XRC SRQ).
    pub cqn: Option<u32>,
    /// XRC domain (XRC SRQ).
    pub xrcd: Option<u32>,
    /// Receive state (`dp/recv.rs`).
    pub dp: super::dp::recv::SrqState,
}

/// A memory key.
#[derive(Clone, Debug)]
pub struct Mkey {
    /// The mkey context (`mkc`) as created.
    pub ctx: Vec<u8>,
    /// Protection domain.
    pub pd: u32,
    /// Translation entries (octwords) given with it.
    pub translations: Vec<u8>,
    /// Translation and state as the data path sees them (`dp/xlate.rs`, `dp/umr.rs`).
    pub dp: super::dp::xlate::MkeyState,
}

/// Every verbs object of the function.
#[derive(Clone, Debug)]
pub struct Objects {
    /// Protection domains.
    pub pds: Numbers,
    /// XRC domains.
    pub xrcds: Numbers,
    /// Transport domains.
    pub tds: Numbers,
    /// Queue counters.
    pub q_counters: Numbers,
    /// CQ numbers.
    pub cqns: Numbers,
    /// CQs.
    pub cqs: BTreeMap<u32, Cq>,
    /// QP numbers.
    pub qpns: Numbers,
    /// QPs.
    pub qps: BTreeMap<u32, Qp>,
    /// SRQ / XRC SRQ / RMP numbers.
    pub srqns: Numbers,
    /// SRQs, XRC SRQs and RMPs.
    pub srqs: BTreeMap<u32, Srq>,
    /// Mkey indices.
    pub mkey_idx: Numbers,
    /// Mkeys by index.
    pub mkeys: BTreeMap<u32, Mkey>,
    /// Object memory.
    pub cost: PageCost,
    /// Objects created, by type (kept across resets).
    pub created: BTreeMap<&'static str, u64>,
    /// Objects destroyed, by type (kept across resets).
    pub destroyed: BTreeMap<&'static str, u64>,
    /// Objects still alive at a teardown or reset, dropped by it (kept across resets).
    pub dropped: u64,
    /// First dword of a CQ arm doorbell (UAR +0x20) per UAR page, until its second
    /// dword (the CQ number, +0x24) arrives.
    pub cq_arm_words: BTreeMap<u32, u32>,
    /// The UAR page of each destroyed QP (by QPN) and CQ (by CQN) until its number is
    /// given again or its page's UAR is deallocated: a send or arm doorbell naming it on
    /// that page is one rung before the UAR went away, not a driver's error (the RDMA
    /// core destroys a user context's objects before it unmaps the context's UAR pages:
    /// `uverbs_destroy_ufile_hw`, then `ufile_destroy_ucontext`).
    pub destroyed_qp_uar: BTreeMap<u32, u32>,
    /// See `destroyed_qp_uar`.
    pub destroyed_cq_uar: BTreeMap<u32, u32>,
}

impl Default for Objects {
    fn default() -> Self {
        // Number spaces: 24-bit object numbers (`mlx5_ifc.h` field widths); 8-bit
        // counter_set_id. Our choice: numbers from 1 (PD, XRCD, TD, CQ, SRQ), QPs from
        // 8, counter 0 is the default counter set, mkey indices from
        // FIRST_MKEY_INDEX.
        Objects {
            pds: Numbers::new(1, 0xff_ffff),
            xrcds: Numbers::new(1, 0xff_ffff),
            tds: Numbers::new(1, 0xff_ffff),
            q_counters: Numbers::new(1, 0xff),
            cqns: Numbers::new(1, 0xff_ffff),
            cqs: BTreeMap::new(),
            qpns: Numbers::new(8, 0xff_fffe),
            qps: BTreeMap::new(),
            srqns: Numbers::new(1, 0xff_ffff),
            srqs: BTreeMap::new(),
            mkey_idx: Numbers::new(FIRST_MKEY_INDEX, 0xff_ffff),
            mkeys: BTreeMap::new(),
            cost: PageCost::default(),
            created: BTreeMap::new(),
            destroyed: BTreeMap::new(),
            dropped: 0,
            cq_arm_words: BTreeMap::new(),
            destroyed_qp_uar: BTreeMap::new(),
            destroyed_cq_uar: BTreeMap::new(),
        }
    }
}

impl Objects {
    /// Live objects per type, as `stats` `objects` lists them.
    pub fn counts(&self) -> Vec<(&'static str, usize)> {
        let srq = |k: SrqKind| self.srqs.values().filter(|s| s.kind == k).count();
        vec![
            ("pd", self.pds.len()),
            ("xrcd", self.xrcds.len()),
            ("transport_domain", self.tds.len()),
            ("q_counter", self.q_counters.len()),
            ("cq", self.cqs.len()),
            ("qp", self.qps.len()),
            ("srq", srq(SrqKind::Basic)),
            ("xrc_srq", srq(SrqKind::Xrc)),
            ("rmp", srq(SrqKind::Rmp)),
            ("mkey", self.mkeys.len()),
        ]
    }

    /// All live objects.
    pub fn total(&self) -> usize {
        self.counts().iter().map(|(_, n)| n).sum()
    }

    /// Forgets every object (teardown, reset); returns how many there were.
    pub fn drop_all(&mut self) -> usize {
        let n = self.total();
        self.dropped += n as u64;
        for s in [
            &mut self.pds,
            &mut self.xrcds,
            &mut self.tds,
            &mut self.q_counters,
            &mut self.cqns,
            &mut self.qpns,
            &mut self.srqns,
            &mut self.mkey_idx,
        ] {
            s.clear();
        }
        self.cqs.clear();
        self.qps.clear();
        self.srqs.clear();
        self.mkeys.clear();
        self.cq_arm_words.clear();
        self.destroyed_qp_uar.clear();
        self.destroyed_cq_uar.clear();
        self.cost.charged = 0;
        n
    }

    /// What references PD `pd` (for a destroy check).
    pub fn pd_users(&self, pd: u32) -> usize {
        self.qps.values().filter(|q| q.pd == pd).count()
            + self.srqs.values().filter(|s| s.pd == pd).count()
            + self.mkeys.values().filter(|m| m.pd == pd).count()
    }

    /// What references CQ `cqn`.
    pub fn cq_users(&self, cqn: u32) -> usize {
        self.qps
            .values()
            .filter(|q| q.cqn_snd == Some(cqn) || q.cqn_rcv == Some(cqn))
            .count()
            + self.srqs.values().filter(|s| s.cqn == Some(cqn)).count()
    }

    /// What references SRQ `srqn`.
    pub fn srq_users(&self, srqn: u32) -> usize {
        self.qps.values().filter(|q| q.srqn == Some(srqn)).count()
    }

    /// What references XRC domain `xrcd`.
    pub fn xrcd_users(&self, xrcd: u32) -> usize {
        self.qps.values().filter(|q| q.xrcd == Some(xrcd)).count()
            + self.srqs.values().filter(|s| s.xrcd == Some(xrcd)).count()
    }

    /// What references EQ `eqn` (CQs).
    pub fn eq_users(&self, eqn: u8) -> usize {
        self.cqs.values().filter(|c| c.eqn == eqn).count()
    }
}

/// Unknown object number: status 0x5 BAD_RES (PRM status list; upstream
/// `cmd_status_str` "bad resource").
pub fn bad_res() -> CmdErr {
    (CmdStatus::BAD_RES_ERR, syndrome::BAD_RESOURCE)
}

/// Object still referenced, refused (strict rule `destroy_in_use`): status 0x9
/// BAD_RES_STATE.
pub fn busy() -> CmdErr {
    (CmdStatus::BAD_RES_STATE_ERR, syndrome::RESOURCE_BUSY)
}

impl Firmware {
    /// `1 << cap` as a count limit.
    pub(super) fn cap_limit(&self, f: impl Into<Field>) -> u64 {
        1u64 << self.caps.cur(f.into()).min(32)
    }

    /// The input's `uid` must be 0: with cap `log_max_uctx` 0 no user context exists
    /// (PRM CREATE_UCTX; `mlx5_ifc.h` `uid` names one).
    pub(super) fn check_uid(&mut self, input: &[u8]) -> CmdResult {
        let uid = u16::from_be_bytes([input[2], input[3]]);
        if uid != 0 {
            self.stats
                .violation(format!("command with uid {uid} and no user context"));
            return Err(bad_param());
        }
        Ok(())
    }

    /// Counts a create and settles the object memory.
    pub(super) fn created(&mut self, env: &Env<'_>, kind: &'static str) {
        *self.objs.created.entry(kind).or_default() += 1;
        self.settle_object_pages(env);
    }

    /// Counts a destroy and settles the object memory.
    pub(super) fn destroyed(&mut self, env: &Env<'_>, kind: &'static str) {
        *self.objs.destroyed.entry(kind).or_default() += 1;
        self.settle_object_pages(env);
    }

    /// A destroy of an object something still references: counted as a violation
    /// (upstream destroys users first); refused with BAD_RES_STATE under strict rule
    /// `destroy_in_use`.
    pub(super) fn in_use(&mut self, what: &str, users: usize) -> CmdResult {
        if users == 0 {
            return Ok(());
        }
        self.stats
            .violation(format!("{what} destroyed while {users} objects use it"));
        if self.strict.destroy_in_use {
            return Err(busy());
        }
        Ok(())
    }

    /// Raises page requests so that the pages charged for objects match
    /// `objects / objects_per_page` (ours, see PageCost).
    fn settle_object_pages(&mut self, env: &Env<'_>) {
        let per = self.objs.cost.objects_per_page;
        if per == 0 {
            return;
        }
        let want = (self.objs.total() as u64 / u64::from(per)).min(1 << 20) as u32;
        let have = self.objs.cost.charged;
        if want == have {
            return;
        }
        let delta = i64::from(want) - i64::from(have);
        let n = delta.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32;
        match self.page_request(env, 0, n, false) {
            Ok(()) => {
                self.objs.cost.charged = want;
                if n > 0 {
                    self.objs.cost.requests.0 += 1;
                } else {
                    self.objs.cost.requests.1 += 1;
                }
            }
            Err(e) => {
                log::debug!("object page request of {n} not raised: {e}");
                self.objs.cost.not_raised += 1;
            }
        }
    }

    /// Teardown or reset: objects still alive are dropped (a violation at teardown:
    /// upstream `mlx5_ib` destroys every object before `mlx5_core` tears down).
    pub(super) fn drop_objects(&mut self, at: &str) {
        let n = self.objs.drop_all();
        if n != 0 && !at.is_empty() {
            self.stats
                .violation(format!("{at} with {n} verbs objects still alive"));
        }
    }

    pub(super) fn alloc_pd(&mut self, env: &Env<'_>, input: &[u8], out: &mut [u8]) -> CmdResult {
        self.check_uid(input)?;
        let lim = self.cap_limit(g::LOG_MAX_PD);
        let n = self.objs.pds.alloc(lim)?;
        put(out, alloc_pd_out::PD, u64::from(n))?;
        self.created(env, "pd");
        Ok(())
    }

    pub(super) fn dealloc_pd(&mut self, env: &Env<'_>, input: &[u8]) -> CmdResult {
        let pd = get(input, dealloc_pd_in::PD)? as u32;
        if !self.objs.pds.contains(pd) {
            return Err(bad_res());
        }
        self.in_use(&format!("PD {pd}"), self.objs.pd_users(pd))?;
        self.objs.pds.free(pd);
        self.destroyed(env, "pd");
        Ok(())
    }

    pub(super) fn alloc_xrcd(&mut self, env: &Env<'_>, input: &[u8], out: &mut [u8]) -> CmdResult {
        self.check_uid(input)?;
        // Cap `xrc` (upstream's DEVICE_RESOURCES stage needs it).
        if self.caps.cur(g::XRC.raw()) == 0 {
            return Err((CmdStatus::BAD_OP_ERR, syndrome::BAD_OPCODE));
        }
        let lim = self.cap_limit(g::LOG_MAX_XRCD);
        let n = self.objs.xrcds.alloc(lim)?;
        put(out, alloc_xrcd_out::XRCD, u64::from(n))?;
        self.created(env, "xrcd");
        Ok(())
    }

    pub(super) fn dealloc_xrcd(&mut self, env: &Env<'_>, input: &[u8]) -> CmdResult {
        let x = get(input, dealloc_xrcd_in::XRCD)? as u32;
        if !self.objs.xrcds.contains(x) {
            return Err(bad_res());
        }
        self.in_use(&format!("XRCD {x}"), self.objs.xrcd_users(x))?;
        self.objs.xrcds.free(x);
        self.destroyed(env, "xrcd");
        Ok(())
    }

    pub(super) fn alloc_td(&mut self, env: &Env<'_>, input: &[u8], out: &mut [u8]) -> CmdResult {
        self.check_uid(input)?;
        let lim = self.cap_limit(g::LOG_MAX_TRANSPORT_DOMAIN);
        let n = self.objs.tds.alloc(lim)?;
        put(
            out,
            alloc_transport_domain_out::TRANSPORT_DOMAIN,
            u64::from(n),
        )?;
        self.created(env, "transport_domain");
        Ok(())
    }

    pub(super) fn dealloc_td(&mut self, env: &Env<'_>, input: &[u8]) -> CmdResult {
        let n = get(input, dealloc_transport_domain_in::TRANSPORT_DOMAIN)? as u32;
        // No object of this model references a transport domain (TIS/TIR are not
        // modelled).
        if !self.objs.tds.free(n) {
            return Err(bad_res());
        }
        self.destroyed(env, "transport_domain");
        Ok(())
    }

    pub(super) fn alloc_q_counter(
        &mut self,
        env: &Env<'_>,
        input: &[u8],
        out: &mut [u8],
    ) -> CmdResult {
        self.check_uid(input)?;
        // Cap max_qp_cnt (a count, not a log): 0 = no queue counters.
        let lim = self.caps.cur(g::MAX_QP_CNT.raw());
        let n = self.objs.q_counters.alloc(lim)?;
        put(out, alloc_q_counter_out::COUNTER_SET_ID, u64::from(n))?;
        self.created(env, "q_counter");
        Ok(())
    }

    pub(super) fn dealloc_q_counter(&mut self, env: &Env<'_>, input: &[u8]) -> CmdResult {
        let n = get(input, dealloc_q_counter_in::COUNTER_SET_ID)? as u32;
        if !self.objs.q_counters.free(n) {
            return Err(bad_res());
        }
        self.destroyed(env, "q_counter");
        Ok(())
    }

    pub(super) fn query_q_counter(&mut self, input: &[u8], out: &mut [u8]) -> CmdResult {
        let n = get(input, query_q_counter_in::COUNTER_SET_ID)? as u32;
        let other = get(input, query_q_counter_in::OTHER_VPORT)?;
        let aggregate = get(input, query_q_counter_in::AGGREGATE)?;
        // other_vport: no other vport exists (one function); aggregate is not modelled.
        if other != 0 || aggregate != 0 {
            return Err(bad_param());
        }
        // Counter 0 is the default set and always exists (upstream reads it when no
        // counter was allocated).
        if n != 0 && !self.objs.q_counters.contains(n) {
            return Err(bad_res());
        }
        // No traffic is modelled: every counter reads 0 (output already zero).
        super::util::need_out(out, crate::ifc::ib_res::query_q_counter_out::BYTES)
    }

    pub(super) fn query_special_contexts(&mut self, out: &mut [u8]) -> CmdResult {
        use query_special_contexts_out as o;
        use special_mkeys as k;
        put(out, o::RESD_LKEY, u64::from(k::RESD_LKEY))?;
        put(out, o::TERMINATE_SCATTER_LIST_MKEY, u64::from(k::RESD_LKEY))?;
        put(out, o::NULL_MKEY, u64::from(k::NULL_MKEY))?;
        put(out, o::DUMP_FILL_MKEY, u64::from(k::DUMP_FILL_MKEY))?;
        put(out, o::REPEATED_MKEY, u64::from(k::REPEATED_MKEY))
    }
}

/// Reads `n` buffer page addresses (`pas[]`, big-endian 64-bit) at byte `off` of the
/// input: each 4 KiB aligned (`mlx5_ifc.h` `pas` entries carry address bits 63:12)
/// and in guest memory for `page` bytes (a DMA target). Address 0 is not special.
pub(super) fn read_pas(
    fw: &mut Firmware,
    env: &Env<'_>,
    what: &str,
    input: &[u8],
    off: usize,
    n: usize,
    page: u64,
) -> Result<Vec<u64>, CmdErr> {
    super::util::need_in(input, off.saturating_add(n.saturating_mul(8)))?;
    let pas: Vec<u64> = input[off..off + 8 * n]
        .chunks_exact(8)
        .map(|c| u64::from_be_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]))
        .collect();
    if let Some(a) = pas
        .iter()
        .find(|&&a| !a.is_multiple_of(4096) || !env.mem.is_mapped(a, page))
    {
        fw.stats
            .violation(format!("{what}: bad buffer page {a:#x}"));
        return Err(bad_param());
    }
    Ok(pas)
}

/// Pages of `page` bytes a buffer of `bytes` bytes starting `offset` bytes into its
/// first page needs; `None` when absurd (more than 2^20 pages).
pub(super) fn pages_for(bytes: u64, offset: u64, page: u64) -> Option<usize> {
    let n = bytes.checked_add(offset)?.div_ceil(page.max(1));
    (n <= 1 << 20).then_some(n as usize)
}

/// A doorbell record must be 8-byte aligned and in guest memory (ours: the device
/// writes and reads it by DMA; upstream allocates it from its doorbell pages).
pub(super) fn check_dbr(fw: &mut Firmware, env: &Env<'_>, what: &str, dbr: u64) -> CmdResult {
    if !dbr.is_multiple_of(8) || !env.mem.is_mapped(dbr, 8) {
        fw.stats
            .violation(format!("{what}: bad doorbell record {dbr:#x}"));
        return Err(bad_param());
    }
    Ok(())
}
