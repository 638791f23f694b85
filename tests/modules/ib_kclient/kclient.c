// SPDX-License-Identifier: GPL-2.0
/*
 * ib_kclient - a kernel consumer of an RDMA device's control verbs, as a ULP is one.
 *
 * Test module for `make check` (tests/scenarios-ib/92-upstream-kclient.sh on upstream
 * mlx5_ib, the oracle, and tests/scenarios/72-ib-kclient.sh on mlx5_rs); not part of
 * the mlx5_rs driver. It is an ib_client: for each IB device the RDMA core adds it
 * runs one walk through the kernel verbs and records each step's result:
 *
 *   port      ib_query_port (active, IB link layer, LID)
 *   pd        ib_alloc_pd with IB_PD_UNSAFE_GLOBAL_RKEY: the core takes a DMA MR
 *             from the provider (get_dma_mr); its lkey/rkey, pd->unsafe_global_rkey
 *             and pd->local_dma_lkey are checked against each other
 *   cq        ib_alloc_cq (vector 0, polled directly) and ib_create_cq on the last
 *             completion vector, each at least as deep as asked
 *   rc        an RC QP on both CQs: RESET -> INIT -> RTR -> RTS on a loopback path
 *             (remote QPN = its own, DLID = the port's LID), ib_query_qp after each
 *             step reading the state and the attributes back, then RTS -> ERR ->
 *             RESET; two transitions the verbs state table forbids (RESET -> RTS,
 *             RESET -> INIT without its required attributes) must fail with -EINVAL
 *             and leave the QP in RESET
 *   ud        a UD QP to RTS with a Q_Key, read back
 *   srq, ah   an SRQ (queried, and an RC QP created on it) and an address handle
 *             (queried), when the device offers them; reported as skipped when not
 *   destroy   everything above, in reverse order, each destroy's status checked
 *   traffic   only with the module parameter traffic=1 (traffic.c): data moved
 *             between two RC QPs in loopback through fast-registered MRs, the bytes
 *             checked after each operation; without it the walk is the one above
 *   bench     only with the module parameter bench=N (bench.c): N SENDs through one
 *             RC QP pair in chains of bench_batch, timed and counted exactly; with
 *             bench_bg=1 the rounds run in a kernel thread until the remove
 *   kverbs    only with the module parameter kverbs=1 (kverbs.c): receives through a
 *             kernel SRQ, a QP's completions removed from its CQ when it is reset
 *             or destroyed
 *   xrc       only with the module parameter xrc=1 (xrc.c): a kernel XRC initiator
 *             and target, created, connected, a send posted, destroyed, as upstream
 *   drain     only with the module parameter drain=1 (drain.c): a QP with work
 *             requests outstanding, armed at the first add and drained (ib_drain_qp)
 *             when that device is removed, after the scenario's fatal error
 *
 * Then it takes a second set (PD, CQ, an RC QP in RTS) that it keeps until the core
 * removes the device from the client (the device unregisters, or this module is
 * unloaded): `remove` destroys it, so the provider's unregister path meets live
 * kernel objects of a consumer, as it does under a real ULP.
 *
 * Results are KTAP-like lines, in the kernel log (prefix "ib_kclient: ") and in
 * debugfs ib_kclient/results (everything since the module was loaded):
 *   ok 7 1.rc.rtr                 (1 = the add's sequence number since load)
 *   not ok 8 1.rc.query-rtr # dest_qp_num 0 want 266
 *   ok 9 1.srq.create # SKIP device has no create_srq
 * and debugfs ib_kclient/summary: "adds A removes R pass P fail F skip S".
 *
 * The async events the provider raises on the client's QPs and SRQs (their
 * event_handler) are recorded in debugfs ib_kclient/events, one line each, oldest
 * first (at most KC_EVENTS):
 *   event 0 type=4 qpn=266        (enum ib_event_type; qpn for a QP event)
 *   event 1 type=15 srq           (an SRQ event)
 *
 * The client sets no_kverbs_req: the RDMA core adds a client that does not set it
 * only to devices with every kernel verb (ib_device_check_mandatory(), including the
 * data path: post_send, post_recv, poll_cq, req_notify_cq). mlx5_rs has no data path
 * yet, so without it the walk would never run there; upstream mlx5_ib has them all,
 * so the flag changes nothing for it. The walk uses no data-path verb (the traffic
 * step does, when asked for, and fails its first step on a device without them). For the same
 * reason each verb's op is looked for before it is called: the core calls some ops
 * (alloc_pd's get_dma_mr, create_cq, modify_qp) without checking that they exist.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <rdma/ib_verbs.h>

#include "kclient.h"

#define KC_LOG_SIZE (64 * 1024)
#define KC_PSN 0x1234
#define KC_QKEY 0x11111111
#define KC_AH_SL 3
#define KC_RC_ACCESS (IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_WRITE)
/* kc_rc_connect's QPs: the traffic step's RDMA and atomics reach them. */
#define KC_CONNECT_ACCESS (KC_RC_ACCESS | IB_ACCESS_REMOTE_ATOMIC)

