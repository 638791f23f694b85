// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel XRC step of ib_kclient (module parameter xrc=1, off by default): a
 * kernel consumer's XRC initiator and XRC target, as upstream mlx5_ib creates them
 * for one (qp.c create_kernel_qp() for the initiator, create_xrc_tgt_qp() for the
 * target, which ib_create_qp() reaches with the consumer's PD and XRC domain). The
 * expectations are upstream's (qp.c, wr.c, and the RDMA core's verbs.c):
 *
 *   setup        PD, a send CQ and the XRC SRQ's CQ (polled directly), an XRC domain
 *                (ib_alloc_xrcd_user), an XRC SRQ in it, one receive posted to it
 *   tgt.create   ib_create_qp(IB_QPT_XRC_TGT, the domain): created, no queue (caps 0)
 *   ini.create   ib_create_qp(IB_QPT_XRC_INI, a send CQ only): created; no receive
 *                queue (max_recv_wr and max_recv_sge 0: upstream's qp_has_rq() is
 *                false for an initiator), at least the send queue asked for
 *   ini.* tgt.*  both to RTS, connected to each other through the port's LID, with
 *                the masks ib_modify_qp_is_ok() requires of each type
 *   send.post    a signalled SEND of KX_MSG bytes on the initiator: ib_post_send
 *                returns 0. struct ib_send_wr cannot name the remote XRC SRQ:
 *                upstream's post_send reserves the XRC segment and never writes it,
 *                so the WQE names SRQ 0 (wr.c mlx5_ib_post_send(), case
 *                IB_QPT_XRC_INI)
 *   send.cqe     the send completes within KX_POLL_MS with the status upstream's
 *                does on this emulator, IB_WC_REM_OP_ERR (the target finds no XRC
 *                SRQ 0 in its domain and NAKs), the wr_id and QP named
 *   send.ini-err the initiator reads back in ERR (a requester error completion)
 *   send.no-recv the XRC SRQ's CQ stays empty and the receive buffer untouched:
 *                nothing was delivered
 *   teardown     initiator, target, SRQ, domain, CQs and PD destroyed, each status 0
 *
 * Each step is a result line as the walk's are (kc_ok), named "xrc.<step>".
 */
#include <linux/delay.h>
#include <linux/dma-mapping.h>
#include <linux/jiffies.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <rdma/ib_verbs.h>

#include "kclient.h"

static bool xrc;
module_param(xrc, bool, 0444);
MODULE_PARM_DESC(xrc, "After the walk, a kernel XRC initiator and target connected in loopback (default off)");

#define KX_BUF 4096
#define KX_MSG 200
#define KX_RECV_OFF 2048
#define KX_POLL_MS 5000
#define KX_SEND_ID 0x8000
#define KX_RECV_ID 0x9000
#define KX_PSN 0x1234

struct kx {
	struct kc_run *r;
	struct ib_device *dev;
	struct ib_pd *pd;
	struct ib_cq *scq, *rcq;
	struct ib_xrcd *xrcd;
	struct ib_srq *srq;
	struct ib_qp *ini, *tgt;
	u8 *buf;
	u64 dma;
	bool mapped;
};

/* @qp (@name, of @qp's type) to RTS in loopback to @remote, ib_modify_qp_is_ok()'s
 * masks for an XRC initiator or target. */
