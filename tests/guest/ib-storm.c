// SPDX-License-Identifier: GPL-2.0
/*
 * ib-storm: create-destroy cycles of verbs objects from user space, as fast as
 * libibverbs goes (scenario 74-ib-storm builds it in the guest with gcc).
 *
 *   ib-storm IBDEV CYCLES WORKERS [OBJECTS]
 *
 * OBJECTS is a comma-separated subset of pd,mr,cq,qp (default all). One cycle: alloc a
 * PD, register a 4 KiB buffer on it, create a CQ and an RC QP on both, then destroy
 * them in reverse order. WORKERS processes (each with its own device context) share
 * the cycles. Before the storm, one probe cycle finds which objects the driver has:
 * an object whose create fails there is left out of every cycle and reported as
 *   STORM-NA <object> <errno text>
 * (a PD that fails leaves nothing to storm: exit 1). Then the figures:
 *   STORM objects=pd,mr,... cycles=N workers=W secs=S per_cycle_us=U errors=E
 * and per worker the time each object took, create + destroy, per cycle:
 *   STORM-WORKER i cycles=N pd_us=U mr_us=U cq_us=U qp_us=U
 * While it runs, worker 0 prints a progress line a minute:
 *   STORM-PROGRESS worker 0: N of M cycles, S s
 * Exit status 0 only if every cycle of every worker succeeded.
 *
 * The verbs declarations and the device/QP set-up are shared with ib-async.c
 * (ib-verbs.h).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ib-verbs.h"

enum { O_PD = 1, O_MR = 2, O_CQ = 4, O_QP = 8 };
static const char *const names[] = { "pd", "mr", "cq", "qp" };

static char buf[4096] __attribute__((aligned(4096)));

/* Nanoseconds spent creating and destroying each object, this process. */
static double spent[4];

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* One cycle with the objects in `want`; 0, or the errno of the first failure with
 * *failed set to the object that failed. */
static int cycle(struct ibv_context *ctx, int want, int *failed)
{
	struct ibv_pd *pd;
	struct ibv_mr *mr = NULL;
	struct ibv_cq *cq = NULL;
	struct ibv_qp *qp = NULL;
	int err = 0;
	double t = now(), u;

	pd = ibv_alloc_pd(ctx);
	u = now();
	spent[0] += u - t;
	t = u;
	if (!pd) {
		*failed = O_PD;
		return errno ? errno : EIO;
	}
	if (want & O_MR) {
		mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
		u = now();
		spent[1] += u - t;
		t = u;
		if (!mr) {
			*failed = O_MR;
			err = errno ? errno : EIO;
			goto out;
		}
	}
	if (want & (O_CQ | O_QP)) {
		cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
		u = now();
		spent[2] += u - t;
		t = u;
		if (!cq) {
			*failed = O_CQ;
			err = errno ? errno : EIO;
			goto out;
		}
	}
	if (want & O_QP) {
		qp = rc_qp(pd, cq);
		u = now();
		spent[3] += u - t;
		t = u;
		if (!qp) {
			*failed = O_QP;
			err = errno ? errno : EIO;
			goto out;
		}
	}
out:
	t = now();
	if (qp && ibv_destroy_qp(qp) && !err) {
		*failed = O_QP;
		err = errno ? errno : EIO;
	}
	u = now();
	spent[3] += u - t;
	t = u;
	if (cq && ibv_destroy_cq(cq) && !err) {
		*failed = O_CQ;
		err = errno ? errno : EIO;
	}
	u = now();
	spent[2] += u - t;
	t = u;
	if (mr && ibv_dereg_mr(mr) && !err) {
		*failed = O_MR;
		err = errno ? errno : EIO;
	}
	u = now();
	spent[1] += u - t;
	t = u;
	if (ibv_dealloc_pd(pd) && !err) {
		*failed = O_PD;
		err = errno ? errno : EIO;
	}
	spent[0] += now() - t;
	return err;
}

