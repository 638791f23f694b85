// SPDX-License-Identifier: GPL-2.0
/*
 * The bench step of ib_kclient: the driver's own cost through the kernel verbs, and
 * an exact count of every work request and completion (tests/bench/guest-kbench.sh,
 * `make bench`; tests/scenarios-ib/94-kclient-loop.sh, `make check` and `make soak`).
 * Off by default; with the module parameter bench=N (work requests), after the walk
 * of each add:
 *
 *   bench.setup     a PD, a send CQ and a receive CQ (ib_create_cq with this file's
 *                   completion handler) and two RC QPs A and B in loopback,
 *                   connected by kc_rc_connect; one page DMA-mapped, addressed through
 *                   the PD's local_dma_lkey
 *   bench.run       N SENDs of KB_LEN bytes from A to B, in rounds of bench_batch
 *                   (default 32): B's receives posted as one chain (one
 *                   ib_post_recv), the send CQ armed (IB_CQ_NEXT_COMP), A's sends
 *                   posted as one chain of signalled work requests (one
 *                   ib_post_send: one doorbell), the handler awaited, then both CQs
 *                   polled until the round's completions are all in. Each completion
 *                   must be IB_WC_SUCCESS with its opcode, in order (wr_id), a
 *                   receive's byte_len KB_LEN
 *   bench.handler-hardirq
 *                   every call of the completion handler came in hard IRQ context, as
 *                   upstream mlx5_ib calls it (eq.c mlx5_eq_comp_int, a request_irq
 *                   handler): the context ULPs rely on (IB_POLL_SOFTIRQ's
 *                   irq_poll_sched has its softirq run at that IRQ's exit)
 *   bench.exact     exactly N send and N receive completions, and both CQs empty
 *                   after the last round (one request or completion too many or too
 *                   few fails it)
 *   bench.teardown  QPs, CQs and PD destroyed, each status checked (a CQ's destroy
 *                   returns none)
 *
 * With bench_bg=1 instead (tests/scenarios/73-dp-teardown.sh: the provider unloads
 * or its function unbinds while a kernel consumer's traffic runs), bench.setup runs in
 * the add, then a kernel thread posts rounds of bench_batch SENDs, each checked as
 * above, until the core removes the device from the client (it unregisters, or this
 * module unloads). The remove stops the thread after its round, then reports
 * bench.run ("# G.bench-bg rounds R sends S recvs V": every round complete),
 * bench.exact (S = V = R x batch, both CQs empty) and bench.teardown: the consumer
 * drains and frees its objects before the unregistration goes on, as a ULP does.
 *
 * Figures (ktime_get_ns), two lines "# G.bench k=v ..." (wrs= first) and
 * "# G.bench calls k=v ..." (the poll counts and the medians):
 *   post_send_ns / post_recv_ns   the ib_post_send / ib_post_recv calls' time over the
 *                                 work requests they posted (per work request)
 *   poll_send_ns / poll_recv_ns   the ib_poll_cq calls that returned completions,
 *                                 their time over those completions (per CQE; a call
 *                                 that found the CQ empty is counted in empty_polls,
 *                                 not timed: the wait for the device is not the
 *                                 driver's cost; empty_send_polls: those of the
 *                                 send CQ)
 *   send_polls / recv_polls       the ib_poll_cq calls that returned completions
 *                                 (32 CQEs per round in one call each, at best)
 *   {post_send,post_recv,poll_send,poll_recv}_p50_ns
 *                                 the median over the calls (the first 4096) of one
 *                                 call's time over its requests or CQEs: the figures
 *                                 above are means, which a host that stalls the
 *                                 guest's vCPU now and then (a loaded TCG host)
 *                                 inflates; the median mostly misses the stalls
 *   irq_ns_{p50,mean,min,max}     ib_post_send returned (the doorbell is rung) → the
 *                                 completion handler runs, each round (the device's
 *                                 work on the round's first WQE is in it; the same
 *                                 emulator serves both drivers); a round whose
 *                                 handler ran before ib_post_send returned (the
 *                                 device completed a WQE of the chain while the
 *                                 driver still posted) is counted in irq_early, not
 *                                 sampled
 */
