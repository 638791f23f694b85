// SPDX-License-Identifier: GPL-2.0
/*
 * The device resources of the InfiniBand shim: the provider's own verbs objects that
 * the context of an XRC QP names, made through the RDMA core on this very device as
 * upstream mlx5_ib makes its struct mlx5_ib_resources (main.c
 * mlx5_ib_dev_res_cq_init(), mlx5_ib_dev_res_srq_init(), mlx5_ib_dev_res_init()): a
 * PD (p0), a one-entry CQ (c0), two XRC domains (xrcdn0, xrcdn1), an XRC SRQ in
 * the first with c0 (s0) and a basic SRQ (s1). Upstream's other QPs name s1 when
 * they have no SRQ; this provider's name none (ib/qp/create.rs) except a kernel XRC
 * initiator, whose context names s1 as upstream's create_kernel_qp() does.
 *
 * They are made on the first XRC create_qp (upstream: on the first create_qp or
 * create_srq), all or none under a mutex, and destroyed by mlx5rs_ib_devres_cleanup()
 * after the device is unregistered, as upstream's mlx5_ib_dev_res_cleanup() runs
 * after its IB_REG stage: no QP naming them is left then.
 */
#include <linux/err.h>
#include <linux/mutex.h>
#include <rdma/ib_verbs.h>
#include "ib_priv.h"

static void rsdevres_destroy(struct mlx5rs_ib_devres *r)
{
	if (r->s1)
		ib_destroy_srq(r->s1);
	if (r->s0)
		ib_destroy_srq(r->s0);
	if (r->x1)
		ib_dealloc_xrcd_user(r->x1, NULL);
	if (r->x0)
		ib_dealloc_xrcd_user(r->x0, NULL);
	if (r->c0)
		ib_destroy_cq(r->c0);
	if (r->p0)
		ib_dealloc_pd(r->p0);
	r->s1 = NULL;
	r->s0 = NULL;
	r->x1 = NULL;
	r->x0 = NULL;
	r->c0 = NULL;
	r->p0 = NULL;
}

/* Makes every resource; on failure none is left. Called under @dev->devr.lock. */
static int rsdevres_create(struct mlx5rs_ib_dev *dev)
{
	struct mlx5rs_ib_devres *r = &dev->devr;
	struct ib_cq_init_attr cq_attr = { .cqe = 1 };
	struct ib_srq_init_attr srq_attr = {};
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_xrcd *x;
	struct ib_srq *s;
	int err;

	pd = ib_alloc_pd(&dev->ib, 0);
	if (IS_ERR(pd))
		return PTR_ERR(pd);
	r->p0 = pd;
	cq = ib_create_cq(&dev->ib, NULL, NULL, NULL, &cq_attr);
	if (IS_ERR(cq)) {
		err = PTR_ERR(cq);
		goto fail;
	}
	r->c0 = cq;
	x = ib_alloc_xrcd_user(&dev->ib, NULL, NULL);
	if (IS_ERR(x)) {
		err = PTR_ERR(x);
		goto fail;
	}
	r->x0 = x;
	x = ib_alloc_xrcd_user(&dev->ib, NULL, NULL);
	if (IS_ERR(x)) {
		err = PTR_ERR(x);
		goto fail;
	}
	r->x1 = x;
	srq_attr.attr.max_sge = 1;
	srq_attr.attr.max_wr = 1;
	srq_attr.srq_type = IB_SRQT_XRC;
	srq_attr.ext.xrc.xrcd = r->x0;
	srq_attr.ext.cq = r->c0;
	s = ib_create_srq(r->p0, &srq_attr);
	if (IS_ERR(s)) {
		err = PTR_ERR(s);
		goto fail;
	}
	r->s0 = s;
	/* Upstream mlx5_ib_dev_res_srq_init()'s s1: basic, one WQE of one entry. */
	memset(&srq_attr, 0, sizeof(srq_attr));
	srq_attr.attr.max_sge = 1;
	srq_attr.attr.max_wr = 1;
	srq_attr.srq_type = IB_SRQT_BASIC;
	s = ib_create_srq(r->p0, &srq_attr);
	if (IS_ERR(s)) {
		err = PTR_ERR(s);
		goto fail;
	}
	r->s1 = s;
	return 0;
fail:
	/* Without cap xrc the domains are refused: no XRC QP, nothing to report. */
	if (err != -EOPNOTSUPP)
		dev_err(&dev->ib.dev, "device resources for XRC QPs not created (%pe)\n",
			ERR_PTR(err));
	rsdevres_destroy(r);
	return err;
}

/**
 * mlx5rs_ib_devres_get() - the device resources for an XRC QP, made if not yet
 * @dev: a registered device
 * @init: its devr_* numbers are set
 *
 * Return: 0, or the error of the verb that could not make one of them.
 */
int mlx5rs_ib_devres_get(struct mlx5rs_ib_dev *dev, struct mlx5rs_ib_qp_init *init)
{
	struct mlx5rs_ib_devres *r = &dev->devr;
	int err = 0;

	mutex_lock(&r->lock);
	if (!r->s1)
		err = rsdevres_create(dev);
	if (!err) {
		init->devr_pdn = container_of(r->p0, struct mlx5rs_ib_pd, ibpd)->pdn;
		init->devr_cqn = container_of(r->c0, struct mlx5rs_ib_cq, ibcq)->cqn;
		init->devr_srqn = container_of(r->s0, struct mlx5rs_ib_srq, ibsrq)->srqn;
		init->devr_xrcdn = container_of(r->x1, struct mlx5rs_ib_xrcd, ibxrcd)->xrcdn;
		init->devr_srqn1 = container_of(r->s1, struct mlx5rs_ib_srq, ibsrq)->srqn;
		init->devr_xrcdn0 = container_of(r->x0, struct mlx5rs_ib_xrcd, ibxrcd)->xrcdn;
	}
	mutex_unlock(&r->lock);
	return err;
}

/**
 * mlx5rs_ib_devres_cleanup() - destroy the device resources, if made
 * @dev: an unregistered device (no QP names them any more)
 */
void mlx5rs_ib_devres_cleanup(struct mlx5rs_ib_dev *dev)
{
	mutex_lock(&dev->devr.lock);
	rsdevres_destroy(&dev->devr);
	mutex_unlock(&dev->devr.lock);
}