static bool kx_connect(struct kx *x, const char *name, struct ib_qp *qp, u32 remote,
		       u32 port, const struct ib_port_attr *pa)
{
	bool tgt = qp->qp_type == IB_QPT_XRC_TGT;
	struct ib_qp_attr a = {
		.qp_state = IB_QPS_INIT,
		.port_num = port,
		.qp_access_flags = IB_ACCESS_REMOTE_WRITE,
	};
	char step[32];
	int mask;

	snprintf(step, sizeof(step), "xrc.%s.init", name);
	if (!kc_modify(x->r, qp, step, &a, IB_QP_STATE | IB_QP_PKEY_INDEX | IB_QP_PORT |
		       IB_QP_ACCESS_FLAGS, 0))
		return false;
	memset(&a, 0, sizeof(a));
	a.qp_state = IB_QPS_RTR;
	a.path_mtu = pa->active_mtu;
	a.dest_qp_num = remote;
	a.rq_psn = KX_PSN;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.type = rdma_ah_find_type(x->dev, port);
	rdma_ah_set_dlid(&a.ah_attr, pa->lid);
	rdma_ah_set_port_num(&a.ah_attr, port);
	mask = IB_QP_STATE | IB_QP_AV | IB_QP_PATH_MTU | IB_QP_DEST_QPN | IB_QP_RQ_PSN;
	if (tgt)
		mask |= IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER;
	snprintf(step, sizeof(step), "xrc.%s.rtr", name);
	if (!kc_modify(x->r, qp, step, &a, mask, 0))
		return false;
	memset(&a, 0, sizeof(a));
	a.qp_state = IB_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = KX_PSN;
	a.max_rd_atomic = 1;
	mask = IB_QP_STATE | IB_QP_TIMEOUT | IB_QP_SQ_PSN;
	if (!tgt)
		mask |= IB_QP_RETRY_CNT | IB_QP_RNR_RETRY | IB_QP_MAX_QP_RD_ATOMIC;
	snprintf(step, sizeof(step), "xrc.%s.rts", name);
	return kc_modify(x->r, qp, step, &a, mask, 0);
}

/* Up to one completion of @cq within @ms: 1 and *@wc, 0, or a poll error. */
static int kx_poll1(struct ib_cq *cq, struct ib_wc *wc, unsigned int ms)
{
	unsigned long end = jiffies + msecs_to_jiffies(ms);
	int k;

	for (;;) {
		k = ib_poll_cq(cq, 1, wc);
		if (k != 0 || time_after(jiffies, end))
			return k;
		usleep_range(200, 1000);
	}
}

static bool kx_setup(struct kx *x)
{
	struct ib_srq_init_attr sa = {};
	struct ib_recv_wr rw = {};
	struct ib_sge sge;
	int err;

	x->pd = ib_alloc_pd(x->dev, 0);
	if (IS_ERR(x->pd)) {
		err = PTR_ERR(x->pd);
		x->pd = NULL;
		return kc_ok(x->r, false, "xrc.setup", "alloc_pd %d", err);
	}
	x->scq = ib_alloc_cq(x->dev, NULL, 8, 0, IB_POLL_DIRECT);
	x->rcq = ib_alloc_cq(x->dev, NULL, 8, 0, IB_POLL_DIRECT);
	if (IS_ERR(x->scq) || IS_ERR(x->rcq)) {
		err = IS_ERR(x->scq) ? PTR_ERR(x->scq) : PTR_ERR(x->rcq);
		return kc_ok(x->r, false, "xrc.setup", "alloc_cq %d", err);
	}
	x->xrcd = ib_alloc_xrcd_user(x->dev, NULL, NULL);
	if (IS_ERR(x->xrcd)) {
		err = PTR_ERR(x->xrcd);
		x->xrcd = NULL;
		return kc_ok(x->r, false, "xrc.setup", "alloc_xrcd %d", err);
	}
	sa.event_handler = kc_event;
	sa.srq_type = IB_SRQT_XRC;
	sa.ext.xrc.xrcd = x->xrcd;
	sa.ext.cq = x->rcq;
	sa.attr.max_wr = 4;
	sa.attr.max_sge = 1;
	x->srq = ib_create_srq(x->pd, &sa);
	if (IS_ERR(x->srq)) {
		err = PTR_ERR(x->srq);
		x->srq = NULL;
		return kc_ok(x->r, false, "xrc.setup", "create_srq (XRC) %d", err);
	}
	x->buf = kzalloc(KX_BUF, GFP_KERNEL);
	if (!x->buf)
		return kc_ok(x->r, false, "xrc.setup", "no memory");
	x->dma = ib_dma_map_single(x->dev, x->buf, KX_BUF, DMA_BIDIRECTIONAL);
	if (ib_dma_mapping_error(x->dev, x->dma))
		return kc_ok(x->r, false, "xrc.setup", "dma map");
	x->mapped = true;
	sge.addr = x->dma + KX_RECV_OFF;
	sge.length = KX_BUF - KX_RECV_OFF;
	sge.lkey = x->pd->local_dma_lkey;
	rw.wr_id = KX_RECV_ID;
	rw.sg_list = &sge;
	rw.num_sge = 1;
	err = ib_post_srq_recv(x->srq, &rw, NULL);
	return kc_ok(x->r, !err, "xrc.setup", "post_srq_recv %d", err);
}

