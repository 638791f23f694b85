// SPDX-License-Identifier: GPL-2.0
/*
 * The drain step of ib_kclient (tests/scenarios-ib/94-dp-faults.sh part 4; off by
 * default): a kernel consumer that meets the device's fatal error with work requests
 * outstanding and drains its QP when the device goes, as a ULP does in its remove.
 * With the module parameter drain=1, the first add arms it:
 *
 *   drain.qp-x/-y.*  a PD, one CQ polled from a work queue (IB_POLL_WORKQUEUE, as
 *                  ULPs poll) and two RC QPs X and Y in loopback (rnr_retry 7)
 *   drain.armed    Y posts KD_RECVS receives (nothing ever sends to Y) and KD_SENDS
 *                  SENDs to X, which has no receive posted: X answers RNR forever, so
 *                  the sends stay outstanding; no completion came within 300 ms.
 *                  From then on the device's events are logged
 *                  ("# N.drain device event E (name) on DEV")
 *
 * Then the scenario injects the device's fatal error, and the core removes the
 * client from the device (the driver unregisters it, or the module is unloaded);
 * the remove of the armed device runs, every wait bounded:
 *
 *   drain.returned     ib_drain_qp(Y) returns (within KD_WAIT_S)
 *   drain.flushed      every outstanding request completed with IB_WC_WR_FLUSH_ERR:
 *                      KD_SENDS sends and KD_RECVS receives, and no other completion
 *   drain.post-eio     a post_send and a post_recv on X fail with -EIO
 *   drain.idle-returned ib_drain_qp(X), nothing outstanding, returns
 *   drain.teardown.*   the QPs destroyed, the CQ freed, the PD deallocated
 *
 * The expectations are upstream mlx5_ib's internal-error state (main.c
 * mlx5_ib_handle_internal_error, cq.c mlx5_ib_poll_sw_comp, qp.c mlx5_ib_drain_sq/rq,
 * wr.c's -EIO): the core's own drain would wait forever for a completion a dead
 * device never writes.
 */
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/dma-mapping.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <rdma/ib_verbs.h>

#include "kclient.h"

static bool drain;
module_param(drain, bool, 0444);
MODULE_PARM_DESC(drain, "Arm a QP with work requests outstanding, drained when the device is removed (default off)");

#define KD_BUF 4096
#define KD_SENDS 3
#define KD_RECVS 5
#define KD_MSG 64
#define KD_WAIT_S 60

/* The armed consumer (one device: the first add). */
static struct {
	struct ib_device *dev;
	struct kc_run r;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_qp *x, *y;
	u8 *buf;
	u64 dma;
	bool mapped, armed, handler;
	struct ib_event_handler eh;
	struct ib_cqe send_cqe, recv_cqe, late_cqe;
	atomic_t send_flush, send_other, recv_flush, recv_other, late;
} kd;

static void kd_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	atomic_inc(wc->status == IB_WC_WR_FLUSH_ERR ? &kd.send_flush : &kd.send_other);
}

static void kd_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	atomic_inc(wc->status == IB_WC_WR_FLUSH_ERR ? &kd.recv_flush : &kd.recv_other);
}

/* A request posted after the fatal error (none should be) completed. */
static void kd_late_done(struct ib_cq *cq, struct ib_wc *wc)
{
	atomic_inc(&kd.late);
}

static struct ib_qp *kd_qp(const char *step)
{
	struct ib_qp_init_attr init = {
		.event_handler = kc_event,
		.send_cq = kd.cq,
		.recv_cq = kd.cq,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1,
			 .max_recv_sge = 1 },
		.sq_sig_type = IB_SIGNAL_ALL_WR,
		.qp_type = IB_QPT_RC,
	};
	struct ib_qp *qp = ib_create_qp(kd.pd, &init);

	if (IS_ERR(qp)) {
		kc_ok(&kd.r, false, step, "create_qp err %ld", PTR_ERR(qp));
		return NULL;
	}
	return qp;
}

