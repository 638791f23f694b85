// SPDX-License-Identifier: GPL-2.0
/*
 * Scheduler facts the Rust kernel crate does not expose.
 */
#include <linux/cpumask.h>
#include "mlx5rs_ffi.h"

/**
 * mlx5rs_num_online_cpus() - number of online CPUs
 *
 * num_online_cpus() is a static inline; the EQ code sizes its completion vectors
 * with it (one completion EQ per online CPU).
 */
unsigned int mlx5rs_num_online_cpus(void)
{
	return num_online_cpus();
}