#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/jiffies.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/preempt.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <rdma/ib_verbs.h>

#include "kclient.h"

static unsigned int bench;
module_param(bench, uint, 0444);
MODULE_PARM_DESC(bench, "After the walk, time N SEND work requests through one RC QP pair (default 0: off)");
static unsigned int bench_batch = 32;
module_param(bench_batch, uint, 0444);
MODULE_PARM_DESC(bench_batch, "Work requests per ib_post_send chain of the bench (1..256, default 32)");
static bool bench_bg;
module_param(bench_bg, bool, 0444);
MODULE_PARM_DESC(bench_bg, "Run the bench's SEND rounds in a kernel thread from the add until the device's remove (default off)");

#define KB_LEN 64
#define KB_BUF 4096
#define KB_WAIT_MS 5000
#define KB_MAX_BATCH 256
#define KB_IRQ_SAMPLES 4096
/* The per-call samples (median per request / CQE): kb_per() indices. */
enum { KB_POST_SEND, KB_POST_RECV, KB_POLL_SEND, KB_POLL_RECV, KB_NPER };

/* A check that prints only when it fails (the step's "ok" line comes once, at its end). */
#define kb_chk(r, ok, step, ...) ((ok) || kc_ok(r, false, step, __VA_ARGS__))

struct kb {
	struct kc_run *r;
	struct kc_run run;	/* the add's, kept for a background run */
	struct task_struct *task;	/* the background run (bench_bg) */
	bool failed;		/* a background round failed (reported there) */
	u64 rounds;		/* background rounds complete */
	struct ib_device *dev;
	struct ib_pd *pd;
	struct ib_cq *scq, *rcq;
	struct ib_qp *a, *b;
	u8 *buf;
	u64 dma;
	bool mapped;
	struct completion done;
	u64 t_irq;		/* ktime of the handler's last run (0: not since armed) */
	atomic_t calls, hardirq_calls;	/* handler calls, those in hard IRQ */
	unsigned int nb;	/* batch */
	struct ib_send_wr *swr;
	struct ib_recv_wr *rwr;
	struct ib_sge sge;
	struct ib_wc *wc;
	u64 *irq;		/* samples of doorbell → handler, ns */
	unsigned int nirq;
	/* per call, its time over its requests or CQEs, ns (KB_POST_SEND..KB_POLL_RECV) */
	u64 *per[KB_NPER];
	unsigned int nper[KB_NPER];
	unsigned int irq_early;	/* rounds whose handler ran before ib_post_send returned */
	/* totals */
	u64 post_send_ns, post_recv_ns, poll_send_ns, poll_recv_ns;
	u64 sends, recvs, empty_polls;
	u64 send_polls, recv_polls;	/* ib_poll_cq calls that returned completions */
	u64 empty_send_polls;		/* of empty_polls, those of the send CQ */
};

/* One call's time @ns over its @n requests or CQEs, as sample @k (the first 4096). */
static void kb_per(struct kb *b, unsigned int k, u64 ns, unsigned int n)
{
	if (b->nper[k] < KB_IRQ_SAMPLES && n)
		b->per[k][b->nper[k]++] = div_u64(ns, n);
}

static void kb_comp(struct ib_cq *cq, void *ctx)
{
	struct kb *b = ctx;

	WRITE_ONCE(b->t_irq, ktime_get_ns());
	atomic_inc(&b->calls);
	if (in_hardirq())
		atomic_inc(&b->hardirq_calls);
	complete(&b->done);
}

static struct ib_qp *kb_qp(struct kb *b, const char *step)
{
	struct ib_qp_init_attr init = {
		.event_handler = kc_event,
		.send_cq = b->scq,
		.recv_cq = b->rcq,
		.cap = { .max_send_wr = b->nb, .max_recv_wr = b->nb, .max_send_sge = 1,
			 .max_recv_sge = 1 },
		.sq_sig_type = IB_SIGNAL_ALL_WR,
		.qp_type = IB_QPT_RC,
	};
	struct ib_qp *qp = ib_create_qp(b->pd, &init);