static bool kx_create(struct kx *x)
{
	struct ib_qp_init_attr ia = {};
	struct ib_qp *qp;

	ia.event_handler = kc_event;
	ia.qp_type = IB_QPT_XRC_TGT;
	ia.xrcd = x->xrcd;
	ia.sq_sig_type = IB_SIGNAL_REQ_WR;
	qp = ib_create_qp(x->pd, &ia);
	if (!kc_ok(x->r, !IS_ERR(qp), "xrc.tgt.create", "create_qp XRC_TGT %d",
		   PTR_ERR_OR_ZERO(qp)))
		return false;
	x->tgt = qp;
	kc_line("# %u.xrc.tgt qpn 0x%x caps send %u/%u recv %u/%u", x->r->gen, qp->qp_num,
		ia.cap.max_send_wr, ia.cap.max_send_sge, ia.cap.max_recv_wr,
		ia.cap.max_recv_sge);

	memset(&ia, 0, sizeof(ia));
	ia.event_handler = kc_event;
	ia.qp_type = IB_QPT_XRC_INI;
	ia.send_cq = x->scq;
	ia.sq_sig_type = IB_SIGNAL_REQ_WR;
	ia.cap.max_send_wr = 4;
	ia.cap.max_send_sge = 1;
	qp = ib_create_qp(x->pd, &ia);
	if (!kc_ok(x->r, !IS_ERR(qp), "xrc.ini.create", "create_qp XRC_INI %d",
		   PTR_ERR_OR_ZERO(qp)))
		return false;
	x->ini = qp;
	kc_line("# %u.xrc.ini qpn 0x%x caps send %u/%u recv %u/%u inline %u", x->r->gen,
		qp->qp_num, ia.cap.max_send_wr, ia.cap.max_send_sge, ia.cap.max_recv_wr,
		ia.cap.max_recv_sge, ia.cap.max_inline_data);
	return kc_ok(x->r, ia.cap.max_recv_wr == 0 && ia.cap.max_recv_sge == 0 &&
		     ia.cap.max_send_wr >= 4 && ia.cap.max_send_sge >= 1, "xrc.ini.caps",
		     "send %u/%u recv %u/%u want send >= 4/1, recv 0/0", ia.cap.max_send_wr,
		     ia.cap.max_send_sge, ia.cap.max_recv_wr, ia.cap.max_recv_sge);
}

