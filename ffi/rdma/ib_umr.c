// SPDX-License-Identifier: GPL-2.0
/*
 * The provider's UMR QP, which the MR cache (ib/mr/mod.rs) posts its UMR WQEs on, as
 * upstream mlx5_ib's umrc (umr.c mlx5r_umr_init(), mlx5r_umr_resource_init(),
 * mlx5r_umr_post_send_wait()): a PD made before the device is registered, a CQ and a
 * QP made on first use, all through the RDMA core on this very device, and destroyed
 * after the device is unregistered (mlx5rs_ib_umr_cleanup()). Upstream's QP is of its private type REG_UMR; ours is an
 * RC QP connected to itself, a type the provider already serves (a UMR WQE does not
 * leave the QP's send queue).
 *
 * One UMR is in flight at a time (@lock). Its completion is polled with a bound
 * (MLX5RS_UMR_TIMEOUT_MS): a device that died never completes it, and the caller then
 * keeps what the mkey may still reach. A UMR completed in error is logged with its
 * status and vendor syndrome, and the QP is brought back to RTS as upstream's
 * mlx5r_umr_recover() does; a QP that cannot be recovered, a UMR that never
 * completed, or resources that could not be made mark UMR broken, and the MR verbs
 * use commands from then on.
 */
#include <linux/delay.h>
#include <linux/err.h>
#include <linux/jiffies.h>
#include <linux/mutex.h>
#include <rdma/ib_verbs.h>
#include "ib_priv.h"

/* Send queue depth (upstream MAX_UMR_WR is 128; one WQE is in flight here). */
#define MLX5RS_UMR_WR 16
/* How long a UMR may take before the device is taken as gone. */
#define MLX5RS_UMR_TIMEOUT_MS 2000

/**
 * struct mlx5rs_umr_wr - a UMR work request (MLX5RS_IB_WR_UMR)
 * @wr: the core's request; ex.invalidate_rkey is the mkey
 * @segs: the segments after the control segment (ib/mr/umr.rs)
 * @len: their bytes (112 or 128)
 */
struct mlx5rs_umr_wr {
	struct ib_send_wr wr;
	const void *segs;
	u32 len;
};

bool mlx5rs_ib_is_umr_qp(const struct ib_qp *ibqp)
{
	return READ_ONCE(to_rsdev(ibqp->device)->umr.qp) == ibqp;
}

void mlx5rs_ib_umr_wr_to_rs(const struct ib_send_wr *wr, struct mlx5rs_ib_send_wr *o)
{
	const struct mlx5rs_umr_wr *u = container_of(wr, struct mlx5rs_umr_wr, wr);

	o->opcode = MLX5RS_WR_UMR;
	o->imm = wr->ex.invalidate_rkey;
	o->reg_descs = (u64)(uintptr_t)u->segs;
	o->reg_ndescs = u->len / 8;
	o->num_sge = 0;
	o->sg = 0;
}

/* RESET to RTS, the QP connected to itself on port 1 (its LID as the port has it). */
static int rsumr_to_rts(struct ib_qp *qp)
{
	struct ib_qp_attr a = {};
	struct ib_port_attr pa;
	int err;

	err = ib_query_port(qp->device, 1, &pa);
	if (err)
		return err;
	a.qp_state = IB_QPS_INIT;
	a.port_num = 1;
	err = ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_PKEY_INDEX | IB_QP_PORT |
			   IB_QP_ACCESS_FLAGS);
	if (err)
		return err;
	memset(&a, 0, sizeof(a));
	a.qp_state = IB_QPS_RTR;
	a.path_mtu = IB_MTU_256;
	a.dest_qp_num = qp->qp_num;
	a.min_rnr_timer = 12;
	a.ah_attr.type = rdma_ah_find_type(qp->device, 1);
	rdma_ah_set_dlid(&a.ah_attr, pa.lid);
	rdma_ah_set_port_num(&a.ah_attr, 1);
	err = ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_AV | IB_QP_PATH_MTU | IB_QP_DEST_QPN |
			   IB_QP_RQ_PSN | IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER);
	if (err)
		return err;
	memset(&a, 0, sizeof(a));
	a.qp_state = IB_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	return ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_TIMEOUT | IB_QP_RETRY_CNT |
			    IB_QP_RNR_RETRY | IB_QP_SQ_PSN | IB_QP_MAX_QP_RD_ATOMIC);
}

