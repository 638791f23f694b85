// SPDX-License-Identifier: GPL-2.0
/*
 * ib-async: the async events of a QP and an SRQ as user space gets them
 * (ibv_get_async_event), for scenario 81-ib-async-events, which builds it in the guest
 * with gcc and makes the emulated device raise the events.
 *
 *   ib-async IBDEV events N
 *     creates a PD, a CQ, an RC QP and an SRQ, prints
 *       READY qpn=<QP number> qp=<address> srq=<address>
 *     then reads N async events, printing for each (and acknowledging it)
 *       EVENT <i> type=<enum ibv_event_type> on=qp|srq|other
 *     (on: whether the event's element is the QP or the SRQ created above), then
 *     destroys everything and prints DONE.
 *   ib-async IBDEV churn CYCLES
 *     CYCLES times: create an RC QP, print "QPN <n> <cycle>", read a line from stdin
 *     (the scenario has the device raise a burst of events on the QP, then writes
 *     one), destroy the QP at once: the destroy meets events in flight. Events are
 *     not read: the kernel drops those of a destroyed QP. Prints DONE.
 * Exit status 0 only if every verb succeeded; an alarm ends a run that waits 120 s
 * for one event or one cycle (re-armed for each).
 *
 * The toolbox has libibverbs.so.1 but not its headers, so the declarations used are
 * written out as <infiniband/verbs.h> of rdma-core 56.1 lays them out (as ib-storm.c).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct ibv_device;
struct ibv_context;
struct ibv_pd;
struct ibv_cq;
struct ibv_srq;
struct ibv_comp_channel;

/* The head of struct ibv_qp (verbs.h): what is read here. */
struct ibv_qp {
	struct ibv_context *context;
	void *qp_context;
	struct ibv_pd *pd;
	struct ibv_cq *send_cq;
	struct ibv_cq *recv_cq;
	struct ibv_srq *srq;
	uint32_t handle;
	uint32_t qp_num;
};

struct ibv_qp_cap {
	uint32_t max_send_wr;
	uint32_t max_recv_wr;
	uint32_t max_send_sge;
	uint32_t max_recv_sge;
	uint32_t max_inline_data;
};

struct ibv_qp_init_attr {
	void *qp_context;
	struct ibv_cq *send_cq;
	struct ibv_cq *recv_cq;
	struct ibv_srq *srq;
	struct ibv_qp_cap cap;
	int qp_type; /* enum ibv_qp_type */
	int sq_sig_all;
};

struct ibv_srq_attr {
	uint32_t max_wr;
	uint32_t max_sge;
	uint32_t srq_limit;
};

struct ibv_srq_init_attr {
	void *srq_context;
	struct ibv_srq_attr attr;
};

struct ibv_async_event {
	union {
		struct ibv_cq *cq;
		struct ibv_qp *qp;
		struct ibv_srq *srq;
		void *wq;
		int port_num;
	} element;
	int event_type; /* enum ibv_event_type */
};

enum { IBV_QPT_RC = 2 };

struct ibv_device **ibv_get_device_list(int *num_devices);
void ibv_free_device_list(struct ibv_device **list);
const char *ibv_get_device_name(struct ibv_device *device);
struct ibv_context *ibv_open_device(struct ibv_device *device);
int ibv_close_device(struct ibv_context *context);
struct ibv_pd *ibv_alloc_pd(struct ibv_context *context);
int ibv_dealloc_pd(struct ibv_pd *pd);
struct ibv_cq *ibv_create_cq(struct ibv_context *context, int cqe, void *cq_context,
			     struct ibv_comp_channel *channel, int comp_vector);
int ibv_destroy_cq(struct ibv_cq *cq);
struct ibv_qp *ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr);
int ibv_destroy_qp(struct ibv_qp *qp);
struct ibv_srq *ibv_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *attr);
int ibv_destroy_srq(struct ibv_srq *srq);
int ibv_get_async_event(struct ibv_context *context, struct ibv_async_event *event);
void ibv_ack_async_event(struct ibv_async_event *event);

static int die(const char *what)
{
	fprintf(stderr, "ib-async: %s: %s\n", what, strerror(errno ? errno : EIO));
	exit(1);
}

static struct ibv_qp *rc_qp(struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr a = {
		.send_cq = cq,
		.recv_cq = cq,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1,
			 .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};

	return ibv_create_qp(pd, &a);
}

int main(int argc, char **argv)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	int i, n;

	if (argc != 4) {
		fprintf(stderr, "usage: ib-async IBDEV events N | churn CYCLES\n");
		return 2;
	}
	n = atoi(argv[3]);
	setvbuf(stdout, NULL, _IOLBF, 0);
	alarm(120);
	list = ibv_get_device_list(NULL);
	for (i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), argv[1]))
			ctx = ibv_open_device(list[i]);
	if (!ctx)
		die("open device");
	pd = ibv_alloc_pd(ctx);
	if (!pd)
		die("alloc pd");
	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	if (!cq)
		die("create cq");

	if (!strcmp(argv[2], "events")) {
		struct ibv_srq_init_attr sa = { .attr = { .max_wr = 16, .max_sge = 1 } };
		struct ibv_srq *srq;
		struct ibv_qp *qp;

		qp = rc_qp(pd, cq);
		if (!qp)
			die("create qp");
		srq = ibv_create_srq(pd, &sa);
		if (!srq)
			die("create srq");
		printf("READY qpn=%u qp=%p srq=%p\n", qp->qp_num, (void *)qp, (void *)srq);
		for (i = 0; i < n; i++) {
			struct ibv_async_event ev;
			const char *on = "other";

			alarm(120);
			if (ibv_get_async_event(ctx, &ev))
				die("get async event");
			if (ev.element.qp == qp)
				on = "qp";
			else if (ev.element.srq == srq)
				on = "srq";
			printf("EVENT %d type=%d on=%s\n", i, ev.event_type, on);
			ibv_ack_async_event(&ev);
		}
		if (ibv_destroy_srq(srq))
			die("destroy srq");
		if (ibv_destroy_qp(qp))
			die("destroy qp");
	} else if (!strcmp(argv[2], "churn")) {
		for (i = 0; i < n; i++) {
			struct ibv_qp *qp = rc_qp(pd, cq);

			if (!qp)
				die("create qp");
			char line[16];

			alarm(120);
			printf("QPN %u %d\n", qp->qp_num, i + 1);
			if (!fgets(line, sizeof(line), stdin))
				usleep(20000);
			if (ibv_destroy_qp(qp))
				die("destroy qp");
		}
	} else {
		fprintf(stderr, "ib-async: unknown mode %s\n", argv[2]);
		return 2;
	}
	if (ibv_destroy_cq(cq) || ibv_dealloc_pd(pd) || ibv_close_device(ctx))
		die("tear down");
	ibv_free_device_list(list);
	printf("DONE\n");
	return 0;
}
