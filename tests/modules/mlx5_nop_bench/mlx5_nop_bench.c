// SPDX-License-Identifier: GPL-2.0
/*
 * mlx5_nop_bench - NOP storms through upstream mlx5_core, timed like mlx5_rs's own.
 *
 * Test module for `make bench` (tests/bench/guest-bench.sh) and `make check`
 * (tests/scenarios/90-upstream-oracle.sh); not part of the mlx5_rs driver. It is C
 * because it calls upstream's exported command function, mlx5_cmd_exec(), on the
 * struct mlx5_core_dev that upstream's probe stores as the PCI driver data of the
 * function, so that the NOP rows of the benchmark time the same span for both
 * drivers: each NOP from call to return, as mlx5_rs's debugfs nop_storm does
 * (cmd/storm.rs, cmd/latency.rs): N NOPs spread over C callers, each caller a work
 * item on the default unbound workqueue; throughput is completed NOPs over the
 * storm's elapsed time; p50/p99 by nearest rank, mean rounded down.
 *
 * debugfs mlx5_nop_bench/nop_storm: write "<nops> <callers>" to run a storm on the
 * first Mellanox PCI function bound to mlx5_core; read the last result:
 *   nops N callers C errors E elapsed_ns T ops_per_sec R p50_ns A p99_ns B max_ns M mean_ns X
 * (N counts completed NOPs), "idle" before the first storm, "error <errno>" after a
 * rejected one. The function's device lock is held for the whole storm, so upstream
 * cannot be unbound (and its mlx5_core_dev freed) under the callers.
 */
#include <linux/debugfs.h>
#include <linux/device.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/mlx5/driver.h>
#include <linux/mlx5/mlx5_ifc.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/pci.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/workqueue.h>

#define MAX_CALLERS 256		/* the same limits as mlx5_rs's storm */
#define MAX_NOPS 10000000

struct storm {
	struct mlx5_core_dev *mdev;
	u64 *lat;		/* one slice per caller */
	atomic_t running;
	struct completion done;
};

struct caller {
	struct work_struct work;
	struct storm *s;
	u32 first, count;	/* its slice of s->lat */
	u32 ok;			/* samples written at lat[first..first + ok] */
	u64 errors;
};

struct result {
	bool ran;		/* false: no storm yet */
	int err;		/* -errno of a rejected storm, 0 otherwise */
	u32 callers;
	u64 nops, errors, elapsed_ns, p50, p99, max, mean;
};

static DEFINE_MUTEX(bench_lock);	/* one storm at a time; guards last */
static struct result last;
static struct dentry *dir;

static void caller_run(struct work_struct *w)
{
	struct caller *c = container_of(w, struct caller, work);
	u32 in[MLX5_ST_SZ_DW(nop_in)] = {};
	u32 out[MLX5_ST_SZ_DW(nop_out)];
	u32 done;

	MLX5_SET(nop_in, in, opcode, MLX5_CMD_OP_NOP);
	for (done = 0; done < c->count; done++) {
		u64 t0 = ktime_get_ns();
		int err = mlx5_cmd_exec_inout(c->s->mdev, nop, in, out);
		u64 ns = ktime_get_ns() - t0;

		if (err == -ENXIO) {
			/* The device is dead: the rest would fail the same way at once. */
			c->errors += c->count - done;
			break;
		}
		if (err)
			c->errors++;
		else
			c->s->lat[c->first + c->ok++] = ns;
	}
	if (atomic_dec_and_test(&c->s->running))
		complete(&c->s->done);
}

static int cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

/* Nearest rank: the ceil(p/100 * n)-th smallest, at least the first; n > 0. */
static u64 percentile(const u64 *sorted, u64 n, u32 p)
{
	u64 rank = max_t(u64, div64_u64(p * n + 99, 100), 1);

	return sorted[rank - 1];
}