/* A worker: `cycles` cycles on its own context; exit status = failed cycles (max 254,
 * 255 when the device does not open). */
static int worker(int id, const char *dev, long cycles, int want)
{
	struct ibv_context *ctx = open_dev(dev);
	long i, errors = 0;
	int failed;

	memset(spent, 0, sizeof(spent)); /* the probe's, inherited */
	if (!ctx) {
		fprintf(stderr, "ib-storm: cannot open %s: %s\n", dev, strerror(errno));
		return 255;
	}
	double start = now(), shown = start;

	for (i = 0; i < cycles; i++) {
		int err = cycle(ctx, want, &failed);

		if (id == 0 && now() - shown >= 60) {
			shown = now();
			printf("STORM-PROGRESS worker 0: %ld of %ld cycles, %.0f s\n", i + 1, cycles,
			       shown - start);
			fflush(stdout);
		}

		if (err && errors++ < 5)
			fprintf(stderr, "ib-storm: cycle %ld: %s: %s\n", i, names[__builtin_ctz(failed)],
				strerror(err));
	}
	ibv_close_device(ctx);
	printf("STORM-WORKER %d cycles=%ld", id, i); /* the cycles it ran, not asked for */
	for (i = 0; i < 4; i++)
		if (want & (1 << i))
			printf(" %s_us=%.1f", names[i], spent[i] * 1e6 / (cycles ? cycles : 1));
	printf("\n");
	fflush(stdout);
	return errors > 254 ? 254 : (int)errors;
}

int main(int argc, char **argv)
{
	struct ibv_context *ctx;
	long cycles, per, left;
	int workers, want = O_PD | O_MR | O_CQ | O_QP, i, errors = 0, failed;
	double t0, t1;

	if (argc < 4 || argc > 5) {
		fprintf(stderr, "usage: ib-storm IBDEV CYCLES WORKERS [pd,mr,cq,qp]\n");
		return 2;
	}
	cycles = strtol(argv[2], NULL, 10);
	workers = atoi(argv[3]);
	if (cycles < 1 || workers < 1 || workers > 64) {
		fprintf(stderr, "ib-storm: CYCLES >= 1, 1 <= WORKERS <= 64\n");
		return 2;
	}
	if (argc == 5) {
		want = O_PD;
		for (i = 0; i < 4; i++)
			if (strstr(argv[4], names[i]))
				want |= 1 << i;
	}
	/* Probe: drop, one by one, the objects the driver refuses. */
	ctx = open_dev(argv[1]);
	if (!ctx) {
		fprintf(stderr, "ib-storm: cannot open %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	for (;;) {
		int err = cycle(ctx, want, &failed);

		if (!err)
			break;
		printf("STORM-NA %s %s\n", names[__builtin_ctz(failed)], strerror(err));
		if (failed == O_PD) {
			ibv_close_device(ctx);
			return 1;
		}
		/* A QP needs a CQ: without CQs, no QPs either. */
		want &= ~(failed == O_CQ ? (O_CQ | O_QP) : failed);
	}
	ibv_close_device(ctx);
	fflush(stdout);

	t0 = now();
	per = cycles / workers;
	left = cycles - per * workers;
	for (i = 0; i < workers; i++) {
		pid_t p = fork();

		if (p == 0)
			_exit(worker(i, argv[1], per + (i < left), want));
		if (p < 0) {
			perror("ib-storm: fork");
			errors++;
		}
	}
	for (;;) {
		int st;

		if (wait(&st) < 0)
			break;
		errors += WIFEXITED(st) ? WEXITSTATUS(st) : 255;
	}
	t1 = now();
	printf("STORM objects=");
	for (i = 0, failed = 0; i < 4; i++)
		if (want & (1 << i))
			printf("%s%s", failed++ ? "," : "", names[i]);
	printf(" cycles=%ld workers=%d secs=%.1f per_cycle_us=%.1f errors=%d\n", cycles, workers,
	       t1 - t0, (t1 - t0) * 1e6 / cycles, errors);
	return errors ? 1 : 0;
}