static DEFINE_MUTEX(kc_lock);	/* guards everything below */
static char *kc_log;		/* the results, KC_LOG_SIZE bytes */
static size_t kc_len;
static unsigned int kc_no, kc_pass, kc_fail, kc_skip, kc_adds, kc_removes;
static struct dentry *kc_dir;

#define KC_EVENTS 64
static DEFINE_SPINLOCK(kc_ev_lock);	/* guards the events below (any context) */
static struct { int type; u32 qpn; bool srq; } kc_evs[KC_EVENTS];
static unsigned int kc_nev;

/* The set kept from add to remove. */
struct kc_dev {
	unsigned int gen;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_qp *qp;
	struct kb *bg;		/* the bench's background run (bench_bg) */
};

void kc_line(const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vscnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	pr_info("%s\n", buf);
	mutex_lock(&kc_lock);
	if (kc_log && kc_len + n + 1 < KC_LOG_SIZE) {
		memcpy(kc_log + kc_len, buf, n);
		kc_len += n;
		kc_log[kc_len++] = '\n';
	}
	mutex_unlock(&kc_lock);
}

static unsigned int kc_count(unsigned int *counter)
{
	unsigned int no;

	mutex_lock(&kc_lock);
	(*counter)++;
	no = ++kc_no;
	mutex_unlock(&kc_lock);
	return no;
}

/* kc_ok: one step's result (diag: why it failed); returns @ok. */
bool kc_ok(struct kc_run *r, bool ok, const char *step, const char *fmt, ...)
{
	unsigned int no = kc_count(ok ? &kc_pass : &kc_fail);
	char diag[192];
	va_list ap;

	if (ok) {
		kc_line("ok %u %u.%s", no, r->gen, step);
		return true;
	}
	va_start(ap, fmt);
	vscnprintf(diag, sizeof(diag), fmt, ap);
	va_end(ap);
	kc_line("not ok %u %u.%s #%s%s", no, r->gen, step, diag[0] == ' ' ? "" : " ", diag);
	return false;
}

static void kc_skip_step(struct kc_run *r, const char *step, const char *why)
{
	kc_line("ok %u %u.%s # SKIP %s", kc_count(&kc_skip), r->gen, step, why);
}

/* kc_op: the device has op @name (@present); a failed step @step otherwise. */
bool kc_op(struct kc_run *r, const void *present, const char *step, const char *name)
{
	return present || kc_ok(r, false, step, "device has no %s", name);
}

/* Mismatches of one read-back, collected into one diagnostic. */
struct kc_cmp {
	char diag[192];
	size_t len;
};

static void kc_eq(struct kc_cmp *c, const char *name, u64 got, u64 want)
{
	if (got != want)
		c->len += scnprintf(c->diag + c->len, sizeof(c->diag) - c->len,
				    " %s %llu want %llu", name, got, want);
}

static void kc_ge(struct kc_cmp *c, const char *name, u64 got, u64 want)
{
	if (got < want)
		c->len += scnprintf(c->diag + c->len, sizeof(c->diag) - c->len,
				    " %s %llu want >= %llu", name, got, want);
}

static bool kc_cmp_ok(struct kc_run *r, struct kc_cmp *c, const char *step)
{
	return kc_ok(r, c->len == 0, step, "%s", c->diag);
}

static void kc_cq_comp(struct ib_cq *cq, void *ctx)
{
}

void kc_event(struct ib_event *ev, void *ctx)
{
	bool srq = ev->event == IB_EVENT_SRQ_ERR || ev->event == IB_EVENT_SRQ_LIMIT_REACHED;
	unsigned long flags;

	pr_info("event %d on %s\n", ev->event, dev_name(&ev->device->dev));
	spin_lock_irqsave(&kc_ev_lock, flags);
	if (kc_nev < KC_EVENTS) {
		kc_evs[kc_nev].type = ev->event;
		kc_evs[kc_nev].srq = srq;
		kc_evs[kc_nev].qpn = srq ? 0 : ev->element.qp->qp_num;
		kc_nev++;
	}
	spin_unlock_irqrestore(&kc_ev_lock, flags);
}

static struct ib_qp *kc_create_qp(struct kc_run *r, const char *prefix, struct ib_pd *pd,
				  struct ib_cq *scq, struct ib_cq *rcq, struct ib_srq *srq,
				  enum ib_qp_type type)
{
	struct ib_qp_init_attr init = {
		.event_handler = kc_event,
		.send_cq = scq,
		.recv_cq = rcq,
		.srq = srq,
		.cap = {
			.max_send_wr = 16,
			.max_recv_wr = srq ? 0 : 16,
			.max_send_sge = 1,
			.max_recv_sge = srq ? 0 : 1,
		},
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.qp_type = type,
	};
	struct kc_cmp c = {};
	char step[48];
	struct ib_qp *qp;

