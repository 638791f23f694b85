/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the parts of ib_kclient share: the result lines (kclient.c), the traffic
 * step (traffic.c) and the bench step (bench.c).
 */
#ifndef KCLIENT_H
#define KCLIENT_H

#include <rdma/ib_verbs.h>

/* One device's walk: the add's sequence number names its steps. */
struct kc_run {
	unsigned int gen;
};

/* A line of the results (kernel log and debugfs ib_kclient/results). */
void kc_line(const char *fmt, ...) __printf(1, 2);
/* One step's result (diag: why it failed); returns @ok. */
bool kc_ok(struct kc_run *r, bool ok, const char *step, const char *fmt, ...) __printf(4, 5);
/* The device has op @name (@present); a failed step @step otherwise. */
bool kc_op(struct kc_run *r, const void *present, const char *step, const char *name);
/* ib_modify_qp; step @step expects @want (0 or a -errno). */
bool kc_modify(struct kc_run *r, struct ib_qp *qp, const char *step, struct ib_qp_attr *a,
	       int mask, int want);
/* The event handler of the client's QPs, SRQs and CQs (debugfs ib_kclient/events). */
void kc_event(struct ib_event *ev, void *ctx);

/* An RC QP to RTS in loopback to @remote (kclient.c; steps @prefix.init/.rtr/.rts). */
bool kc_rc_connect(struct kc_run *r, const char *prefix, struct ib_qp *qp, u32 remote,
		   u32 port, const struct ib_port_attr *pa);
/* The kernel verbs step (kverbs.c): runs only with the module parameter kverbs=1. */
void kc_kverbs(struct kc_run *r, struct ib_device *dev, u32 port,
	       const struct ib_port_attr *pa);
/* The kernel XRC step (xrc.c): runs only with the module parameter xrc=1. */
void kc_xrc(struct kc_run *r, struct ib_device *dev, u32 port, const struct ib_port_attr *pa);
/* The drain step (drain.c, module parameter drain=1): armed at the first add, run at
 * that device's remove. */
void kc_drain_arm(struct kc_run *r, struct ib_device *dev, u32 port,
		  const struct ib_port_attr *pa);
void kc_drain_remove(struct ib_device *dev);
/* The traffic step (traffic.c): runs only with the module parameter traffic=1. */
void kc_traffic(struct kc_run *r, struct ib_device *dev, u32 port,
		const struct ib_port_attr *pa);
/*
 * The bench step (bench.c): runs only with the module parameter bench=N, or with
 * bench_bg=1 in a kernel thread, returned, that kc_bench_stop ends (at the remove).
 */
struct kb;
struct kb *kc_bench(struct kc_run *r, struct ib_device *dev, u32 port,
		    const struct ib_port_attr *pa);
void kc_bench_stop(struct kb *b);

#endif