static int storm(struct mlx5_core_dev *mdev, u32 nops, u32 callers, struct result *r)
{
	struct storm s = { .mdev = mdev };
	struct caller *cs;
	u64 n = 0, sum = 0, t0;
	u32 i, first = 0;

	s.lat = kvmalloc_array(nops, sizeof(*s.lat), GFP_KERNEL);
	cs = kcalloc(callers, sizeof(*cs), GFP_KERNEL);
	if (!s.lat || !cs) {
		kvfree(s.lat);
		kfree(cs);
		return -ENOMEM;
	}
	atomic_set(&s.running, callers);
	init_completion(&s.done);
	for (i = 0; i < callers; i++) {
		cs[i].s = &s;
		cs[i].first = first;
		cs[i].count = nops / callers + (i < nops % callers);
		first += cs[i].count;
		INIT_WORK(&cs[i].work, caller_run);
	}
	t0 = ktime_get_ns();
	for (i = 0; i < callers; i++)
		queue_work(system_dfl_wq, &cs[i].work);
	wait_for_completion(&s.done);
	r->elapsed_ns = ktime_get_ns() - t0;

	r->callers = callers;
	r->errors = 0;
	for (i = 0; i < callers; i++) {
		/* Gather the slices' samples at the front (n <= first of slice i). */
		memmove(&s.lat[n], &s.lat[cs[i].first], cs[i].ok * sizeof(*s.lat));
		n += cs[i].ok;
		r->errors += cs[i].errors;
	}
	sort(s.lat, n, sizeof(*s.lat), cmp_u64, NULL);
	for (i = 0; i < n; i++)
		sum = check_add_overflow(sum, s.lat[i], &sum) ? U64_MAX : sum;
	r->nops = n;
	r->p50 = n ? percentile(s.lat, n, 50) : 0;
	r->p99 = n ? percentile(s.lat, n, 99) : 0;
	r->max = n ? s.lat[n - 1] : 0;
	r->mean = n ? div64_u64(sum, n) : 0;
	kvfree(s.lat);
	kfree(cs);
	return 0;
}

/*
 * Runs the storm on the first Mellanox function bound to mlx5_core, under its device
 * lock (no unbind meanwhile) and with a reference on mlx5_core's module.
 */
static int storm_on_upstream(u32 nops, u32 callers, struct result *r)
{
	struct pci_dev *pdev = NULL;
	int err = -ENODEV;

	while ((pdev = pci_get_device(PCI_VENDOR_ID_MELLANOX, PCI_ANY_ID, pdev))) {
		struct device_driver *drv;

		device_lock(&pdev->dev);
		drv = pdev->dev.driver;
		if (drv && !strcmp(drv->name, "mlx5_core") && try_module_get(drv->owner)) {
			err = storm(pci_get_drvdata(pdev), nops, callers, r);
			module_put(drv->owner);
			device_unlock(&pdev->dev);
			pci_dev_put(pdev);
			break;
		}
		device_unlock(&pdev->dev);
	}
	return err;
}

static ssize_t storm_write(struct file *f, const char __user *ubuf, size_t len, loff_t *off)
{
	struct result r = {};
	char buf[64];
	u32 nops, callers;
	int err;

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = 0;
	if (sscanf(buf, "%u %u", &nops, &callers) != 2 || !nops || nops > MAX_NOPS ||
	    !callers || callers > MAX_CALLERS)
		err = -EINVAL;
	else
		err = storm_on_upstream(nops, callers, &r);

	mutex_lock(&bench_lock);
	r.ran = true;
	r.err = err;
	last = r;
	mutex_unlock(&bench_lock);
	return err ? err : len;
}

static ssize_t storm_read(struct file *f, char __user *ubuf, size_t len, loff_t *off)
{
	char buf[256];
	u64 ops;
	int n;

	mutex_lock(&bench_lock);
	ops = last.elapsed_ns ? div64_u64(last.nops * NSEC_PER_SEC, last.elapsed_ns) : 0;
	if (!last.ran)
		n = scnprintf(buf, sizeof(buf), "idle\n");
	else if (last.err)
		n = scnprintf(buf, sizeof(buf), "error %d\n", last.err);
	else
		n = scnprintf(buf, sizeof(buf),
			      "nops %llu callers %u errors %llu elapsed_ns %llu ops_per_sec %llu p50_ns %llu p99_ns %llu max_ns %llu mean_ns %llu\n",
			      last.nops, last.callers, last.errors, last.elapsed_ns, ops,
			      last.p50, last.p99, last.max, last.mean);
	mutex_unlock(&bench_lock);
	return simple_read_from_buffer(ubuf, len, off, buf, n);
}

static const struct file_operations storm_fops = {
	.owner = THIS_MODULE,
	.read = storm_read,
	.write = storm_write,
	.llseek = default_llseek,
};

static int __init nop_bench_init(void)
{
	dir = debugfs_create_dir("mlx5_nop_bench", NULL);
	debugfs_create_file("nop_storm", 0600, dir, NULL, &storm_fops);
	return 0;
}

static void __exit nop_bench_exit(void)
{
	debugfs_remove_recursive(dir);
}

module_init(nop_bench_init);
module_exit(nop_bench_exit);
MODULE_DESCRIPTION("NOP storms through upstream mlx5_core's mlx5_cmd_exec (test module)");
MODULE_LICENSE("GPL");