	snprintf(step, sizeof(step), "%s.create", prefix);
	if (!kc_op(r, pd->device->ops.create_qp, step, "create_qp"))
		return NULL;
	qp = ib_create_qp(pd, &init);
	if (!kc_ok(r, !IS_ERR(qp), step, "err %d", PTR_ERR_OR_ZERO(qp)))
		return NULL;
	/* The core hands back the capabilities the provider granted. */
	kc_ge(&c, "max_send_wr", init.cap.max_send_wr, 16);
	kc_ge(&c, "max_send_sge", init.cap.max_send_sge, 1);
	if (!srq) {
		kc_ge(&c, "max_recv_wr", init.cap.max_recv_wr, 16);
		kc_ge(&c, "max_recv_sge", init.cap.max_recv_sge, 1);
	}
	/* QPN 0 and 1 are the special QPs; a created QP has a number of its own. */
	kc_ge(&c, "qp_num", qp->qp_num, 2);
	kc_eq(&c, "qp_type", qp->qp_type, type);
	snprintf(step, sizeof(step), "%s.caps", prefix);
	kc_cmp_ok(r, &c, step);
	return qp;
}

/*
 * kc_query: ib_query_qp into @a. Only a failure is a result (step @step, the one
 * whose comparison of what was read would follow).
 */
static bool kc_query(struct kc_run *r, struct ib_qp *qp, const char *step, struct ib_qp_attr *a)
{
	struct ib_qp_init_attr init;
	int err;

	memset(a, 0, sizeof(*a));
	if (!kc_op(r, qp->device->ops.query_qp, step, "query_qp"))
		return false;
	err = ib_query_qp(qp, a, IB_QP_STATE | IB_QP_PKEY_INDEX | IB_QP_PORT |
			  IB_QP_ACCESS_FLAGS | IB_QP_QKEY | IB_QP_AV | IB_QP_PATH_MTU |
			  IB_QP_DEST_QPN | IB_QP_RQ_PSN | IB_QP_MAX_DEST_RD_ATOMIC |
			  IB_QP_MIN_RNR_TIMER | IB_QP_SQ_PSN | IB_QP_TIMEOUT |
			  IB_QP_RETRY_CNT | IB_QP_RNR_RETRY | IB_QP_MAX_QP_RD_ATOMIC, &init);
	return !err || kc_ok(r, false, step, "err %d", err);
}

/* kc_modify: ib_modify_qp, step @step expects @want (0 or a -errno). */
bool kc_modify(struct kc_run *r, struct ib_qp *qp, const char *step,
	       struct ib_qp_attr *a, int mask, int want)
{
	int err;

	if (!kc_op(r, qp->device->ops.modify_qp, step, "modify_qp"))
		return false;
	err = ib_modify_qp(qp, a, mask);
	return kc_ok(r, err == want, step, "err %d want %d", err, want);
}

/* kc_query_state: the QP reads back in @want; nothing else checked. */
static bool kc_query_state(struct kc_run *r, struct ib_qp *qp, const char *step,
			   enum ib_qp_state want)
{
	struct ib_qp_attr a;
	struct kc_cmp c = {};

	if (!kc_query(r, qp, step, &a))
		return false;
	kc_eq(&c, "qp_state", a.qp_state, want);
	return kc_cmp_ok(r, &c, step);
}

static void kc_rc_init_attr(struct ib_qp_attr *a, u32 port, int access)
{
	memset(a, 0, sizeof(*a));
	a->qp_state = IB_QPS_INIT;
	a->pkey_index = 0;
	a->port_num = port;
	a->qp_access_flags = access;
}

#define KC_RC_INIT_MASK (IB_QP_STATE | IB_QP_PKEY_INDEX | IB_QP_PORT | IB_QP_ACCESS_FLAGS)
#define KC_RC_RTR_MASK (IB_QP_STATE | IB_QP_AV | IB_QP_PATH_MTU | IB_QP_DEST_QPN | \
			IB_QP_RQ_PSN | IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER)
#define KC_RC_RTS_MASK (IB_QP_STATE | IB_QP_TIMEOUT | IB_QP_RETRY_CNT | IB_QP_RNR_RETRY | \
			IB_QP_SQ_PSN | IB_QP_MAX_QP_RD_ATOMIC)

/* Loopback: the QP's remote @remote (itself, or another QP) through the port's own LID. */
static void kc_rc_rtr_attr(struct ib_qp_attr *a, struct ib_qp *qp, u32 remote, u32 port,
			   const struct ib_port_attr *pa)
{
	memset(a, 0, sizeof(*a));
	a->qp_state = IB_QPS_RTR;
	a->path_mtu = pa->active_mtu;
	a->dest_qp_num = remote;
	a->rq_psn = KC_PSN;
	a->max_dest_rd_atomic = 1;
	a->min_rnr_timer = 12;
	a->ah_attr.type = rdma_ah_find_type(qp->device, port);
	rdma_ah_set_dlid(&a->ah_attr, pa->lid);
	rdma_ah_set_sl(&a->ah_attr, 0);
	rdma_ah_set_path_bits(&a->ah_attr, 0);
	rdma_ah_set_port_num(&a->ah_attr, port);
}