static void kx_send(struct kx *x)
{
	struct ib_sge sge = { .addr = x->dma, .length = KX_MSG, .lkey = x->pd->local_dma_lkey };
	struct ib_send_wr wr = {};
	struct ib_qp_attr qa;
	struct ib_qp_init_attr qia;
	struct ib_wc wc = {};
	unsigned int i;
	bool clean = true;
	int err, k;

	for (i = 0; i < KX_MSG; i++)
		x->buf[i] = 0x5a ^ i;
	ib_dma_sync_single_for_device(x->dev, x->dma, KX_BUF, DMA_BIDIRECTIONAL);
	wr.wr_id = KX_SEND_ID;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IB_WR_SEND;
	wr.send_flags = IB_SEND_SIGNALED;
	err = ib_post_send(x->ini, &wr, NULL);
	if (!kc_ok(x->r, !err, "xrc.send.post", "post_send %d want 0", err))
		return;
	k = kx_poll1(x->scq, &wc, KX_POLL_MS);
	kc_line("# %u.xrc.send polled %d: wr 0x%llx status %d (%s) vendor_err 0x%x qp 0x%x",
		x->r->gen, k, wc.wr_id, wc.status, ib_wc_status_msg(wc.status), wc.vendor_err,
		k == 1 && wc.qp ? wc.qp->qp_num : 0);
	kc_ok(x->r, k == 1 && wc.wr_id == KX_SEND_ID && wc.status == IB_WC_REM_OP_ERR &&
	      wc.qp == x->ini, "xrc.send.cqe",
	      "polled %d wr 0x%llx status %d want 1, wr 0x%x, status %d (remote operational error)",
	      k, wc.wr_id, wc.status, KX_SEND_ID, IB_WC_REM_OP_ERR);
	err = ib_query_qp(x->ini, &qa, IB_QP_STATE, &qia);
	kc_ok(x->r, !err && qa.qp_state == IB_QPS_ERR, "xrc.send.ini-err",
	      "query_qp %d state %d want 0, %d (ERR)", err, err ? -1 : qa.qp_state, IB_QPS_ERR);
	msleep(100);
	k = ib_poll_cq(x->rcq, 1, &wc);
	ib_dma_sync_single_for_cpu(x->dev, x->dma, KX_BUF, DMA_BIDIRECTIONAL);
	for (i = KX_RECV_OFF; i < KX_BUF; i++)
		if (x->buf[i])
			clean = false;
	kc_ok(x->r, k == 0 && clean, "xrc.send.no-recv",
	      "XRC SRQ CQ polled %d (status %d), receive buffer %s; want 0, untouched", k,
	      k == 1 ? wc.status : 0, clean ? "untouched" : "written");
}

static void kx_teardown(struct kx *x)
{
	int err;

	if (x->ini) {
		err = ib_destroy_qp(x->ini);
		kc_ok(x->r, !err, "xrc.teardown.ini", "destroy_qp %d", err);
	}
	if (x->tgt) {
		err = ib_destroy_qp(x->tgt);
		kc_ok(x->r, !err, "xrc.teardown.tgt", "destroy_qp %d", err);
	}
	if (x->srq) {
		err = ib_destroy_srq_user(x->srq, NULL);
		kc_ok(x->r, !err, "xrc.teardown.srq", "destroy_srq %d", err);
	}
	if (x->xrcd) {
		err = ib_dealloc_xrcd_user(x->xrcd, NULL);
		kc_ok(x->r, !err, "xrc.teardown.xrcd", "dealloc_xrcd %d", err);
	}
	if (x->mapped)
		ib_dma_unmap_single(x->dev, x->dma, KX_BUF, DMA_BIDIRECTIONAL);
	kfree(x->buf);
	if (!IS_ERR_OR_NULL(x->scq))
		ib_free_cq(x->scq);
	if (!IS_ERR_OR_NULL(x->rcq))
		ib_free_cq(x->rcq);
	if (x->pd)
		ib_dealloc_pd(x->pd);
	kc_ok(x->r, true, "xrc.teardown", "done");
}

void kc_xrc(struct kc_run *r, struct ib_device *dev, u32 port, const struct ib_port_attr *pa)
{
	struct kx *x;

	if (!xrc)
		return;
	x = kzalloc(sizeof(*x), GFP_KERNEL);
	if (!x) {
		kc_ok(r, false, "xrc.setup", "no memory");
		return;
	}
	x->r = r;
	x->dev = dev;
	if (kx_setup(x) && kx_create(x) &&
	    kx_connect(x, "tgt", x->tgt, x->ini->qp_num, port, pa) &&
	    kx_connect(x, "ini", x->ini, x->tgt->qp_num, port, pa))
		kx_send(x);
	kx_teardown(x);
	kfree(x);
}
