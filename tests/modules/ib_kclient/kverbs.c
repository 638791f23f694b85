// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel verbs step of ib_kclient (tests/scenarios-ib/93-dp-traffic.sh part 4; off
 * by default). With the module parameter kverbs=1, after the walk (and the traffic
 * step) of each add, on two RC QPs in loopback: C receives through a basic SRQ (its
 * receive CQ of its own), D sends; memory is one DMA-mapped page named by the PD's
 * local DMA lkey. Every send is signalled. The expectations are upstream mlx5_ib's
 * (srq.c, cq.c, qp.c):
 *
 *   setup        PD, two CQs polled directly (send, C's receives), the SRQ (3 WRs of
 *                1 entry: upstream's ring of 4 WQEs holds 3), C on it, D, both to RTS
 *   srq.round-N  (N = 1..3) a chain of max_wr receives posted to the SRQ (round 1:
 *                a chain of max_wr + 1, whose last fails with -ENOMEM, bad_wr naming
 *                it, the others posted: srq.full); D sends max_wr messages in a chain: each send completes, each
 *                receive completes on C's CQ, in the order posted, with its length,
 *                IB_WC_RECV and C's QP, and the bytes landed in its buffer. Rounds 2
 *                and 3 post only because the completions gave the WQEs back
 *                (mlx5_ib_free_srq_wqe)
 *   reset-clean  two receives posted, D sends one message; after its send completed
 *                C is moved to RESET: the receive's completion, not polled yet, is gone
 *                from C's CQ (__mlx5_ib_cq_clean at modify to RESET)
 *   reset-reuse  C and D reset and connected again, D sends one message: the second
 *                receive (still posted on the SRQ) completes, and only it
 *   destroy-clean one receive posted, D sends; C destroyed before its CQ is polled:
 *                the CQ is empty after (__mlx5_ib_cq_clean at destroy)
 *   srq-refill   the SRQ takes max_wr receives again and refuses one more: the
 *                cleaning gave the WQEs of the removed completions back to the SRQ
 *   teardown     D, the SRQ, the CQs and the PD destroyed, each status checked
 *
 * Each step is a result line as the walk's are (kc_ok), named "kverbs.<step>".
 */
#include <linux/delay.h>
#include <linux/dma-mapping.h>
#include <linux/jiffies.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <rdma/ib_verbs.h>

#include "kclient.h"

static bool kverbs;
module_param(kverbs, bool, 0444);
MODULE_PARM_DESC(kverbs, "After the walk, SRQ receives and CQ cleaning on two RC QPs in loopback (default off)");

#define KV_BUF 4096
#define KV_SRQ_WR 3
#define KV_MSG 200
#define KV_RECV_OFF 2048	/* receive buffers: KV_RECV_OFF + i * 256 */
#define KV_RECV_STRIDE 256
#define KV_POLL_MS 5000
#define KV_SEND_ID 0x5000
#define KV_RECV_ID 0x7000

struct kv {
	struct kc_run *r;
	struct ib_device *dev;
	u32 port;
	const struct ib_port_attr *pa;
	struct ib_pd *pd;
	struct ib_cq *scq, *rcq;
	struct ib_srq *srq;
	struct ib_qp *c, *d;
	u8 *buf;
	u64 dma;
	bool mapped;
	u32 max_wr;
};

/* Up to @n completions of @cq into @wc within KV_POLL_MS; how many came. */
static int kv_poll(struct ib_cq *cq, struct ib_wc *wc, int n)
{
	unsigned long end = jiffies + msecs_to_jiffies(KV_POLL_MS);
	int got = 0, k;

	while (got < n) {
		k = ib_poll_cq(cq, n - got, wc + got);
		if (k < 0)
			return k;
		got += k;
		if (got == n || time_after(jiffies, end))
			break;
		usleep_range(200, 1000);
	}
	return got;
}

/* Nothing more on @cq for 100 ms: 0, or the first completion seen. */
static int kv_quiet(struct ib_cq *cq, struct ib_wc *wc)
{
	msleep(100);
	return ib_poll_cq(cq, 1, wc);
}

/*
 * A chain of @n receives on the SRQ, ids @id0.., buffers 0..@n-1; 0 or the error, and
 * then *@bad the index in the chain of the request bad_wr named (-1: none).
 */
static int kv_post_srq(struct kv *v, u64 id0, unsigned int n, int *bad)
{
	const struct ib_recv_wr *bw = NULL;
	struct ib_sge sge[KV_SRQ_WR + 1];
	struct ib_recv_wr wr[KV_SRQ_WR + 1];
	unsigned int i;
	int err;

	if (n > KV_SRQ_WR + 1)
		return -EINVAL;
	memset(wr, 0, sizeof(wr));
	for (i = 0; i < n; i++) {
		sge[i].addr = v->dma + KV_RECV_OFF + (i % 4) * KV_RECV_STRIDE;
		sge[i].length = KV_RECV_STRIDE;
		sge[i].lkey = v->pd->local_dma_lkey;
		wr[i].wr_id = id0 + i;
		wr[i].sg_list = &sge[i];
		wr[i].num_sge = 1;
		wr[i].next = i + 1 < n ? &wr[i + 1] : NULL;
	}
	err = ib_post_srq_recv(v->srq, wr, &bw);
	*bad = bw ? (int)(bw - wr) : -1;
	return err;
}

/* A chain of @n signalled SENDs of KV_MSG bytes from offset 0 of the page. */
static int kv_send(struct kv *v, u64 id0, unsigned int n)
{
	struct ib_sge sge = { .addr = v->dma, .length = KV_MSG, .lkey = v->pd->local_dma_lkey };
	struct ib_send_wr wr[KV_SRQ_WR];
	unsigned int i;

	if (n > KV_SRQ_WR)
		return -EINVAL;
	memset(wr, 0, sizeof(wr));
	for (i = 0; i < n; i++) {
		wr[i].wr_id = id0 + i;
		wr[i].sg_list = &sge;
		wr[i].num_sge = 1;
		wr[i].opcode = IB_WR_SEND;
		wr[i].send_flags = IB_SEND_SIGNALED;
		wr[i].next = i + 1 < n ? &wr[i + 1] : NULL;
	}
	return ib_post_send(v->d, wr, NULL);
}

/* The @n send completions of ids @id0.. on the send CQ, each a success. */
static bool kv_sends_done(struct kv *v, const char *step, u64 id0, int n)
{
	struct ib_wc wc[KV_SRQ_WR];
	int got, i;

	got = kv_poll(v->scq, wc, n);
	if (got != n)
		return kc_ok(v->r, false, step, "%d of %d send completions", got, n);
	for (i = 0; i < n; i++)
		if (wc[i].wr_id != id0 + i || wc[i].status != IB_WC_SUCCESS)
			return kc_ok(v->r, false, step, "send %d: wr %llu status %d (%s) want wr %llu success",
				     i, wc[i].wr_id, wc[i].status, ib_wc_status_msg(wc[i].status),
				     id0 + i);
	return true;
}

static void kv_fill(u8 *p, unsigned int len, u8 seed)
{
	unsigned int i;

	for (i = 0; i < len; i++)
		p[i] = seed ^ (i * 13);
}

/* One round: max_wr receives, max_wr sends, every completion and buffer checked. */
static bool kv_round(struct kv *v, unsigned int round)
{
	int bad;
	struct ib_wc wc[KV_SRQ_WR];
	u64 rid = KV_RECV_ID + round * 16, sid = KV_SEND_ID + round * 16;
	char step[32];
	unsigned int i, j;
	int err, got;

	snprintf(step, sizeof(step), "kverbs.srq.round-%u", round);
	memset(v->buf + KV_RECV_OFF, 0, KV_BUF - KV_RECV_OFF);
	kv_fill(v->buf, KV_MSG, 0x30 + round);
	ib_dma_sync_single_for_device(v->dev, v->dma, KV_BUF, DMA_BIDIRECTIONAL);
	if (round == 1) {
		/* One more than the SRQ holds in one chain: all but the last posted. */
		err = kv_post_srq(v, rid, v->max_wr + 1, &bad);
		if (!kc_ok(v->r, err == -ENOMEM && bad == (int)v->max_wr, "kverbs.srq.full",
			   "post_srq_recv of %u on an empty SRQ err %d bad_wr request %d want %d, request %u",
			   v->max_wr + 1, err, bad, -ENOMEM, v->max_wr))
			return false;
	} else {
		err = kv_post_srq(v, rid, v->max_wr, &bad);
		if (err)
			return kc_ok(v->r, false, step, "post_srq_recv of %u err %d", v->max_wr, err);
	}
	err = kv_send(v, sid, v->max_wr);
	if (err)
		return kc_ok(v->r, false, step, "post_send err %d", err);
	if (!kv_sends_done(v, step, sid, v->max_wr))
		return false;
	got = kv_poll(v->rcq, wc, v->max_wr);
	if (got != (int)v->max_wr)
		return kc_ok(v->r, false, step, "%d of %u receive completions", got, v->max_wr);
	ib_dma_sync_single_for_cpu(v->dev, v->dma, KV_BUF, DMA_BIDIRECTIONAL);
	for (i = 0; i < v->max_wr; i++) {
		const u8 *b = v->buf + KV_RECV_OFF + i * KV_RECV_STRIDE;

		if (wc[i].wr_id != rid + i || wc[i].status != IB_WC_SUCCESS ||
		    wc[i].opcode != IB_WC_RECV || wc[i].byte_len != KV_MSG || wc[i].qp != v->c)
			return kc_ok(v->r, false, step,
				     "receive %u: wr %llu status %d opcode %d len %u qp %s want wr %llu success RECV %u C",
				     i, wc[i].wr_id, wc[i].status, wc[i].opcode, wc[i].byte_len,
				     wc[i].qp == v->c ? "C" : "other", rid + i, KV_MSG);
		for (j = 0; j < KV_MSG && b[j] == v->buf[j]; j++)
			;
		if (j < KV_MSG || b[KV_MSG] != 0)
			return kc_ok(v->r, false, step, "receive %u: byte %u is 0x%02x want 0x%02x",
				     i, j, b[j], j < KV_MSG ? v->buf[j] : 0);
	}
	return kc_ok(v->r, true, step, " ");
}

static struct ib_qp *kv_qp(struct kv *v, const char *step, struct ib_srq *srq,
			   struct ib_cq *rcq)
{
	struct ib_qp_init_attr init = {
		.event_handler = kc_event,
		.send_cq = v->scq,
		.recv_cq = rcq,
		.srq = srq,
		.cap = { .max_send_wr = 8, .max_recv_wr = srq ? 0 : 1, .max_send_sge = 1,
			 .max_recv_sge = srq ? 0 : 1 },
		.sq_sig_type = IB_SIGNAL_ALL_WR,
		.qp_type = IB_QPT_RC,
	};
	struct ib_qp *qp = ib_create_qp(v->pd, &init);

	if (IS_ERR(qp)) {
		kc_ok(v->r, false, step, "create_qp err %ld", PTR_ERR(qp));
		return NULL;
	}
	return qp;
}

/* C and D to RESET, then connected again. */
static bool kv_reconnect(struct kv *v)
{
	struct ib_qp_attr a = { .qp_state = IB_QPS_RESET };

	return kc_modify(v->r, v->d, "kverbs.reset-reuse.reset-d", &a, IB_QP_STATE, 0) &&
	       kc_rc_connect(v->r, "kverbs.reset-reuse.qp-c", v->c, v->d->qp_num, v->port,
			     v->pa) &&
	       kc_rc_connect(v->r, "kverbs.reset-reuse.qp-d", v->d, v->c->qp_num, v->port,
			     v->pa);
}

/* reset-clean and reset-reuse (module doc). */
static void kv_reset(struct kv *v)
{
	struct ib_qp_attr a = { .qp_state = IB_QPS_RESET };
	int bad;
	u64 rid = KV_RECV_ID + 0x100, sid = KV_SEND_ID + 0x100;
	struct ib_wc wc;
	int err, n;

	err = kv_post_srq(v, rid, 2, &bad);
	if (!kc_ok(v->r, !err, "kverbs.reset-clean", "post_srq_recv err %d", err))
		return;
	err = kv_send(v, sid, 1);
	if (!kc_ok(v->r, !err, "kverbs.reset-clean", "post_send err %d", err) ||
	    !kv_sends_done(v, "kverbs.reset-clean", sid, 1))
		return;
	/* The receive's CQE is written before the acknowledgement the send waited for. */
	if (!kc_modify(v->r, v->c, "kverbs.reset-clean.reset-c", &a, IB_QP_STATE, 0))
		return;
	n = kv_quiet(v->rcq, &wc);
	if (!kc_ok(v->r, n == 0, "kverbs.reset-clean",
		   "poll after RESET: %d (wr %llu status %d) want 0", n, n > 0 ? wc.wr_id : 0,
		   n > 0 ? wc.status : 0))
		return;
	if (!kv_reconnect(v))
		return;
	err = kv_send(v, sid + 1, 1);
	if (!kc_ok(v->r, !err, "kverbs.reset-reuse", "post_send err %d", err) ||
	    !kv_sends_done(v, "kverbs.reset-reuse", sid + 1, 1))
		return;
	n = kv_poll(v->rcq, &wc, 1);
	if (!kc_ok(v->r, n == 1 && wc.wr_id == rid + 1 && wc.status == IB_WC_SUCCESS,
		   "kverbs.reset-reuse", "poll %d: wr %llu status %d want wr %llu success", n,
		   n == 1 ? wc.wr_id : 0, n == 1 ? wc.status : 0, rid + 1))
		return;
	n = kv_quiet(v->rcq, &wc);
	kc_ok(v->r, n == 0, "kverbs.reset-reuse.only", "then %d more (wr %llu) want 0", n,
	      n > 0 ? wc.wr_id : 0);
}

/* destroy-clean and srq-refill (module doc). */
static void kv_destroy(struct kv *v)
{
	int bad;
	u64 rid = KV_RECV_ID + 0x200, sid = KV_SEND_ID + 0x200;
	struct ib_wc wc;
	int err, n;

	err = kv_post_srq(v, rid, 1, &bad);
	if (!kc_ok(v->r, !err, "kverbs.destroy-clean", "post_srq_recv err %d", err))
		return;
	err = kv_send(v, sid, 1);
	if (!kc_ok(v->r, !err, "kverbs.destroy-clean", "post_send err %d", err) ||
	    !kv_sends_done(v, "kverbs.destroy-clean", sid, 1))
		return;
	err = ib_destroy_qp(v->c);
	v->c = NULL;
	if (!kc_ok(v->r, !err, "kverbs.destroy-clean.destroy-c", "err %d", err))
		return;
	n = kv_quiet(v->rcq, &wc);
	if (!kc_ok(v->r, n == 0, "kverbs.destroy-clean", "poll after destroy: %d (wr %llu) want 0",
		   n, n > 0 ? wc.wr_id : 0))
		return;
	err = kv_post_srq(v, KV_RECV_ID + 0x300, v->max_wr, &bad);
	if (!kc_ok(v->r, !err, "kverbs.srq-refill", "post_srq_recv of %u err %d", v->max_wr, err))
		return;
	err = kv_post_srq(v, KV_RECV_ID + 0x310, 1, &bad);
	kc_ok(v->r, err == -ENOMEM, "kverbs.srq-refill.full", "one more: err %d want %d", err,
	      -ENOMEM);
}

static bool kv_setup(struct kv *v)
{
	struct ib_srq_init_attr si = {
		.event_handler = kc_event,
		.attr = { .max_wr = KV_SRQ_WR, .max_sge = 1 },
		.srq_type = IB_SRQT_BASIC,
	};
	struct kc_run *r = v->r;

	v->buf = kzalloc(KV_BUF, GFP_KERNEL);
	if (!kc_ok(r, v->buf != NULL, "kverbs.setup", "no memory"))
		return false;
	v->dma = ib_dma_map_single(v->dev, v->buf, KV_BUF, DMA_BIDIRECTIONAL);
	if (!kc_ok(r, !ib_dma_mapping_error(v->dev, v->dma), "kverbs.setup", "dma_map failed"))
		return false;
	v->mapped = true;
	v->scq = ib_alloc_cq(v->dev, NULL, 32, 0, IB_POLL_DIRECT);
	if (!kc_ok(r, !IS_ERR(v->scq), "kverbs.setup", "alloc_cq err %d",
		   PTR_ERR_OR_ZERO(v->scq))) {
		v->scq = NULL;
		return false;
	}
	v->rcq = ib_alloc_cq(v->dev, NULL, 32, 0, IB_POLL_DIRECT);
	if (!kc_ok(r, !IS_ERR(v->rcq), "kverbs.setup", "alloc_cq err %d",
		   PTR_ERR_OR_ZERO(v->rcq))) {
		v->rcq = NULL;
		return false;
	}
	v->srq = ib_create_srq(v->pd, &si);
	if (!kc_ok(r, !IS_ERR(v->srq), "kverbs.setup", "create_srq err %d",
		   PTR_ERR_OR_ZERO(v->srq))) {
		v->srq = NULL;
		return false;
	}
	/* Upstream: a ring of roundup_pow_of_two(max_wr + 1) WQEs, max_wr = ring - 1. */
	v->max_wr = si.attr.max_wr;
	if (!kc_ok(r, v->max_wr == KV_SRQ_WR, "kverbs.setup", "SRQ max_wr %u want %u",
		   v->max_wr, KV_SRQ_WR))
		return false;
	v->c = kv_qp(v, "kverbs.setup", v->srq, v->rcq);
	v->d = v->c ? kv_qp(v, "kverbs.setup", NULL, v->scq) : NULL;
	if (!v->d)
		return false;
	kc_line("# %u.kverbs qp c %u d %u srq max_wr %u", r->gen, v->c->qp_num, v->d->qp_num,
		v->max_wr);
	return kc_rc_connect(r, "kverbs.qp-c", v->c, v->d->qp_num, v->port, v->pa) &&
	       kc_rc_connect(r, "kverbs.qp-d", v->d, v->c->qp_num, v->port, v->pa) &&
	       kc_ok(r, true, "kverbs.setup", " ");
}

static void kv_teardown(struct kv *v)
{
	struct kc_run *r = v->r;
	int err;

	if (v->c) {
		err = ib_destroy_qp(v->c);
		kc_ok(r, !err, "kverbs.teardown.qp-c", "err %d", err);
	}
	if (v->d) {
		err = ib_destroy_qp(v->d);
		kc_ok(r, !err, "kverbs.teardown.qp-d", "err %d", err);
	}
	if (v->srq) {
		err = ib_destroy_srq_user(v->srq, NULL);
		kc_ok(r, !err, "kverbs.teardown.srq", "err %d", err);
	}
	if (v->rcq)
		ib_free_cq(v->rcq);
	if (v->scq)
		ib_free_cq(v->scq);
	if (v->mapped)
		ib_dma_unmap_single(v->dev, v->dma, KV_BUF, DMA_BIDIRECTIONAL);
	kfree(v->buf);
	if (!kc_ok(r, atomic_read(&v->pd->usecnt) == 0, "kverbs.teardown.pd-unused",
		   "still used %d times, left allocated", atomic_read(&v->pd->usecnt)))
		return;
	err = ib_dealloc_pd_user(v->pd, NULL);
	kc_ok(r, !err, "kverbs.teardown.pd", "err %d", err);
}

void kc_kverbs(struct kc_run *r, struct ib_device *dev, u32 port, const struct ib_port_attr *pa)
{
	struct kv v = { .r = r, .dev = dev, .port = port, .pa = pa };
	unsigned int round;

	if (!kverbs)
		return;
	if (!kc_op(r, dev->ops.post_srq_recv, "kverbs.setup", "post_srq_recv") ||
	    !kc_op(r, dev->ops.create_srq, "kverbs.setup", "create_srq") ||
	    !kc_op(r, dev->ops.post_send, "kverbs.setup", "post_send") ||
	    !kc_op(r, dev->ops.poll_cq, "kverbs.setup", "poll_cq"))
		return;
	v.pd = ib_alloc_pd(dev, 0);
	if (!kc_ok(r, !IS_ERR(v.pd), "kverbs.setup", "alloc_pd err %d", PTR_ERR_OR_ZERO(v.pd)))
		return;
	if (kv_setup(&v)) {
		for (round = 1; round <= 3; round++)
			if (!kv_round(&v, round))
				break;
		if (round > 3) {
			kv_reset(&v);
			kv_destroy(&v);
		}
	}
	kv_teardown(&v);
}