static void kc_rc_rts_attr(struct ib_qp_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->qp_state = IB_QPS_RTS;
	a->timeout = 14;
	a->retry_cnt = 7;
	a->rnr_retry = 7;
	a->sq_psn = KC_PSN;
	a->max_rd_atomic = 1;
}

/*
 * kc_rc_connect: the RC QP @qp to RTS, connected to @remote through the port's own
 * LID (steps @prefix.init, .rtr, .rts): the walk's attributes, with remote access
 * KC_CONNECT_ACCESS.
 */
bool kc_rc_connect(struct kc_run *r, const char *prefix, struct ib_qp *qp, u32 remote,
		   u32 port, const struct ib_port_attr *pa)
{
	struct ib_qp_attr a;
	char step[48];

	kc_rc_init_attr(&a, port, KC_CONNECT_ACCESS);
	snprintf(step, sizeof(step), "%s.init", prefix);
	if (!kc_modify(r, qp, step, &a, KC_RC_INIT_MASK, 0))
		return false;
	kc_rc_rtr_attr(&a, qp, remote, port, pa);
	snprintf(step, sizeof(step), "%s.rtr", prefix);
	if (!kc_modify(r, qp, step, &a, KC_RC_RTR_MASK, 0))
		return false;
	kc_rc_rts_attr(&a);
	snprintf(step, sizeof(step), "%s.rts", prefix);
	return kc_modify(r, qp, step, &a, KC_RC_RTS_MASK, 0);
}

/* The RC QP's walk through its states, each step read back. */
static void kc_rc_walk(struct kc_run *r, struct ib_qp *qp, u32 port, const struct ib_port_attr *pa)
{
	struct ib_qp_attr a, q;
	struct kc_cmp c = {};

	if (!kc_query_state(r, qp, "rc.query-reset", IB_QPS_RESET))
		return;
	/* RESET -> RTS skips INIT and RTR: the verbs state table has no such edge. */
	kc_rc_rts_attr(&a);
	kc_modify(r, qp, "rc.reset-to-rts-rejected", &a, KC_RC_RTS_MASK, -EINVAL);
	/* RESET -> INIT requires the P_Key index, the port and the access flags. */
	kc_rc_init_attr(&a, port, KC_RC_ACCESS);
	kc_modify(r, qp, "rc.init-without-port-rejected", &a, IB_QP_STATE, -EINVAL);
	kc_query_state(r, qp, "rc.still-reset", IB_QPS_RESET);

	kc_rc_init_attr(&a, port, KC_RC_ACCESS);
	if (!kc_modify(r, qp, "rc.init", &a, KC_RC_INIT_MASK, 0))
		return;
	if (kc_query(r, qp, "rc.query-init", &q)) {
		kc_eq(&c, "qp_state", q.qp_state, IB_QPS_INIT);
		kc_eq(&c, "port_num", q.port_num, port);
		kc_eq(&c, "pkey_index", q.pkey_index, 0);
		/*
		 * Remote read needs responder resources, and the QP has none before RTR
		 * sets max_dest_rd_atomic: only remote write is granted yet (mlx5_ib
		 * masks the others off until then).
		 */
		kc_eq(&c, "qp_access_flags", q.qp_access_flags, IB_ACCESS_REMOTE_WRITE);
		kc_cmp_ok(r, &c, "rc.query-init");
	}

	kc_rc_rtr_attr(&a, qp, qp->qp_num, port, pa);
	if (!kc_modify(r, qp, "rc.rtr", &a, KC_RC_RTR_MASK, 0))
		return;
	if (kc_query(r, qp, "rc.query-rtr", &q)) {
		c.len = 0;
		kc_eq(&c, "qp_state", q.qp_state, IB_QPS_RTR);
		kc_eq(&c, "path_mtu", q.path_mtu, pa->active_mtu);
		kc_eq(&c, "dest_qp_num", q.dest_qp_num, qp->qp_num);
		kc_eq(&c, "rq_psn", q.rq_psn, KC_PSN);
		kc_eq(&c, "max_dest_rd_atomic", q.max_dest_rd_atomic, 1);
		kc_eq(&c, "min_rnr_timer", q.min_rnr_timer, 12);
		kc_eq(&c, "dlid", rdma_ah_get_dlid(&q.ah_attr), pa->lid);
		kc_eq(&c, "sl", rdma_ah_get_sl(&q.ah_attr), 0);
		kc_eq(&c, "port_num", q.port_num, port);
		kc_eq(&c, "qp_access_flags", q.qp_access_flags, KC_RC_ACCESS);
		kc_cmp_ok(r, &c, "rc.query-rtr");
	}

	kc_rc_rts_attr(&a);
	if (!kc_modify(r, qp, "rc.rts", &a, KC_RC_RTS_MASK, 0))
		return;
	if (kc_query(r, qp, "rc.query-rts", &q)) {
		c.len = 0;
		kc_eq(&c, "qp_state", q.qp_state, IB_QPS_RTS);
		kc_eq(&c, "sq_psn", q.sq_psn, KC_PSN);
		kc_eq(&c, "timeout", q.timeout, 14);
		kc_eq(&c, "retry_cnt", q.retry_cnt, 7);
		kc_eq(&c, "rnr_retry", q.rnr_retry, 7);
		kc_eq(&c, "max_rd_atomic", q.max_rd_atomic, 1);
		kc_eq(&c, "dest_qp_num", q.dest_qp_num, qp->qp_num);
		kc_eq(&c, "qp_access_flags", q.qp_access_flags, KC_RC_ACCESS);
		kc_cmp_ok(r, &c, "rc.query-rts");
	}

	memset(&a, 0, sizeof(a));
	a.qp_state = IB_QPS_ERR;
	if (kc_modify(r, qp, "rc.err", &a, IB_QP_STATE, 0))
		kc_query_state(r, qp, "rc.query-err", IB_QPS_ERR);
	a.qp_state = IB_QPS_RESET;
	if (kc_modify(r, qp, "rc.reset", &a, IB_QP_STATE, 0))
		kc_query_state(r, qp, "rc.query-reset-again", IB_QPS_RESET);
}