	if (IS_ERR(qp)) {
		kc_ok(b->r, false, step, "create_qp err %ld", PTR_ERR(qp));
		return NULL;
	}
	return qp;
}

/*
 * kb_reap: poll @cq until @n completions are in (within KB_WAIT_MS), each checked:
 * success, @opcode, wr_id @first, @first + 1, ... (and a receive's length). The
 * calls that returned completions are timed into *@ns.
 */
static bool kb_reap(struct kb *b, struct ib_cq *cq, unsigned int n, u64 first,
		    enum ib_wc_opcode opcode, u64 *ns, u64 *count, u64 *calls,
		    unsigned int per)
{
	unsigned long end = jiffies + msecs_to_jiffies(KB_WAIT_MS);
	unsigned int got = 0, i;
	u64 t;
	int k;

	while (got < n) {
		t = ktime_get_ns();
		k = ib_poll_cq(cq, n - got, b->wc + got);
		t = ktime_get_ns() - t;
		if (k < 0)
			return kc_ok(b->r, false, "bench.run", "poll_cq err %d", k);
		if (k > 0) {
			*ns += t;
			got += k;
			(*calls)++;
			kb_per(b, per, t, k);
			continue;
		}
		b->empty_polls++;
		if (cq == b->scq)
			b->empty_send_polls++;
		if (time_after(jiffies, end))
			return kc_ok(b->r, false, "bench.run", "%u of %u %s completions in %d ms",
				     got, n, opcode == IB_WC_RECV ? "receive" : "send",
				     KB_WAIT_MS);
		cond_resched();
	}
	for (i = 0; i < n; i++) {
		struct ib_wc *wc = &b->wc[i];

		if (wc->status != IB_WC_SUCCESS || wc->opcode != opcode ||
		    wc->wr_id != first + i ||
		    (opcode == IB_WC_RECV && wc->byte_len != KB_LEN))
			return kc_ok(b->r, false, "bench.run",
				     "completion %llu: wr_id %llu status %d (%s, vendor 0x%x) opcode %d byte_len %u, want wr_id %llu opcode %d",
				     *count + i, wc->wr_id, wc->status,
				     ib_wc_status_msg(wc->status), wc->vendor_err, wc->opcode,
				     wc->byte_len, first + i, opcode);
	}
	*count += n;
	return true;
}

/* One round: @n receives on B, @n sends from A (wr_ids from @seq), reaped. */
static bool kb_round(struct kb *b, unsigned int n, u64 seq)
{
	const struct ib_send_wr *sbad;
	const struct ib_recv_wr *rbad;
	unsigned int i;
	u64 t, t1;
	int err;

	for (i = 0; i < n; i++) {
		b->rwr[i].wr_id = seq + i;
		b->rwr[i].next = i + 1 < n ? &b->rwr[i + 1] : NULL;
		b->swr[i].wr_id = seq + i;
		b->swr[i].next = i + 1 < n ? &b->swr[i + 1] : NULL;
	}
	t = ktime_get_ns();
	err = ib_post_recv(b->b, b->rwr, &rbad);
	t = ktime_get_ns() - t;
	b->post_recv_ns += t;
	kb_per(b, KB_POST_RECV, t, n);
	if (err)
		return kc_ok(b->r, false, "bench.run", "post_recv err %d at wr %llu", err, seq);
	reinit_completion(&b->done);
	WRITE_ONCE(b->t_irq, 0);
	err = ib_req_notify_cq(b->scq, IB_CQ_NEXT_COMP);
	if (err < 0)
		return kc_ok(b->r, false, "bench.run", "req_notify_cq err %d", err);
	t = ktime_get_ns();
	err = ib_post_send(b->a, b->swr, &sbad);
	t1 = ktime_get_ns();
	b->post_send_ns += t1 - t;
	kb_per(b, KB_POST_SEND, t1 - t, n);
	if (err)
		return kc_ok(b->r, false, "bench.run", "post_send err %d at wr %llu", err, seq);
	if (!wait_for_completion_timeout(&b->done, msecs_to_jiffies(KB_WAIT_MS)))
		return kc_ok(b->r, false, "bench.run", "no completion event in %d ms (wr %llu)",
			     KB_WAIT_MS, seq);
	t = READ_ONCE(b->t_irq);
	if (t <= t1)
		b->irq_early++;
	else if (b->nirq < KB_IRQ_SAMPLES)
		b->irq[b->nirq++] = t - t1;
	return kb_reap(b, b->scq, n, seq, IB_WC_SEND, &b->poll_send_ns, &b->sends,
		       &b->send_polls, KB_POLL_SEND) &&
	       kb_reap(b, b->rcq, n, seq, IB_WC_RECV, &b->poll_recv_ns, &b->recvs,
		       &b->recv_polls, KB_POLL_RECV);
}

