// SPDX-License-Identifier: GPL-2.0
/*
 * The traffic step of ib_kclient: a kernel consumer moving data as a ULP does
 * (tests/scenarios-ib/93-dp-traffic.sh; off by default, so the walk scenarios 72 and
 * 92 assert is unchanged). With the module parameter traffic=1, after the walk of
 * each add:
 *
 *   setup           a PD, one CQ (polled directly) and two RC QPs A and B connected
 *                   to each other in loopback (DLID = the port's own LID, each the
 *                   other's remote QPN), every send work request signalled
 *   mr, reg-mr      one page of memory per QP, DMA-mapped, and a fast-registration
 *                   MR for each (ib_alloc_mr IB_MR_TYPE_MEM_REG, ib_map_mr_sg), the
 *                   key's variant byte stepped (ib_update_fast_reg_key) and the MR
 *                   registered by an IB_WR_REG_MR on its QP with local write and
 *                   remote read, write and atomic access
 *   then, A the requester and B the responder, each completion's status and opcode
 *   (and a receive's length and source QP) checked, and then the bytes:
 *   send            B posts a receive, A sends 256 bytes: the receive completes on B
 *                   with their length, they are in B's page and the byte after them
 *                   is untouched
 *   write           A writes 512 bytes at offset 1024 of B's page (B's rkey)
 *   read            A reads 512 bytes at offset 2048 of B's page into its own
 *   send-imm        B posts a receive, A sends 64 bytes with an immediate: B's
 *                   receive has IB_WC_WITH_IMM, the immediate as sent and the length,
 *                   the bytes are in B's page and the byte after them is untouched
 *   send-inline     the same with IB_SEND_INLINE (each QP created for 64 inline
 *                   bytes): 48 bytes from a buffer of the stack, no key
 *   write-imm       B posts a receive, A writes 128 bytes at offset 3584 of B's page
 *                   with an immediate: A's completion is a write, B's receive is
 *                   IB_WC_RECV_RDMA_WITH_IMM with the immediate and the length, the
 *                   bytes are there
 *   cmp-swap        compare-and-swap on B's word at 3072: the swap happened and the
 *                   old value came back into A's page
 *   fetch-add       fetch-and-add on B's word at 3080: the sum is there and the old
 *                   value came back
 *                   (upstream mlx5_ib refuses both from the kernel, -EOPNOTSUPP at
 *                   post_send: accepted as its answer, and then both words must be
 *                   untouched; user space's atomics are perftest's and pyverbs')
 *   local-inv       B invalidates its MR (IB_WR_LOCAL_INV); a WRITE from A through
 *                   the invalidated rkey then completes with IB_WC_REM_ACCESS_ERR and
 *                   B's bytes stay as they were
 *   teardown        QPs, MRs, CQ and PD destroyed, each status checked
 *
 * The atomics' operands have the same value in either byte order and the add makes
 * no carry between bytes, so the expected memory does not depend on the endianness
 * the device applies to atomics (mlx5's atomic_req_8B_endianness_mode).
 * Each step is a result line as the walk's are (kc_ok), named "traffic.<step>".
 */
#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/module.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <rdma/ib_verbs.h>

#include "kclient.h"

static bool traffic;
module_param(traffic, bool, 0444);
MODULE_PARM_DESC(traffic, "After the walk, move data between two RC QPs in loopback (default off)");

/*
 * How long a traffic step waits for each completion. A scenario that makes the device
 * lose one on purpose (94-dp-faults' malformed CQEs) shortens the wait it knows will
 * run out.
 */
static unsigned int traffic_wait_ms = 5000;
module_param(traffic_wait_ms, uint, 0444);
MODULE_PARM_DESC(traffic_wait_ms, "Wait for each traffic completion, ms (default 5000)");

#define KT_BUF 4096		/* one page per QP; kmalloc aligns a power-of-two size */
#define KT_ACCESS (IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ | \
		   IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC)