static void rsumr_destroy(struct mlx5rs_ib_umr *u)
{
	if (u->qp)
		ib_destroy_qp(u->qp);
	if (u->cq)
		ib_free_cq(u->cq);
	if (u->pd)
		ib_dealloc_pd(u->pd);
	WRITE_ONCE(u->qp, NULL);
	u->cq = NULL;
	u->pd = NULL;
}

/**
 * mlx5rs_ib_umr_init() - make the UMR QP's PD, as upstream's mlx5r_umr_init() at load
 * @dev: a device not yet registered
 *
 * Without it UMR is broken (logged) and the MR verbs use commands; registration goes on.
 */
void mlx5rs_ib_umr_init(struct mlx5rs_ib_dev *dev)
{
	struct mlx5rs_ib_umr *u = &dev->umr;
	struct ib_pd *pd = ib_alloc_pd(&dev->ib, 0);

	mutex_lock(&u->lock);
	if (IS_ERR(pd)) {
		u->broken = true;
		dev_warn(dev->ib.dev.parent, "no PD for the UMR QP (%pe): MRs are registered by commands\n",
			 pd);
	} else {
		u->pd = pd;
	}
	mutex_unlock(&u->lock);
}

/* Makes the CQ and QP in the PD; on failure neither is left. Called under @dev->umr.lock. */
static int rsumr_create(struct mlx5rs_ib_dev *dev)
{
	struct mlx5rs_ib_umr *u = &dev->umr;
	struct ib_qp_init_attr init = {};
	struct ib_qp *qp;
	int err;

	if (!u->pd)
		return -EIO;
	u->cq = ib_alloc_cq(&dev->ib, NULL, MLX5RS_UMR_WR, 0, IB_POLL_DIRECT);
	if (IS_ERR(u->cq)) {
		err = PTR_ERR(u->cq);
		u->cq = NULL;
		return err;
	}
	init.send_cq = u->cq;
	init.recv_cq = u->cq;
	init.sq_sig_type = IB_SIGNAL_ALL_WR;
	init.cap.max_send_wr = MLX5RS_UMR_WR;
	init.cap.max_send_sge = 1;
	init.qp_type = IB_QPT_RC;
	qp = ib_create_qp(u->pd, &init);
	if (IS_ERR(qp)) {
		err = PTR_ERR(qp);
		goto fail;
	}
	err = rsumr_to_rts(qp);
	if (err) {
		ib_destroy_qp(qp);
		goto fail;
	}
	WRITE_ONCE(u->qp, qp);
	return 0;
fail:
	ib_free_cq(u->cq);
	u->cq = NULL;
	return err;
}

/**
 * mlx5rs_ib_umr_res() - the UMR QP's PD; the QP is made on first use, as upstream's
 * mlx5r_umr_resource_init()
 * @ibdev: a registered device of this driver
 * @pdn: its PD number
 * @lkey: its local_dma_lkey (reads translation tables)
 *
 * Return: 0, -EIO when UMR is broken, or the error of the verb that could not make
 * a resource (UMR is broken then).
 */