static void kc_ud_walk(struct kc_run *r, struct ib_qp *qp, u32 port)
{
	struct ib_qp_attr a = {
		.qp_state = IB_QPS_INIT,
		.pkey_index = 0,
		.port_num = port,
		.qkey = KC_QKEY,
	};
	struct kc_cmp c = {};
	struct ib_qp_attr q;

	if (!kc_modify(r, qp, "ud.init", &a, IB_QP_STATE | IB_QP_PKEY_INDEX | IB_QP_PORT |
		       IB_QP_QKEY, 0))
		return;
	memset(&a, 0, sizeof(a));
	a.qp_state = IB_QPS_RTR;
	if (!kc_modify(r, qp, "ud.rtr", &a, IB_QP_STATE, 0))
		return;
	a.qp_state = IB_QPS_RTS;
	a.sq_psn = KC_PSN;
	if (!kc_modify(r, qp, "ud.rts", &a, IB_QP_STATE | IB_QP_SQ_PSN, 0))
		return;
	if (kc_query(r, qp, "ud.query-rts", &q)) {
		kc_eq(&c, "qp_state", q.qp_state, IB_QPS_RTS);
		kc_eq(&c, "qkey", q.qkey, KC_QKEY);
		kc_eq(&c, "sq_psn", q.sq_psn, KC_PSN);
		kc_cmp_ok(r, &c, "ud.query-rts");
	}
}

static void kc_destroy_qp(struct kc_run *r, struct ib_qp *qp, const char *step)
{
	int err = ib_destroy_qp_user(qp, NULL);

	kc_ok(r, !err, step, "err %d", err);
}

static void kc_destroy_cq(struct kc_run *r, struct ib_cq *cq, const char *step)
{
	int err = ib_destroy_cq_user(cq, NULL);

	kc_ok(r, !err, step, "err %d", err);
}

/*
 * A PD or CQ still in use after a failed destroy of what uses it is left allocated
 * (and reported): the core WARNs when a kernel caller frees one in use.
 */
static void kc_dealloc_pd(struct kc_run *r, struct ib_pd *pd, const char *step)
{
	int err;

	if (atomic_read(&pd->usecnt)) {
		kc_ok(r, false, step, "still used %d times, left allocated",
		      atomic_read(&pd->usecnt));
		return;
	}
	err = ib_dealloc_pd_user(pd, NULL);
	kc_ok(r, !err, step, "err %d", err);
}

/* ib_free_cq has no status: the CQ is the provider's to destroy. */
static void kc_free_cq(struct kc_run *r, struct ib_cq *cq, const char *step)
{
	if (!kc_ok(r, !atomic_read(&cq->usecnt), step, "still used %d times, left allocated",
		   atomic_read(&cq->usecnt)))
		return;
	ib_free_cq(cq);
}