#define KT_SEND_LEN 256
#define KT_WRITE_OFF 1024
#define KT_READ_OFF 2048
#define KT_RW_LEN 512
#define KT_CS_OFF 3072
#define KT_FA_OFF 3080
#define KT_CS_OLD 0x1111111111111111ULL
#define KT_CS_NEW 0x2222222222222222ULL
#define KT_FA_OLD 0x4444444444444444ULL
#define KT_FA_ADD 0x0101010101010101ULL
#define KT_IMM_LEN 64
#define KT_INLINE_LEN 48
#define KT_WIMM_OFF 3584
#define KT_WIMM_LEN 128
#define KT_SEND_IMM 0x5e1d0a11
#define KT_WRITE_IMM 0x77a1e0b2

enum {
	KT_WR_REG = 1, KT_WR_RECV, KT_WR_SEND, KT_WR_WRITE, KT_WR_READ, KT_WR_CS, KT_WR_FA,
	KT_WR_INV, KT_WR_STALE, KT_WR_SEND_IMM, KT_WR_INLINE, KT_WR_WRITE_IMM,
};

/* One QP with its page and the MR over it. */
struct kt_side {
	struct ib_qp *qp;
	u8 *buf;
	struct scatterlist sg;
	bool mapped;
	struct ib_mr *mr;
};

#define KT_STASH 8

struct kt {
	struct kc_run *r;
	struct ib_device *dev;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct kt_side a, b;
	/* Completions polled while waiting for another (a step's arrive in any order). */
	struct ib_wc stash[KT_STASH];
	unsigned int nstash;
};

/* The CPU hands a page to the device, and takes it back to read what it did. */
static void kt_to_dev(struct kt *t, struct kt_side *s)
{
	ib_dma_sync_single_for_device(t->dev, sg_dma_address(&s->sg), KT_BUF, DMA_BIDIRECTIONAL);
}

static void kt_to_cpu(struct kt *t, struct kt_side *s)
{
	ib_dma_sync_single_for_cpu(t->dev, sg_dma_address(&s->sg), KT_BUF, DMA_BIDIRECTIONAL);
}

/*
 * kt_wait: the completion of work request @wr_id into @wc, within traffic_wait_ms. The
 * completions of a step's work requests come in any order (a receive's may come
 * before the send's): others polled meanwhile are kept for the next waits.
 */
static bool kt_wait(struct kt *t, const char *step, u64 wr_id, struct ib_wc *wc)
{
	unsigned long end = jiffies + msecs_to_jiffies(traffic_wait_ms);
	unsigned int i;
	int n;

	for (i = 0; i < t->nstash; i++) {
		if (t->stash[i].wr_id == wr_id) {
			*wc = t->stash[i];
			t->stash[i] = t->stash[--t->nstash];
			return true;
		}
	}
	for (;;) {
		n = ib_poll_cq(t->cq, 1, wc);
		if (n < 0)
			return kc_ok(t->r, false, step, "poll_cq err %d", n);
		if (n == 1) {
			if (wc->wr_id == wr_id)
				return true;
			if (t->nstash == KT_STASH)
				return kc_ok(t->r, false, step, "%u completions not waited for (last wr %llu status %d) while waiting for wr %llu",
					     KT_STASH, wc->wr_id, wc->status, wr_id);
			t->stash[t->nstash++] = *wc;
			continue;
		}
		if (time_after(jiffies, end))
			return kc_ok(t->r, false, step, "no completion of wr %llu in %u ms",
				     wr_id, traffic_wait_ms);
		usleep_range(200, 1000);
	}
}

/* kt_wait, then the completion's status and opcode are @status and @opcode. */
static bool kt_complete(struct kt *t, const char *step, u64 wr_id, enum ib_wc_status status,
			enum ib_wc_opcode opcode, struct ib_wc *wc)
{
	if (!kt_wait(t, step, wr_id, wc))
		return false;
	if (wc->status != status)
		return kc_ok(t->r, false, step, "wr %llu status %d (%s) want %d (vendor 0x%x)",
			     wr_id, wc->status, ib_wc_status_msg(wc->status), status,
			     wc->vendor_err);
	/* (The opcode of an error completion is not defined.) */
	if (status == IB_WC_SUCCESS && wc->opcode != opcode)
		return kc_ok(t->r, false, step, "wr %llu opcode %d want %d", wr_id, wc->opcode,
			     opcode);
	return true;
}