/* Y's receives and its SENDs to X; nothing completes. */
static bool kd_post(void)
{
	struct ib_sge sge = { .addr = kd.dma, .length = KD_MSG, .lkey = kd.pd->local_dma_lkey };
	struct ib_recv_wr rwr = { .wr_cqe = &kd.recv_cqe, .sg_list = &sge, .num_sge = 1 };
	struct ib_send_wr swr = { .wr_cqe = &kd.send_cqe, .sg_list = &sge, .num_sge = 1,
				  .opcode = IB_WR_SEND, .send_flags = IB_SEND_SIGNALED };
	int i, err;

	for (i = 0; i < KD_RECVS; i++) {
		err = ib_post_recv(kd.y, &rwr, NULL);
		if (err)
			return kc_ok(&kd.r, false, "drain.armed", "post_recv %d err %d", i, err);
	}
	for (i = 0; i < KD_SENDS; i++) {
		err = ib_post_send(kd.y, &swr, NULL);
		if (err)
			return kc_ok(&kd.r, false, "drain.armed", "post_send %d err %d", i, err);
	}
	msleep(300);
	return kc_ok(&kd.r, !atomic_read(&kd.send_flush) && !atomic_read(&kd.send_other) &&
		     !atomic_read(&kd.recv_flush) && !atomic_read(&kd.recv_other), "drain.armed",
		     "completions before the fatal error: send %d+%d recv %d+%d",
		     atomic_read(&kd.send_flush), atomic_read(&kd.send_other),
		     atomic_read(&kd.recv_flush), atomic_read(&kd.recv_other));
}

/*
 * The armed device's own events (the core's event handlers, process context): the
 * scenario waits for IB_EVENT_DEVICE_FATAL here before it unloads the module, since
 * both drivers raise it once their internal-error handling is done (upstream
 * mlx5_ib_handle_event runs mlx5_ib_handle_internal_error first).
 */
static void kd_dev_event(struct ib_event_handler *h, struct ib_event *ev)
{
	kc_line("# %u.drain device event %d (%s) on %s", kd.r.gen, ev->event,
		ib_event_msg(ev->event), dev_name(&ev->device->dev));
}

void kc_drain_arm(struct kc_run *r, struct ib_device *dev, u32 port,
		  const struct ib_port_attr *pa)
{
	if (!drain || kd.dev)
		return;
	kd.dev = dev;
	kd.r = *r;
	kd.send_cqe.done = kd_send_done;
	kd.recv_cqe.done = kd_recv_done;
	kd.late_cqe.done = kd_late_done;
	kd.pd = ib_alloc_pd(dev, 0);
	if (!kc_ok(r, !IS_ERR(kd.pd), "drain.armed", "alloc_pd err %d", PTR_ERR_OR_ZERO(kd.pd))) {
		kd.pd = NULL;
		return;
	}
	kd.buf = kzalloc(KD_BUF, GFP_KERNEL);
	if (!kc_ok(r, kd.buf != NULL, "drain.armed", "no memory"))
		return;
	kd.dma = ib_dma_map_single(dev, kd.buf, KD_BUF, DMA_BIDIRECTIONAL);
	if (!kc_ok(r, !ib_dma_mapping_error(dev, kd.dma), "drain.armed", "dma_map failed"))
		return;
	kd.mapped = true;
	kd.cq = ib_alloc_cq(dev, NULL, 64, 0, IB_POLL_WORKQUEUE);
	if (!kc_ok(r, !IS_ERR(kd.cq), "drain.armed", "alloc_cq err %d", PTR_ERR_OR_ZERO(kd.cq))) {
		kd.cq = NULL;
		return;
	}
	kd.x = kd_qp("drain.armed");
	kd.y = kd.x ? kd_qp("drain.armed") : NULL;
	if (!kd.y)
		return;
	if (!kc_rc_connect(r, "drain.qp-x", kd.x, kd.y->qp_num, port, pa) ||
	    !kc_rc_connect(r, "drain.qp-y", kd.y, kd.x->qp_num, port, pa))
		return;
	kd.armed = kd_post();
	if (!kd.armed)
		return;
	INIT_IB_EVENT_HANDLER(&kd.eh, dev, kd_dev_event);
	ib_register_event_handler(&kd.eh);
	kd.handler = true;
	kc_line("# %u.drain armed: qp x %u y %u, %d sends and %d receives outstanding",
		r->gen, kd.x->qp_num, kd.y->qp_num, KD_SENDS, KD_RECVS);
}