/* The SRQ: created, queried, an RC QP on it (if there is a CQ), all destroyed. */
static void kc_srq_walk(struct kc_run *r, struct ib_pd *pd, struct ib_cq *cq)
{
	struct ib_device *dev = pd->device;
	struct ib_srq_init_attr init = {
		.event_handler = kc_event,
		.attr = { .max_wr = 16, .max_sge = 1 },
		.srq_type = IB_SRQT_BASIC,
	};
	struct ib_srq_attr sa = {};
	struct kc_cmp c = {};
	struct ib_srq *srq;
	struct ib_qp *qp;
	int err;

	if (!dev->ops.create_srq) {
		kc_skip_step(r, "srq.create", "device has no create_srq");
		return;
	}
	srq = ib_create_srq(pd, &init);
	if (!kc_ok(r, !IS_ERR(srq), "srq.create", "err %d", PTR_ERR_OR_ZERO(srq)))
		return;
	err = ib_query_srq(srq, &sa);
	if (kc_ok(r, !err, "srq.query", "err %d", err)) {
		kc_ge(&c, "max_wr", sa.max_wr, 16);
		kc_ge(&c, "max_sge", sa.max_sge, 1);
		kc_cmp_ok(r, &c, "srq.query-attrs");
	}
	qp = cq ? kc_create_qp(r, "srq.rc", pd, cq, cq, srq, IB_QPT_RC) : NULL;
	if (qp)
		kc_destroy_qp(r, qp, "srq.rc.destroy");
	err = ib_destroy_srq_user(srq, NULL);
	kc_ok(r, !err, "srq.destroy", "err %d", err);
}

/* An address handle to the port's own LID, read back. */
static void kc_ah_walk(struct kc_run *r, struct ib_pd *pd, u32 port, const struct ib_port_attr *pa)
{
	struct rdma_ah_attr attr = {}, q = {};
	struct kc_cmp c = {};
	struct ib_ah *ah;
	int err;

	if (!pd->device->ops.create_ah) {
		kc_skip_step(r, "ah.create", "device has no create_ah");
		return;
	}
	attr.type = rdma_ah_find_type(pd->device, port);
	rdma_ah_set_dlid(&attr, pa->lid);
	rdma_ah_set_sl(&attr, KC_AH_SL);
	rdma_ah_set_port_num(&attr, port);
	ah = rdma_create_ah(pd, &attr, RDMA_CREATE_AH_SLEEPABLE);
	if (!kc_ok(r, !IS_ERR(ah), "ah.create", "err %d", PTR_ERR_OR_ZERO(ah)))
		return;
	err = rdma_query_ah(ah, &q);
	if (kc_ok(r, !err, "ah.query", "err %d", err)) {
		kc_eq(&c, "dlid", rdma_ah_get_dlid(&q), pa->lid);
		/* (mlx5_ib reads back no port: the AH's type, DLID, SL, rate and GRH.) */
		kc_eq(&c, "sl", rdma_ah_get_sl(&q), KC_AH_SL);
		kc_cmp_ok(r, &c, "ah.query-attrs");
	}
	err = rdma_destroy_ah_user(ah, RDMA_DESTROY_AH_SLEEPABLE, NULL);
	kc_ok(r, !err, "ah.destroy", "err %d", err);
}

/* ib_alloc_pd with a global rkey: the core's DMA MR, checked. NULL if it failed. */
static struct ib_pd *kc_pd(struct kc_run *r, struct ib_device *dev)
{
	bool local_lkey = dev->attrs.kernel_cap_flags & IBK_LOCAL_DMA_LKEY;
	struct kc_cmp c = {};
	struct ib_pd *pd;
	struct ib_mr *mr;

	if (!kc_op(r, dev->ops.alloc_pd, "pd.alloc", "alloc_pd") ||
	    !kc_op(r, dev->ops.get_dma_mr, "pd.alloc", "get_dma_mr"))
		return NULL;
	pd = ib_alloc_pd(dev, IB_PD_UNSAFE_GLOBAL_RKEY);
	if (!kc_ok(r, !IS_ERR(pd), "pd.alloc", "err %d", PTR_ERR_OR_ZERO(pd)))
		return NULL;
	mr = pd->__internal_mr;
	if (!kc_ok(r, mr, "pd.dma-mr", "no internal MR"))
		return pd;
	kc_eq(&c, "type", mr->type, IB_MR_TYPE_DMA);
	kc_eq(&c, "pd", mr->pd == pd, 1);
	kc_eq(&c, "device", mr->device == dev, 1);
	kc_cmp_ok(r, &c, "dma-mr.object");
	/* The global rkey is the DMA MR's; mlx5 gives an mkey one key for both. */
	kc_ok(r, pd->unsafe_global_rkey == mr->rkey, "dma-mr.global-rkey",
	      "global 0x%x rkey 0x%x", pd->unsafe_global_rkey, mr->rkey);
	kc_ok(r, mr->lkey == mr->rkey, "dma-mr.lkey-is-rkey", "lkey 0x%x rkey 0x%x",
	      mr->lkey, mr->rkey);
	/* The local DMA lkey: the device's reserved one if it has one, else the MR's. */
	if (local_lkey)
		kc_ok(r, pd->local_dma_lkey == dev->local_dma_lkey, "pd.local-dma-lkey",
		      "pd 0x%x device 0x%x", pd->local_dma_lkey, dev->local_dma_lkey);
	else
		kc_ok(r, pd->local_dma_lkey == mr->lkey, "pd.local-dma-lkey",
		      "pd 0x%x mr 0x%x", pd->local_dma_lkey, mr->lkey);
	kc_line("# %u.pd local_dma_lkey 0x%x dma mr lkey 0x%x", r->gen, pd->local_dma_lkey,
		mr->lkey);
	return pd;
}