static bool kt_post(struct kt *t, const char *step, struct ib_qp *qp, const struct ib_send_wr *wr)
{
	int err = ib_post_send(qp, wr, NULL);

	return !err || kc_ok(t->r, false, step, "post_send err %d", err);
}

static struct ib_qp *kt_qp(struct kt *t, const char *step)
{
	struct ib_qp_init_attr init = {
		.event_handler = kc_event,
		.send_cq = t->cq,
		.recv_cq = t->cq,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1,
			 .max_recv_sge = 1, .max_inline_data = 64 },
		.sq_sig_type = IB_SIGNAL_ALL_WR,
		.qp_type = IB_QPT_RC,
	};
	struct ib_qp *qp = ib_create_qp(t->pd, &init);

	if (IS_ERR(qp)) {
		kc_ok(t->r, false, step, "create_qp err %ld", PTR_ERR(qp));
		return NULL;
	}
	return qp;
}

/* @qp to RTS, connected to @remote (steps traffic.qp-@n.*). */
static bool kt_connect(struct kt *t, const char *n, struct ib_qp *qp, u32 remote, u32 port,
		       const struct ib_port_attr *pa)
{
	char prefix[32];

	snprintf(prefix, sizeof(prefix), "traffic.qp-%s", n);
	return kc_rc_connect(t->r, prefix, qp, remote, port, pa);
}

/* A page, DMA-mapped, and a fast-registration MR mapped over it (not yet valid). */
static bool kt_mr(struct kt *t, struct kt_side *s, const char *name)
{
	char step[48];
	int n;

	snprintf(step, sizeof(step), "traffic.mr.%s", name);
	s->buf = kzalloc(KT_BUF, GFP_KERNEL);
	if (!s->buf)
		return kc_ok(t->r, false, step, "no memory");
	sg_init_one(&s->sg, s->buf, KT_BUF);
	if (ib_dma_map_sg(t->dev, &s->sg, 1, DMA_BIDIRECTIONAL) != 1)
		return kc_ok(t->r, false, step, "dma_map_sg failed");
	s->mapped = true;
	s->mr = ib_alloc_mr(t->pd, IB_MR_TYPE_MEM_REG, 1);
	if (IS_ERR(s->mr)) {
		kc_ok(t->r, false, step, "alloc_mr err %ld", PTR_ERR(s->mr));
		s->mr = NULL;
		return false;
	}
	n = ib_map_mr_sg(s->mr, &s->sg, 1, NULL, PAGE_SIZE);
	return kc_ok(t->r, n == 1, step, "map_mr_sg mapped %d of 1", n);
}

/* IB_WR_REG_MR of @s's MR on its own QP, with a new variant byte of its key. */
static bool kt_reg(struct kt *t, struct kt_side *s)
{
	struct ib_reg_wr wr = {
		.wr = { .wr_id = KT_WR_REG, .opcode = IB_WR_REG_MR, .send_flags = IB_SEND_SIGNALED },
		.mr = s->mr,
		.access = KT_ACCESS,
	};
	struct ib_wc wc;

	ib_update_fast_reg_key(s->mr, ib_inc_rkey(s->mr->rkey));
	wr.key = s->mr->rkey;
	return kt_post(t, "traffic.reg-mr", s->qp, &wr.wr) &&
	       kt_complete(t, "traffic.reg-mr", KT_WR_REG, IB_WC_SUCCESS, IB_WC_REG_MR, &wc);
}

/* The bytes [@off, @off + @len) of @s's page equal @want; @step's result. */
static bool kt_bytes(struct kt *t, struct kt_side *s, const char *step, unsigned int off,
		     const u8 *want, unsigned int len)
{
	unsigned int i;

	kt_to_cpu(t, s);
	for (i = 0; i < len && s->buf[off + i] == want[i]; i++)
		;
	return kc_ok(t->r, i == len, step, "byte %u of %u at offset %u: 0x%02x want 0x%02x", i,
		     len, off, i < len ? s->buf[off + i] : 0, i < len ? want[i] : 0);
}

static void kt_fill(u8 *p, unsigned int len, u8 seed)
{
	unsigned int i;

	for (i = 0; i < len; i++)
		p[i] = seed + i * 7;
}

