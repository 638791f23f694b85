/* Time BAR0 accesses of the emulated ConnectX from the guest: N 32-bit writes, N
 * 64-bit writes and N 32-bit reads at one offset of BAR0 (mmap of the function's
 * sysfs resource0), then N 32-bit reads of the init segment's first dword.
 *
 *   bar-timing /sys/bus/pci/devices/<bdf>/resource0 OFFSET N
 *
 * Prints one line per kind: "<kind> n=<N> total_us=<T> per_access_ns=<T/N>".
 * The offset must lie past the init segment (a UAR page) so the writes ring nothing
 * the device acts on (tests/guest/doorbell-cost.sh picks the BlueFlame body). */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void report(const char *kind, long n, uint64_t ns)
{
	printf("%s n=%ld total_us=%llu per_access_ns=%llu\n", kind, n,
	       (unsigned long long)(ns / 1000), (unsigned long long)(ns / (uint64_t)n));
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: %s RESOURCE0 OFFSET N\n", argv[0]);
		return 2;
	}
	long off = strtol(argv[2], NULL, 0), n = strtol(argv[3], NULL, 0);
	int fd = open(argv[1], O_RDWR | O_SYNC);
	if (fd < 0 || n <= 0 || off < 0 || off % 8) {
		perror("open");
		return 1;
	}
	size_t len = (size_t)off + 4096;
	volatile uint8_t *bar = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (bar == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	volatile uint32_t *w32 = (volatile uint32_t *)(bar + off);
	volatile uint64_t *w64 = (volatile uint64_t *)(bar + off);
	volatile uint32_t *init0 = (volatile uint32_t *)bar;
	uint64_t t;
	uint32_t sink = 0;

	t = now_ns();
	for (long i = 0; i < n; i++)
		*w32 = (uint32_t)i;
	report("write32", n, now_ns() - t);
	t = now_ns();
	for (long i = 0; i < n; i++)
		*w64 = (uint64_t)i;
	report("write64", n, now_ns() - t);
	t = now_ns();
	for (long i = 0; i < n; i++)
		sink += *w32;
	report("read32_uar", n, now_ns() - t);
	t = now_ns();
	for (long i = 0; i < n; i++)
		sink += *init0;
	report("read32_init", n, now_ns() - t);
	/* A write followed by a read: the read must wait for the posted write to reach
	 * the device (vfio-user handles messages in order). */
	t = now_ns();
	for (long i = 0; i < n; i++) {
		*w64 = (uint64_t)i;
		sink += *w32;
	}
	report("write64+read32", n, now_ns() - t);
	printf("sink=%u\n", sink);
	return 0;
}