/* The walk on one device: everything taken is given back before it returns. */
static void kc_walk(struct kc_run *r, struct ib_device *dev, u32 port,
		    const struct ib_port_attr *pa)
{
	struct ib_cq_init_attr cqa = {
		.cqe = 32,
		.comp_vector = dev->num_comp_vectors > 0 ? dev->num_comp_vectors - 1 : 0,
	};
	struct ib_cq *scq = NULL, *rcq = NULL;
	struct ib_qp *rc = NULL, *ud = NULL;
	struct ib_pd *pd;

	pd = kc_pd(r, dev);
	if (!pd)
		return;

	/* Without the CQs the QPs are not tried; the SRQ and the AH need only the PD. */
	if (kc_op(r, dev->ops.create_cq, "cq.alloc", "create_cq")) {
		scq = ib_alloc_cq(dev, NULL, 64, 0, IB_POLL_DIRECT);
		if (kc_ok(r, !IS_ERR(scq), "cq.alloc", "err %d", PTR_ERR_OR_ZERO(scq)))
			kc_ok(r, scq->cqe >= 64, "cq.alloc-depth", "cqe %d want >= 64", scq->cqe);
		else
			scq = NULL;
		rcq = ib_create_cq(dev, kc_cq_comp, kc_event, NULL, &cqa);
		if (kc_ok(r, !IS_ERR(rcq), "cq.create-last-vector", "err %d vector %u",
			  PTR_ERR_OR_ZERO(rcq), cqa.comp_vector))
			kc_ok(r, rcq->cqe >= 32, "cq.create-depth", "cqe %d want >= 32", rcq->cqe);
		else
			rcq = NULL;
	}

	if (scq && rcq) {
		rc = kc_create_qp(r, "rc", pd, scq, rcq, NULL, IB_QPT_RC);
		if (rc)
			kc_rc_walk(r, rc, port, pa);
		ud = kc_create_qp(r, "ud", pd, scq, rcq, NULL, IB_QPT_UD);
		if (ud)
			kc_ud_walk(r, ud, port);
	}
	kc_srq_walk(r, pd, rcq);
	kc_ah_walk(r, pd, port, pa);

	if (ud)
		kc_destroy_qp(r, ud, "ud.destroy");
	if (rc)
		kc_destroy_qp(r, rc, "rc.destroy");
	if (rcq)
		kc_destroy_cq(r, rcq, "cq.destroy");
	if (scq)
		kc_free_cq(r, scq, "cq.free");
	kc_dealloc_pd(r, pd, "pd.dealloc");
}

/* The set kept until remove: a PD, a CQ and an RC QP in RTS. */
static void kc_hold(struct kc_run *r, struct kc_dev *d, struct ib_device *dev, u32 port,
		    const struct ib_port_attr *pa)
{
	if (!kc_op(r, dev->ops.alloc_pd, "hold.pd", "alloc_pd"))
		return;
	/* Without a reserved lkey the core takes a DMA MR for the local DMA lkey. */
	if (!(dev->attrs.kernel_cap_flags & IBK_LOCAL_DMA_LKEY) &&
	    !kc_op(r, dev->ops.get_dma_mr, "hold.pd", "get_dma_mr"))
		return;
	d->pd = ib_alloc_pd(dev, 0);
	if (!kc_ok(r, !IS_ERR(d->pd), "hold.pd", "err %d", PTR_ERR_OR_ZERO(d->pd))) {
		d->pd = NULL;
		return;
	}
	if (!kc_op(r, dev->ops.create_cq, "hold.cq", "create_cq"))
		return;
	d->cq = ib_alloc_cq(dev, NULL, 16, 0, IB_POLL_DIRECT);
	if (!kc_ok(r, !IS_ERR(d->cq), "hold.cq", "err %d", PTR_ERR_OR_ZERO(d->cq))) {
		d->cq = NULL;
		return;
	}
	d->qp = kc_create_qp(r, "hold.qp", d->pd, d->cq, d->cq, NULL, IB_QPT_RC);
	if (!d->qp)
		return;
	if (kc_rc_connect(r, "hold.qp", d->qp, d->qp->qp_num, port, pa))
		kc_line("# %u.hold qpn %u", r->gen, d->qp->qp_num);
}

static struct ib_client kc_client;