static bool kt_send(struct kt *t)
{
	struct ib_sge rsge = { .addr = t->b.mr->iova, .length = KT_BUF, .lkey = t->b.mr->lkey };
	struct ib_recv_wr rwr = { .wr_id = KT_WR_RECV, .sg_list = &rsge, .num_sge = 1 };
	struct ib_sge sge = { .addr = t->a.mr->iova, .length = KT_SEND_LEN, .lkey = t->a.mr->lkey };
	struct ib_send_wr wr = { .wr_id = KT_WR_SEND, .sg_list = &sge, .num_sge = 1,
				 .opcode = IB_WR_SEND, .send_flags = IB_SEND_SIGNALED };
	u8 want[KT_SEND_LEN + 1];
	struct ib_wc wc;
	int err;

	kt_fill(t->a.buf, KT_SEND_LEN, 0x31);
	memcpy(want, t->a.buf, KT_SEND_LEN);
	memset(t->b.buf, 0xee, KT_BUF);
	want[KT_SEND_LEN] = 0xee;
	kt_to_dev(t, &t->a);
	kt_to_dev(t, &t->b);
	err = ib_post_recv(t->b.qp, &rwr, NULL);
	if (err)
		return kc_ok(t->r, false, "traffic.send", "post_recv err %d", err);
	if (!kt_post(t, "traffic.send", t->a.qp, &wr) ||
	    !kt_complete(t, "traffic.send", KT_WR_SEND, IB_WC_SUCCESS, IB_WC_SEND, &wc) ||
	    !kt_complete(t, "traffic.send", KT_WR_RECV, IB_WC_SUCCESS, IB_WC_RECV, &wc))
		return false;
	/* (Not src_qp: the verbs define it for UD only.) */
	if (!kc_ok(t->r, wc.byte_len == KT_SEND_LEN && wc.qp->qp_num == t->b.qp->qp_num,
		   "traffic.send", "receive byte_len %u on qp %u, want %u on %u", wc.byte_len,
		   wc.qp->qp_num, KT_SEND_LEN, t->b.qp->qp_num))
		return false;
	/* The message and, after it, the receive buffer as it was. */
	return kt_bytes(t, &t->b, "traffic.send-bytes", 0, want, KT_SEND_LEN + 1);
}

static bool kt_rdma(struct kt *t, bool write)
{
	const char *step = write ? "traffic.write" : "traffic.read";
	const char *bstep = write ? "traffic.write-bytes" : "traffic.read-bytes";
	unsigned int off = write ? KT_WRITE_OFF : KT_READ_OFF;
	struct ib_sge sge = { .addr = t->a.mr->iova + off, .length = KT_RW_LEN,
			      .lkey = t->a.mr->lkey };
	struct ib_rdma_wr wr = {
		.wr = { .wr_id = write ? KT_WR_WRITE : KT_WR_READ, .sg_list = &sge, .num_sge = 1,
			.opcode = write ? IB_WR_RDMA_WRITE : IB_WR_RDMA_READ,
			.send_flags = IB_SEND_SIGNALED },
		.remote_addr = t->b.mr->iova + off,
		.rkey = t->b.mr->rkey,
	};
	struct kt_side *src = write ? &t->a : &t->b, *dst = write ? &t->b : &t->a;
	u8 want[KT_RW_LEN];
	struct ib_wc wc;

	kt_fill(src->buf + off, KT_RW_LEN, write ? 0x57 : 0x93);
	memcpy(want, src->buf + off, KT_RW_LEN);
	memset(dst->buf + off, 0xee, KT_RW_LEN);
	kt_to_dev(t, &t->a);
	kt_to_dev(t, &t->b);
	if (!kt_post(t, step, t->a.qp, &wr.wr) ||
	    !kt_complete(t, step, wr.wr.wr_id, IB_WC_SUCCESS,
			 write ? IB_WC_RDMA_WRITE : IB_WC_RDMA_READ, &wc) ||
	    !kc_ok(t->r, true, step, " "))
		return false;
	return kt_bytes(t, dst, bstep, off, want, KT_RW_LEN);
}

