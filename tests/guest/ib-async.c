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
 * The verbs declarations and the device/QP set-up are shared with ib-storm.c
 * (ib-verbs.h).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ib-verbs.h"

static int die(const char *what)
{
	fprintf(stderr, "ib-async: %s: %s\n", what, strerror(errno ? errno : EIO));
	exit(1);
}

int main(int argc, char **argv)
{
	struct ibv_context *ctx;
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
	ctx = open_dev(argv[1]);
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
	printf("DONE\n");
	return 0;
}