static int kc_add(struct ib_device *dev)
{
	u32 port = rdma_start_port(dev);
	struct ib_port_attr pa = {};
	struct kc_run r;
	struct kc_dev *d;
	int err;

	d = kzalloc_obj(*d);
	if (!d)
		return -ENOMEM;
	mutex_lock(&kc_lock);
	d->gen = ++kc_adds;
	mutex_unlock(&kc_lock);
	r.gen = d->gen;
	kc_line("# add %u %s", r.gen, dev_name(&dev->dev));

	err = ib_query_port(dev, port, &pa);
	if (kc_ok(&r, !err, "port.query", "err %d", err)) {
		struct kc_cmp c = {};

		kc_eq(&c, "state", pa.state, IB_PORT_ACTIVE);
		kc_eq(&c, "ib", rdma_protocol_ib(dev, port), 1);
		kc_ge(&c, "lid", pa.lid, 1);
		kc_cmp_ok(&r, &c, "port.active-ib");
		kc_line("# %u.port %u lid 0x%x active_mtu %d comp_vectors %d", r.gen, port,
			pa.lid, pa.active_mtu, dev->num_comp_vectors);
		kc_walk(&r, dev, port, &pa);
		kc_traffic(&r, dev, port, &pa);
		kc_kverbs(&r, dev, port, &pa);
		kc_xrc(&r, dev, port, &pa);
		d->bg = kc_bench(&r, dev, port, &pa);
		kc_drain_arm(&r, dev, port, &pa);
		kc_hold(&r, d, dev, port, &pa);
	}
	ib_set_client_data(dev, &kc_client, d);
	kc_line("# add %u done", r.gen);
	return 0;
}

/* The device leaves the client (it unregisters, or the module unloads): free the set. */
static void kc_remove(struct ib_device *dev, void *client_data)
{
	struct kc_dev *d = client_data;
	struct kc_run r;

	kc_drain_remove(dev);
	if (!d)
		return;
	r.gen = d->gen;
	mutex_lock(&kc_lock);
	kc_removes++;
	mutex_unlock(&kc_lock);
	kc_line("# remove %u %s", r.gen, dev_name(&dev->dev));
	/* The background traffic first: stopped after its round, drained, freed. */
	kc_bench_stop(d->bg);
	if (d->qp)
		kc_destroy_qp(&r, d->qp, "remove.qp-destroy");
	if (d->cq)
		kc_free_cq(&r, d->cq, "remove.cq-free");
	if (d->pd)
		kc_dealloc_pd(&r, d->pd, "remove.pd-dealloc");
	kfree(d);
}

static struct ib_client kc_client = {
	.name = "ib_kclient",
	.add = kc_add,
	.remove = kc_remove,
	/* See the top of this file: mlx5_rs has no data-path verbs yet. */
	.no_kverbs_req = true,
};

static int kc_results_show(struct seq_file *m, void *v)
{
	mutex_lock(&kc_lock);
	seq_write(m, kc_log, kc_len);
	mutex_unlock(&kc_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(kc_results);

static int kc_summary_show(struct seq_file *m, void *v)
{
	mutex_lock(&kc_lock);
	seq_printf(m, "adds %u removes %u pass %u fail %u skip %u\n", kc_adds, kc_removes,
		   kc_pass, kc_fail, kc_skip);
	mutex_unlock(&kc_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(kc_summary);

static int kc_events_show(struct seq_file *m, void *v)
{
	unsigned int i, n;

	spin_lock_irq(&kc_ev_lock);
	n = kc_nev;
	spin_unlock_irq(&kc_ev_lock);
	/* Entries below n are written once, before n counts them. */
	for (i = 0; i < n; i++) {
		if (kc_evs[i].srq)
			seq_printf(m, "event %u type=%d srq\n", i, kc_evs[i].type);
		else
			seq_printf(m, "event %u type=%d qpn=%u\n", i, kc_evs[i].type, kc_evs[i].qpn);
	}
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(kc_events);

static int __init kc_init(void)
{
	int err;

	kc_log = kvzalloc(KC_LOG_SIZE, GFP_KERNEL);
	if (!kc_log)
		return -ENOMEM;
	kc_line("KTAP version 1");
	kc_dir = debugfs_create_dir("ib_kclient", NULL);
	debugfs_create_file("results", 0444, kc_dir, NULL, &kc_results_fops);
	debugfs_create_file("summary", 0444, kc_dir, NULL, &kc_summary_fops);
	debugfs_create_file("events", 0444, kc_dir, NULL, &kc_events_fops);
	err = ib_register_client(&kc_client);
	if (err) {
		debugfs_remove_recursive(kc_dir);
		kvfree(kc_log);
		return err;
	}
	return 0;
}

static void __exit kc_exit(void)
{
	/* Calls remove for every device first. */
	ib_unregister_client(&kc_client);
	debugfs_remove_recursive(kc_dir);
	kvfree(kc_log);
}

module_init(kc_init);
module_exit(kc_exit);
MODULE_DESCRIPTION("Test module: a kernel ib_client walking the control verbs");
MODULE_LICENSE("GPL");