/*
 * A message that consumes a receive: B posts one over its page, A posts @wr, A's
 * request completes with @sopc and B's receive with @ropc, @len bytes and, with @imm,
 * IB_WC_WITH_IMM and that immediate (without, no immediate flag). @step's result.
 */
static bool kt_message(struct kt *t, const char *step, const struct ib_send_wr *wr,
		       enum ib_wc_opcode sopc, enum ib_wc_opcode ropc, unsigned int len,
		       const __be32 *imm)
{
	struct ib_sge rsge = { .addr = t->b.mr->iova, .length = KT_BUF, .lkey = t->b.mr->lkey };
	struct ib_recv_wr rwr = { .wr_id = KT_WR_RECV, .sg_list = &rsge, .num_sge = 1 };
	bool with_imm;
	struct ib_wc wc;
	int err;

	err = ib_post_recv(t->b.qp, &rwr, NULL);
	if (err)
		return kc_ok(t->r, false, step, "post_recv err %d", err);
	if (!kt_post(t, step, t->a.qp, wr) ||
	    !kt_complete(t, step, wr->wr_id, IB_WC_SUCCESS, sopc, &wc) ||
	    !kt_complete(t, step, KT_WR_RECV, IB_WC_SUCCESS, ropc, &wc))
		return false;
	with_imm = wc.wc_flags & IB_WC_WITH_IMM;
	return kc_ok(t->r, (imm ? with_imm && wc.ex.imm_data == *imm : !with_imm) &&
		     wc.byte_len == len, step,
		     "receive wc_flags 0x%x imm 0x%x byte_len %u, want %s 0x%x and %u",
		     wc.wc_flags, be32_to_cpu(wc.ex.imm_data), wc.byte_len,
		     imm ? "IB_WC_WITH_IMM, imm" : "no immediate", imm ? be32_to_cpu(*imm) : 0,
		     len);
}

/* SEND with an immediate, then the same message inline (steps send-imm, send-inline). */
static void kt_send_imm_inline(struct kt *t)
{
	struct ib_sge sge = { .addr = t->a.mr->iova, .length = KT_IMM_LEN, .lkey = t->a.mr->lkey };
	struct ib_send_wr wr = { .wr_id = KT_WR_SEND_IMM, .sg_list = &sge, .num_sge = 1,
				 .opcode = IB_WR_SEND_WITH_IMM, .send_flags = IB_SEND_SIGNALED,
				 .ex.imm_data = cpu_to_be32(KT_SEND_IMM) };
	u8 msg[KT_INLINE_LEN], want[KT_IMM_LEN + 1];
	__be32 imm = cpu_to_be32(KT_SEND_IMM);

	kt_fill(t->a.buf, KT_IMM_LEN, 0x3c);
	memcpy(want, t->a.buf, KT_IMM_LEN);
	want[KT_IMM_LEN] = 0xee;
	memset(t->b.buf, 0xee, KT_BUF);
	kt_to_dev(t, &t->a);
	kt_to_dev(t, &t->b);
	if (kt_message(t, "traffic.send-imm", &wr, IB_WC_SEND, IB_WC_RECV, KT_IMM_LEN, &imm))
		kt_bytes(t, &t->b, "traffic.send-imm-bytes", 0, want, KT_IMM_LEN + 1);

	/* Inline: the bytes are the CPU's, from a kernel virtual address (no key). */
	kt_fill(msg, KT_INLINE_LEN, 0x6d);
	memcpy(want, msg, KT_INLINE_LEN);
	want[KT_INLINE_LEN] = 0xee;
	memset(t->b.buf, 0xee, KT_BUF);
	kt_to_dev(t, &t->b);
	sge = (struct ib_sge){ .addr = (u64)(uintptr_t)msg, .length = KT_INLINE_LEN };
	wr = (struct ib_send_wr){ .wr_id = KT_WR_INLINE, .sg_list = &sge, .num_sge = 1,
				  .opcode = IB_WR_SEND,
				  .send_flags = IB_SEND_SIGNALED | IB_SEND_INLINE };
	if (kt_message(t, "traffic.send-inline", &wr, IB_WC_SEND, IB_WC_RECV, KT_INLINE_LEN,
		       NULL))
		kt_bytes(t, &t->b, "traffic.send-inline-bytes", 0, want, KT_INLINE_LEN + 1);
}