int mlx5rs_ib_umr_res(struct ib_device *ibdev, u32 *pdn, u32 *lkey)
{
	struct mlx5rs_ib_dev *dev = to_rsdev(ibdev);
	struct mlx5rs_ib_umr *u = &dev->umr;
	int err = 0;

	mutex_lock(&u->lock);
	if (u->broken) {
		err = -EIO;
	} else if (!u->qp) {
		err = rsumr_create(dev);
		if (err) {
			u->broken = true;
			dev_warn(&ibdev->dev, "no UMR QP (%pe): MRs are registered by commands\n",
				 ERR_PTR(err));
		}
	}
	if (!err) {
		*pdn = container_of(u->pd, struct mlx5rs_ib_pd, ibpd)->pdn;
		*lkey = u->pd->local_dma_lkey;
	}
	mutex_unlock(&u->lock);
	return err;
}

/**
 * mlx5rs_ib_umr_run() - post one UMR WQE and wait for its completion
 * @ibdev: a registered device of this driver, whose UMR QP exists
 *         (mlx5rs_ib_umr_res() succeeded)
 * @key: the mkey the WQE changes
 * @segs: the WQE's segments after the control segment (ib/mr/umr.rs)
 * @len: their bytes, 112 or 128
 *
 * Return: 0 when the device completed it; -EIO when UMR is broken or the device
 * completed it in error (the mkey unchanged; logged with the syndrome);
 * -ETIMEDOUT when it did not complete in time (the mkey's state unknown, UMR broken);
 * post_send's error (nothing posted).
 */
int mlx5rs_ib_umr_run(struct ib_device *ibdev, u32 key, const void *segs, u32 len)
{
	struct mlx5rs_ib_umr *u = &to_rsdev(ibdev)->umr;
	const struct ib_send_wr *bad;
	struct mlx5rs_umr_wr w = {};
	struct ib_qp_attr a = {};
	unsigned long end;
	struct ib_wc wc;
	int n, err;

	if (len % 8 || len > 128)
		return -EINVAL;
	mutex_lock(&u->lock);
	if (u->broken || !u->qp) {
		err = -EIO;
		goto out;
	}
	w.wr.opcode = MLX5RS_IB_WR_UMR;
	w.wr.send_flags = IB_SEND_SIGNALED;
	w.wr.ex.invalidate_rkey = key;
	w.wr.wr_id = key;
	w.segs = segs;
	w.len = len;
	err = ib_post_send(u->qp, &w.wr, &bad);
	if (err)
		goto out;
	end = jiffies + msecs_to_jiffies(MLX5RS_UMR_TIMEOUT_MS);
	for (;;) {
		n = ib_poll_cq(u->cq, 1, &wc);
		if (n > 0)
			break;
		if (n < 0 || time_after(jiffies, end)) {
			u->broken = true;
			err = n < 0 ? n : -ETIMEDOUT;
			dev_warn(&ibdev->dev, "UMR on mkey %#x did not complete (%pe): MRs are registered by commands\n",
				 key, ERR_PTR(err));
			goto out;
		}
		usleep_range(20, 100);
	}
	if (wc.status == IB_WC_SUCCESS)
		goto out;
	err = -EIO;
	dev_warn(&ibdev->dev, "UMR on mkey %#x failed: %s (vendor syndrome %#x)\n", key,
		 ib_wc_status_msg(wc.status), wc.vendor_err);
	/* As upstream's mlx5r_umr_recover(): the QP back to RTS through RESET. */
	a.qp_state = IB_QPS_RESET;
	if (ib_modify_qp(u->qp, &a, IB_QP_STATE) || rsumr_to_rts(u->qp)) {
		u->broken = true;
		dev_warn(&ibdev->dev, "UMR QP not recovered: MRs are registered by commands\n");
	}
out:
	mutex_unlock(&u->lock);
	return err;
}

/**
 * mlx5rs_ib_umr_cleanup() - destroy the UMR QP, CQ and PD, if made
 * @dev: an unregistered device whose MR cache is empty (no mkey in the PD)
 */
void mlx5rs_ib_umr_cleanup(struct mlx5rs_ib_dev *dev)
{
	mutex_lock(&dev->umr.lock);
	rsumr_destroy(&dev->umr);
	mutex_unlock(&dev->umr.lock);
}