/* ib_drain_qp in a thread of its own, waited for at most KD_WAIT_S. */
struct kd_job {
	struct ib_qp *qp;
	struct completion done;
};

static int kd_drain_fn(void *p)
{
	struct kd_job *j = p;

	ib_drain_qp(j->qp);
	complete(&j->done);
	return 0;
}

static bool kd_drain(struct ib_qp *qp, const char *step)
{
	struct kd_job *j = kzalloc(sizeof(*j), GFP_KERNEL);
	struct task_struct *t;

	if (!j)
		return kc_ok(&kd.r, false, step, "no memory");
	j->qp = qp;
	init_completion(&j->done);
	t = kthread_run(kd_drain_fn, j, "kc_drain");
	if (IS_ERR(t)) {
		kfree(j);
		return kc_ok(&kd.r, false, step, "kthread err %ld", PTR_ERR(t));
	}
	if (!wait_for_completion_timeout(&j->done, KD_WAIT_S * HZ))
		/* The thread still waits: its job stays allocated (a failed run). */
		return kc_ok(&kd.r, false, step, "ib_drain_qp did not return in %d s", KD_WAIT_S);
	kfree(j);
	return kc_ok(&kd.r, true, step, " ");
}

static void kd_teardown(void)
{
	int err;

	if (kd.x) {
		err = ib_destroy_qp(kd.x);
		kc_ok(&kd.r, !err, "drain.teardown.qp-x", "err %d", err);
	}
	if (kd.y) {
		err = ib_destroy_qp(kd.y);
		kc_ok(&kd.r, !err, "drain.teardown.qp-y", "err %d", err);
	}
	if (kd.cq)
		ib_free_cq(kd.cq);
	if (kd.mapped)
		ib_dma_unmap_single(kd.dev, kd.dma, KD_BUF, DMA_BIDIRECTIONAL);
	kfree(kd.buf);
	if (kd.pd) {
		err = ib_dealloc_pd_user(kd.pd, NULL);
		kc_ok(&kd.r, !err, "drain.teardown.pd", "err %d", err);
	}
	memset(&kd, 0, sizeof(kd));
	/* One arming per load: a device added again later is not armed. */
	kd.dev = ERR_PTR(-ENODEV);
}

void kc_drain_remove(struct ib_device *dev)
{
	struct ib_sge sge = { .addr = kd.dma, .length = KD_MSG, .lkey = 0 };
	struct ib_recv_wr rwr = { .wr_cqe = &kd.late_cqe, .sg_list = &sge, .num_sge = 1 };
	struct ib_send_wr swr = { .wr_cqe = &kd.late_cqe, .sg_list = &sge, .num_sge = 1,
				  .opcode = IB_WR_SEND, .send_flags = IB_SEND_SIGNALED };
	int es, er;

	if (!drain || dev != kd.dev)
		return;
	kc_line("# %u.drain remove %s", kd.r.gen, dev_name(&dev->dev));
	if (kd.handler)
		ib_unregister_event_handler(&kd.eh);
	kd.handler = false;
	if (kd.armed) {
		if (!kd_drain(kd.y, "drain.returned"))
			return;
		kc_ok(&kd.r, atomic_read(&kd.send_flush) == KD_SENDS &&
		      atomic_read(&kd.recv_flush) == KD_RECVS && !atomic_read(&kd.send_other) &&
		      !atomic_read(&kd.recv_other), "drain.flushed",
		      "flushed sends %d receives %d (want %d, %d), other completions send %d receive %d",
		      atomic_read(&kd.send_flush), atomic_read(&kd.recv_flush), KD_SENDS, KD_RECVS,
		      atomic_read(&kd.send_other), atomic_read(&kd.recv_other));
		sge.lkey = kd.pd->local_dma_lkey;
		es = ib_post_send(kd.x, &swr, NULL);
		er = ib_post_recv(kd.x, &rwr, NULL);
		kc_ok(&kd.r, es == -EIO && er == -EIO, "drain.post-eio",
		      "post_send err %d post_recv err %d want %d", es, er, -EIO);
		if (!kd_drain(kd.x, "drain.idle-returned"))
			return;
	}
	kd_teardown();
}