/* RDMA WRITE with an immediate (step write-imm). */
static void kt_write_imm(struct kt *t)
{
	struct ib_sge sge = { .addr = t->a.mr->iova + KT_WIMM_OFF, .length = KT_WIMM_LEN,
			      .lkey = t->a.mr->lkey };
	struct ib_rdma_wr wr = {
		.wr = { .wr_id = KT_WR_WRITE_IMM, .sg_list = &sge, .num_sge = 1,
			.opcode = IB_WR_RDMA_WRITE_WITH_IMM, .send_flags = IB_SEND_SIGNALED,
			.ex.imm_data = cpu_to_be32(KT_WRITE_IMM) },
		.remote_addr = t->b.mr->iova + KT_WIMM_OFF,
		.rkey = t->b.mr->rkey,
	};
	__be32 imm = cpu_to_be32(KT_WRITE_IMM);
	u8 want[KT_WIMM_LEN];

	kt_fill(t->a.buf + KT_WIMM_OFF, KT_WIMM_LEN, 0xc4);
	memcpy(want, t->a.buf + KT_WIMM_OFF, KT_WIMM_LEN);
	memset(t->b.buf + KT_WIMM_OFF, 0xee, KT_WIMM_LEN);
	kt_to_dev(t, &t->a);
	kt_to_dev(t, &t->b);
	if (kt_message(t, "traffic.write-imm", &wr.wr, IB_WC_RDMA_WRITE,
		       IB_WC_RECV_RDMA_WITH_IMM, KT_WIMM_LEN, &imm))
		kt_bytes(t, &t->b, "traffic.write-imm-bytes", KT_WIMM_OFF, want, KT_WIMM_LEN);
}

static void kt_atomic(struct kt *t, bool cmp_swap)
{
	const char *step = cmp_swap ? "traffic.cmp-swap" : "traffic.fetch-add";
	const char *bstep = cmp_swap ? "traffic.cmp-swap-bytes" : "traffic.fetch-add-bytes";
	const char *rstep = cmp_swap ? "traffic.cmp-swap-returned" : "traffic.fetch-add-returned";
	unsigned int off = cmp_swap ? KT_CS_OFF : KT_FA_OFF;
	u64 old = cmp_swap ? KT_CS_OLD : KT_FA_OLD;
	u64 now = cmp_swap ? KT_CS_NEW : KT_FA_OLD + KT_FA_ADD;
	struct ib_sge sge = { .addr = t->a.mr->iova + off, .length = 8, .lkey = t->a.mr->lkey };
	struct ib_atomic_wr wr = {
		.wr = { .wr_id = cmp_swap ? KT_WR_CS : KT_WR_FA, .sg_list = &sge, .num_sge = 1,
			.opcode = cmp_swap ? IB_WR_ATOMIC_CMP_AND_SWP : IB_WR_ATOMIC_FETCH_AND_ADD,
			.send_flags = IB_SEND_SIGNALED },
		.remote_addr = t->b.mr->iova + off,
		.compare_add = cmp_swap ? KT_CS_OLD : KT_FA_ADD,
		.swap = cmp_swap ? KT_CS_NEW : 0,
		.rkey = t->b.mr->rkey,
	};
	u64 untouched = 0xeeeeeeeeeeeeeeeeULL;
	struct ib_wc wc;
	int err;

	memcpy(t->b.buf + off, &old, 8);
	memcpy(t->a.buf + off, &untouched, 8);
	kt_to_dev(t, &t->a);
	kt_to_dev(t, &t->b);
	err = ib_post_send(t->a.qp, &wr.wr, NULL);
	if (err == -EOPNOTSUPP) {
		/*
		 * Upstream mlx5_ib refuses atomics from kernel consumers (wr.c: "Atomic
		 * operations are not supported yet"); user space has them (libmlx5,
		 * perftest's ib_atomic_bw, pyverbs' test_atomic). Refused, nothing may
		 * have reached the device: both words stay as they were.
		 */
		kc_line("# %u.%s refused: post_send err %d (EOPNOTSUPP), as upstream mlx5_ib's kernel verbs do",
			t->r->gen, step, err);
		kc_ok(t->r, true, step, " ");
		kt_bytes(t, &t->b, bstep, off, (const u8 *)&old, 8);
		kt_bytes(t, &t->a, rstep, off, (const u8 *)&untouched, 8);
		return;
	}
	if (err) {
		kc_ok(t->r, false, step, "post_send err %d", err);
		return;
	}
	if (!kt_complete(t, step, wr.wr.wr_id, IB_WC_SUCCESS,
			 cmp_swap ? IB_WC_COMP_SWAP : IB_WC_FETCH_ADD, &wc))
		return;
	kc_ok(t->r, true, step, " ");
	/* The responder's word changed, and its old value came back to the requester. */
	kt_bytes(t, &t->b, bstep, off, (const u8 *)&now, 8);
	kt_bytes(t, &t->a, rstep, off, (const u8 *)&old, 8);
}

