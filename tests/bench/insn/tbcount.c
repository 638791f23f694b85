// SPDX-License-Identifier: GPL-2.0
/*
 * tbcount: a QEMU TCG plugin that counts the guest kernel's executed instructions per
 * translation block, for tests/bench/insn-profile.sh. Under TCG a guest instruction
 * costs about the same whatever it does, so instructions per work request are the
 * driver's cost without the host's noise (which moves timed figures ±10 % between
 * boots).
 *
 * Each translated block at a kernel address (≥ 0xffff800000000000), and with `user=1`
 * at any address (user space: the processes' blocks, not told apart), gets a counter of
 * its executions (a callback on its first instruction); a block that leaves early
 * (an exception) is counted whole. Whenever the block at address `trigger=HEX` runs
 * (the guest's `sync` command: ksys_sync, from System.map, the kernel booted with
 * nokaslr), every counter is written to `out=PATH.N` (N = 0, 1, ...) as lines
 * "vaddr(hex) instructions executions"; once more at exit. The difference of two
 * snapshots is what the guest ran between two `sync`s.
 *
 * QEMU's plugin header is not packaged: the few entry points used are declared here
 * as the toolbox's QEMU (11.1, plugin API version 7) exports them; there the
 * translation callback receives the block and a user pointer, not the plugin id.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct qemu_plugin_tb;
struct qemu_plugin_insn;

typedef struct {
	const char *target_name;
	struct {
		int min;
		int cur;
	} version;
	bool system_emulation;
} qemu_info_t;

typedef void (*tb_trans_cb_t)(struct qemu_plugin_tb *tb, void *udata);
typedef void (*vcpu_udata_cb_t)(unsigned int vcpu, void *udata);
typedef void (*udata_cb_t)(uint64_t id, void *udata);

void qemu_plugin_register_vcpu_tb_trans_cb(uint64_t id, tb_trans_cb_t cb);
void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn *insn,
					    vcpu_udata_cb_t cb, int flags, void *udata);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb, size_t i);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);
void qemu_plugin_register_atexit_cb(uint64_t id, udata_cb_t cb, void *udata);

__attribute__((visibility("default"))) int qemu_plugin_version = 7;

#define KERNEL_START 0xffff800000000000ull

/* One translated block: where, how many instructions, how often it ran. */
struct block {
	uint64_t vaddr;
	uint64_t insns;
	uint64_t runs;
};

static struct block **blocks;
static size_t nblocks, cap;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t trigger;
static bool user;
static const char *out = "/tmp/tbcount";
static int snapshots;

static void snapshot(void)
{
	char path[4096];
	FILE *f;
	size_t i;

	pthread_mutex_lock(&lock);
	snprintf(path, sizeof(path), "%s.%d", out, snapshots++);
	f = fopen(path, "w");
	if (f) {
		for (i = 0; i < nblocks; i++)
			if (blocks[i]->runs)
				fprintf(f, "%llx %llu %llu\n",
					(unsigned long long)blocks[i]->vaddr,
					(unsigned long long)blocks[i]->insns,
					(unsigned long long)__atomic_load_n(&blocks[i]->runs,
									    __ATOMIC_RELAXED));
		fclose(f);
	} else {
		fprintf(stderr, "tbcount: cannot write %s\n", path);
	}
	pthread_mutex_unlock(&lock);
}

static void block_ran(unsigned int vcpu, void *udata)
{
	struct block *b = udata;

	(void)vcpu;
	__atomic_fetch_add(&b->runs, 1, __ATOMIC_RELAXED);
	if (b->vaddr == trigger)
		snapshot();
}

static void translated(struct qemu_plugin_tb *tb, void *udata)
{
	uint64_t vaddr = qemu_plugin_tb_vaddr(tb);
	struct block *b;

	(void)udata;
	if ((vaddr < KERNEL_START && !user) || !qemu_plugin_tb_n_insns(tb))
		return;
	b = calloc(1, sizeof(*b));
	if (!b)
		return;
	b->vaddr = vaddr;
	b->insns = qemu_plugin_tb_n_insns(tb);
	pthread_mutex_lock(&lock);
	if (nblocks == cap) {
		size_t ncap = cap ? cap * 2 : 65536;
		struct block **n = realloc(blocks, ncap * sizeof(*n));

		if (!n) {
			pthread_mutex_unlock(&lock);
			free(b);
			return;
		}
		blocks = n;
		cap = ncap;
	}
	blocks[nblocks++] = b;
	pthread_mutex_unlock(&lock);
	qemu_plugin_register_vcpu_insn_exec_cb(qemu_plugin_tb_get_insn(tb, 0), block_ran, 0, b);
}

static void at_exit(uint64_t id, void *udata)
{
	(void)id;
	(void)udata;
	snapshot();
}

__attribute__((visibility("default"))) int qemu_plugin_install(uint64_t id,
							       const qemu_info_t *info,
							       int argc, char **argv)
{
	int i;

	for (i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "trigger=", 8))
			trigger = strtoull(argv[i] + 8, NULL, 16);
		else if (!strcmp(argv[i], "user=1"))
			user = true;
		else if (!strncmp(argv[i], "out=", 4))
			out = argv[i] + 4;
	}
	if (info->version.min > qemu_plugin_version || info->version.cur < qemu_plugin_version) {
		fprintf(stderr, "tbcount: QEMU's plugin API is %d..%d, this plugin's %d\n",
			info->version.min, info->version.cur, qemu_plugin_version);
		return 1;
	}
	if (!trigger) {
		fprintf(stderr, "tbcount: no trigger=ADDRESS\n");
		return 1;
	}
	qemu_plugin_register_vcpu_tb_trans_cb(id, translated);
	qemu_plugin_register_atexit_cb(id, at_exit, NULL);
	return 0;
}