static int kb_cmp(const void *x, const void *y)
{
	u64 a = *(const u64 *)x, b = *(const u64 *)y;

	return a < b ? -1 : a > b;
}

static u64 kb_p50(const struct kb *b, unsigned int k)
{
	return b->nper[k] ? b->per[k][b->nper[k] / 2] : 0;
}

static void kb_figures(struct kb *b)
{
	u64 sum = 0, lo = U64_MAX, hi = 0;
	unsigned int i;

	for (i = 0; i < b->nirq; i++) {
		sum += b->irq[i];
		lo = min(lo, b->irq[i]);
		hi = max(hi, b->irq[i]);
	}
	sort(b->irq, b->nirq, sizeof(*b->irq), kb_cmp, NULL);
	for (i = 0; i < KB_NPER; i++)
		sort(b->per[i], b->nper[i], sizeof(*b->per[i]), kb_cmp, NULL);
	kc_line("# %u.bench wrs=%u batch=%u sends=%llu recvs=%llu post_send_ns=%llu post_recv_ns=%llu poll_send_ns=%llu poll_recv_ns=%llu empty_polls=%llu irq_early=%u irq_n=%u irq_ns_p50=%llu irq_ns_mean=%llu irq_ns_min=%llu irq_ns_max=%llu",
		b->r->gen, bench, b->nb, b->sends, b->recvs,
		div64_u64(b->post_send_ns, max_t(u64, b->sends, 1)),
		div64_u64(b->post_recv_ns, max_t(u64, b->recvs, 1)),
		div64_u64(b->poll_send_ns, max_t(u64, b->sends, 1)),
		div64_u64(b->poll_recv_ns, max_t(u64, b->recvs, 1)),
		b->empty_polls, b->irq_early, b->nirq, b->nirq ? b->irq[b->nirq / 2] : 0,
		b->nirq ? div64_u64(sum, b->nirq) : 0, b->nirq ? lo : 0, hi);
	/* A second line: kc_line's 256 bytes hold no more than the first's. */
	kc_line("# %u.bench calls empty_send_polls=%llu send_polls=%llu recv_polls=%llu post_send_p50_ns=%llu post_recv_p50_ns=%llu poll_send_p50_ns=%llu poll_recv_p50_ns=%llu",
		b->r->gen, b->empty_send_polls, b->send_polls, b->recv_polls,
		kb_p50(b, KB_POST_SEND), kb_p50(b, KB_POST_RECV), kb_p50(b, KB_POLL_SEND),
		kb_p50(b, KB_POLL_RECV));
}