/* B invalidates its MR; A's WRITE through the old rkey is refused, B's bytes stay. */
static void kt_invalidate(struct kt *t)
{
	struct ib_send_wr inv = { .wr_id = KT_WR_INV, .opcode = IB_WR_LOCAL_INV,
				  .send_flags = IB_SEND_SIGNALED,
				  .ex.invalidate_rkey = t->b.mr->rkey };
	struct ib_sge sge = { .addr = t->a.mr->iova, .length = KT_RW_LEN, .lkey = t->a.mr->lkey };
	struct ib_rdma_wr wr = {
		.wr = { .wr_id = KT_WR_STALE, .sg_list = &sge, .num_sge = 1,
			.opcode = IB_WR_RDMA_WRITE, .send_flags = IB_SEND_SIGNALED },
		.remote_addr = t->b.mr->iova,
		.rkey = t->b.mr->rkey,
	};
	u8 want[KT_RW_LEN];
	struct ib_wc wc;

	if (!kt_post(t, "traffic.local-inv", t->b.qp, &inv) ||
	    !kt_complete(t, "traffic.local-inv", KT_WR_INV, IB_WC_SUCCESS, IB_WC_LOCAL_INV, &wc) ||
	    !kc_ok(t->r, true, "traffic.local-inv", " "))
		return;
	kt_fill(t->a.buf, KT_RW_LEN, 0xa5);
	memset(t->b.buf, 0x5a, KT_RW_LEN);
	memset(want, 0x5a, KT_RW_LEN);
	kt_to_dev(t, &t->a);
	kt_to_dev(t, &t->b);
	/*
	 * An R_Key that names no valid region is a remote access violation: the
	 * responder NAKs it (Remote Access Error), the request completes with
	 * IB_WC_REM_ACCESS_ERR (mlx5: CQE syndrome REMOTE_ACCESS_ERR, cq.c).
	 */
	if (!kt_post(t, "traffic.write-after-inv", t->a.qp, &wr.wr) ||
	    !kt_complete(t, "traffic.write-after-inv", KT_WR_STALE, IB_WC_REM_ACCESS_ERR, 0, &wc) ||
	    !kc_ok(t->r, true, "traffic.write-after-inv", " "))
		return;
	kt_bytes(t, &t->b, "traffic.write-after-inv-bytes", 0, want, KT_RW_LEN);
}

static void kt_side_free(struct kt *t, struct kt_side *s, const char *name)
{
	char step[48];
	int err;

	if (s->qp) {
		snprintf(step, sizeof(step), "traffic.teardown.qp-%s", name);
		err = ib_destroy_qp(s->qp);
		kc_ok(t->r, !err, step, "err %d", err);
	}
	if (s->mr) {
		snprintf(step, sizeof(step), "traffic.teardown.mr-%s", name);
		err = ib_dereg_mr(s->mr);
		kc_ok(t->r, !err, step, "err %d", err);
	}
	if (s->mapped)
		ib_dma_unmap_sg(t->dev, &s->sg, 1, DMA_BIDIRECTIONAL);
	kfree(s->buf);
}

static void kt_run(struct kt *t, u32 port, const struct ib_port_attr *pa)
{
	struct kc_run *r = t->r;

	t->cq = ib_alloc_cq(t->dev, NULL, 64, 0, IB_POLL_DIRECT);
	if (!kc_ok(r, !IS_ERR(t->cq), "traffic.cq", "alloc_cq err %d", PTR_ERR_OR_ZERO(t->cq))) {
		t->cq = NULL;
		return;
	}
	t->a.qp = kt_qp(t, "traffic.qp-a");
	t->b.qp = t->a.qp ? kt_qp(t, "traffic.qp-b") : NULL;
	if (!t->b.qp)
		return;
	kc_line("# %u.traffic qp a %u b %u lid 0x%x", r->gen, t->a.qp->qp_num, t->b.qp->qp_num,
		pa->lid);
	if (!kt_connect(t, "a", t->a.qp, t->b.qp->qp_num, port, pa) ||
	    !kt_connect(t, "b", t->b.qp, t->a.qp->qp_num, port, pa))
		return;
	if (!kt_mr(t, &t->a, "a") || !kt_mr(t, &t->b, "b"))
		return;
	if (!kt_reg(t, &t->a) || !kt_reg(t, &t->b) || !kc_ok(r, true, "traffic.reg-mr", " "))
		return;
	kc_line("# %u.traffic mr a lkey 0x%x iova 0x%llx, b rkey 0x%x iova 0x%llx", r->gen,
		t->a.mr->lkey, t->a.mr->iova, t->b.mr->rkey, t->b.mr->iova);
	/* Each operation runs even if the one before failed: each has its own bytes. */
	kt_send(t);
	kt_rdma(t, true);
	kt_rdma(t, false);
	kt_send_imm_inline(t);
	kt_write_imm(t);
	if (t->dev->attrs.atomic_cap == IB_ATOMIC_NONE) {
		kc_ok(r, false, "traffic.cmp-swap", "device has no atomics (atomic_cap NONE)");
		kc_ok(r, false, "traffic.fetch-add", "device has no atomics (atomic_cap NONE)");
	} else {
		kt_atomic(t, true);
		kt_atomic(t, false);
	}
	/* Last: the failed WRITE moves A to the error state. */
	kt_invalidate(t);
}

void kc_traffic(struct kc_run *r, struct ib_device *dev, u32 port, const struct ib_port_attr *pa)
{
	struct kt t = { .r = r, .dev = dev };
	int err;

	if (!traffic)
		return;
	if (!kc_op(r, dev->ops.post_send, "traffic.ops", "post_send") ||
	    !kc_op(r, dev->ops.post_recv, "traffic.ops", "post_recv") ||
	    !kc_op(r, dev->ops.poll_cq, "traffic.ops", "poll_cq") ||
	    !kc_op(r, dev->ops.alloc_mr, "traffic.ops", "alloc_mr") ||
	    !kc_op(r, dev->ops.map_mr_sg, "traffic.ops", "map_mr_sg") ||
	    !kc_op(r, dev->ops.alloc_pd, "traffic.ops", "alloc_pd") ||
	    !kc_op(r, dev->ops.create_cq, "traffic.ops", "create_cq") ||
	    !kc_op(r, dev->ops.create_qp, "traffic.ops", "create_qp") ||
	    !kc_op(r, dev->ops.modify_qp, "traffic.ops", "modify_qp") ||
	    !kc_ok(r, true, "traffic.ops", " "))
		return;
	t.pd = ib_alloc_pd(dev, 0);
	if (!kc_ok(r, !IS_ERR(t.pd), "traffic.pd", "err %d", PTR_ERR_OR_ZERO(t.pd)))
		return;
	kt_run(&t, port, pa);
	kt_side_free(&t, &t.a, "a");
	kt_side_free(&t, &t.b, "b");
	if (t.cq)
		ib_free_cq(t.cq);
	/* (The core WARNs when a kernel caller frees a PD in use: left allocated then.) */
	if (!kc_ok(r, atomic_read(&t.pd->usecnt) == 0, "traffic.teardown.pd-unused",
		   "still used %d times, left allocated", atomic_read(&t.pd->usecnt)))
		return;
	err = ib_dealloc_pd_user(t.pd, NULL);
	kc_ok(r, !err, "traffic.teardown.pd", "err %d", err);
}