/* bench.setup: the CQs, the connected QP pair, the mapped page and the requests. */
static bool kb_setup(struct kb *b, u32 port, const struct ib_port_attr *pa)
{
	struct ib_cq_init_attr ca = { .cqe = b->nb };
	struct kc_run *r = b->r;
	unsigned int i;

	b->scq = ib_create_cq(b->dev, kb_comp, NULL, b, &ca);
	if (!kb_chk(r, !IS_ERR(b->scq), "bench.setup", "create_cq err %d", PTR_ERR_OR_ZERO(b->scq))) {
		b->scq = NULL;
		return false;
	}
	b->rcq = ib_create_cq(b->dev, kb_comp, NULL, b, &ca);
	if (!kb_chk(r, !IS_ERR(b->rcq), "bench.setup", "create_cq err %d", PTR_ERR_OR_ZERO(b->rcq))) {
		b->rcq = NULL;
		return false;
	}
	b->a = kb_qp(b, "bench.setup");
	b->b = b->a ? kb_qp(b, "bench.setup") : NULL;
	if (!b->b ||
	    !kc_rc_connect(r, "bench.setup", b->a, b->b->qp_num, port, pa) ||
	    !kc_rc_connect(r, "bench.setup", b->b, b->a->qp_num, port, pa))
		return false;
	b->buf = kzalloc(KB_BUF, GFP_KERNEL);
	if (!kb_chk(r, b->buf != NULL, "bench.setup", "no memory"))
		return false;
	b->dma = ib_dma_map_single(b->dev, b->buf, KB_BUF, DMA_BIDIRECTIONAL);
	if (!kb_chk(r, !ib_dma_mapping_error(b->dev, b->dma), "bench.setup", "dma map failed"))
		return false;
	b->mapped = true;
	/* Every send reads, every receive writes, the same KB_LEN bytes of the page. */
	b->sge = (struct ib_sge){ .addr = b->dma, .length = KB_LEN, .lkey = b->pd->local_dma_lkey };
	for (i = 0; i < b->nb; i++) {
		b->swr[i] = (struct ib_send_wr){ .sg_list = &b->sge, .num_sge = 1,
						 .opcode = IB_WR_SEND,
						 .send_flags = IB_SEND_SIGNALED };
		b->rwr[i] = (struct ib_recv_wr){ .sg_list = &b->sge, .num_sge = 1 };
	}
	kc_ok(r, true, "bench.setup", " ");
	kc_line("# %u.bench qp a %u b %u", r->gen, b->a->qp_num, b->b->qp_num);
	return true;
}

/* bench.exact: @want completions of each kind, and nothing more on either CQ. */
static void kb_exact(struct kb *b, u64 want)
{
	int i = ib_poll_cq(b->scq, 1, b->wc);
	int n = ib_poll_cq(b->rcq, 1, b->wc);

	kc_ok(b->r, b->sends == want && b->recvs == want && i == 0 && n == 0, "bench.exact",
	      "send completions %llu receive completions %llu of %llu, then %d / %d more",
	      b->sends, b->recvs, want, i, n);
}

static void kb_run(struct kb *b, u32 port, const struct ib_port_attr *pa)
{
	u64 seq = 0;
	unsigned int n, left;

	if (!kb_setup(b, port, pa))
		return;
	for (left = bench; left > 0; left -= n) {
		n = min_t(unsigned int, left, b->nb);
		if (!kb_round(b, n, seq))
			break;
		seq += n;
		cond_resched();
	}
	if (left > 0)
		return;
	kc_ok(b->r, true, "bench.run", " ");
	kb_figures(b);
	kc_ok(b->r, atomic_read(&b->calls) > 0 &&
		    atomic_read(&b->hardirq_calls) == atomic_read(&b->calls),
	      "bench.handler-hardirq", "%d of %d completion handler calls in hard IRQ",
	      atomic_read(&b->hardirq_calls), atomic_read(&b->calls));
	kb_exact(b, bench);
}

/* The background run (bench_bg): full rounds until the remove stops it. */
static int kb_thread(void *arg)
{
	struct kb *b = arg;
	u64 seq = 0;

	while (!kthread_should_stop()) {
		if (b->failed) {
			/* Reported by kb_round; wait for the stop (the thread may not exit first). */
			schedule_timeout_interruptible(HZ / 10);
			continue;
		}
		if (!kb_round(b, b->nb, seq)) {
			b->failed = true;
			continue;
		}
		seq += b->nb;
		b->rounds++;
		cond_resched();
	}
	return 0;
}

/* Everything kc_bench made, each destroy's status checked, and @b itself. */
static void kb_teardown(struct kb *b)
{
	struct kc_run *r = b->r;
	bool ok = true;
	unsigned int i;
	int err;

	if (b->a) {
		err = ib_destroy_qp(b->a);
		ok &= kb_chk(r, !err, "bench.teardown", "destroy qp a err %d", err);
	}
	if (b->b) {
		err = ib_destroy_qp(b->b);
		ok &= kb_chk(r, !err, "bench.teardown", "destroy qp b err %d", err);
	}
	/* (ib_destroy_cq returns nothing: the core WARNs if a CQ is still in use.) */
	if (b->scq)
		ib_destroy_cq(b->scq);
	if (b->rcq)
		ib_destroy_cq(b->rcq);
	if (b->mapped)
		ib_dma_unmap_single(b->dev, b->dma, KB_BUF, DMA_BIDIRECTIONAL);
	kfree(b->buf);
	if (!IS_ERR_OR_NULL(b->pd)) {
		err = ib_dealloc_pd_user(b->pd, NULL);
		ok &= kb_chk(r, !err, "bench.teardown", "dealloc pd err %d", err);
	}
	if (ok)
		kc_ok(r, true, "bench.teardown", " ");
	kvfree(b->irq);
	for (i = 0; i < KB_NPER; i++)
		kvfree(b->per[i]);
	kfree(b->wc);
	kfree(b->rwr);
	kfree(b->swr);
	kfree(b);
}

struct kb *kc_bench(struct kc_run *r, struct ib_device *dev, u32 port,
		    const struct ib_port_attr *pa)
{
	struct kb *b;
	unsigned int i;

	if (!bench && !bench_bg)
		return NULL;
	b = kzalloc(sizeof(*b), GFP_KERNEL);
	if (!kb_chk(r, b != NULL, "bench.setup", "no memory"))
		return NULL;
	b->run = *r;
	b->r = &b->run;
	b->dev = dev;
	b->nb = clamp(bench_batch, 1U, KB_MAX_BATCH);
	init_completion(&b->done);
	b->swr = kcalloc(b->nb, sizeof(*b->swr), GFP_KERNEL);
	b->rwr = kcalloc(b->nb, sizeof(*b->rwr), GFP_KERNEL);
	b->wc = kcalloc(b->nb, sizeof(*b->wc), GFP_KERNEL);
	b->irq = kvcalloc(KB_IRQ_SAMPLES, sizeof(*b->irq), GFP_KERNEL);
	for (i = 0; i < KB_NPER; i++)
		b->per[i] = kvcalloc(KB_IRQ_SAMPLES, sizeof(*b->per[i]), GFP_KERNEL);
	b->pd = ib_alloc_pd(dev, 0);
	if (!kb_chk(r, b->swr && b->rwr && b->wc && b->irq && b->per[KB_POST_SEND] &&
		    b->per[KB_POST_RECV] && b->per[KB_POLL_SEND] && b->per[KB_POLL_RECV],
		    "bench.setup", "no memory") ||
	    !kb_chk(r, !IS_ERR(b->pd), "bench.setup", "alloc_pd err %d", PTR_ERR_OR_ZERO(b->pd))) {
		kb_teardown(b);
		return NULL;
	}
	if (!bench_bg) {
		kb_run(b, port, pa);
		kb_teardown(b);
		return NULL;
	}
	if (!kb_setup(b, port, pa)) {
		kb_teardown(b);
		return NULL;
	}
	b->task = kthread_run(kb_thread, b, "ib_kclient_bg");
	if (!kb_chk(r, !IS_ERR(b->task), "bench.run", "kthread_run err %ld", PTR_ERR(b->task))) {
		kb_teardown(b);
		return NULL;
	}
	kc_line("# %u.bench-bg started", r->gen);
	return b;
}

void kc_bench_stop(struct kb *b)
{
	if (!b)
		return;
	kthread_stop(b->task);
	kc_line("# %u.bench-bg rounds %llu sends %llu recvs %llu batch %u", b->r->gen, b->rounds,
		b->sends, b->recvs, b->nb);
	if (!b->failed) {
		kc_ok(b->r, b->rounds > 0, "bench.run", "no round completed");
		kb_exact(b, b->rounds * b->nb);
	}
	kb_teardown(b);
}
