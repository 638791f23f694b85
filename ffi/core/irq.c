// SPDX-License-Identifier: GPL-2.0
/*
 * IRQ affinity hints, missing from the Rust irq abstraction: irq_set_affinity_and_hint(),
 * irq_update_affinity_hint() and cpumask_of() are static inlines or macros.
 *
 * The hint a driver publishes in /proc/irq/<n>/affinity_hint must be cleared before
 * free_irq() (which warns about a hint left set); the Rust side ties that order to its
 * types (ffi/core/irq.rs).
 */
#include <linux/cpumask.h>
#include <linux/errno.h>
#include <linux/interrupt.h>
#include "mlx5rs_ffi.h"

/**
 * mlx5rs_nth_online_cpu() - the n-th online CPU (counting from 0)
 * @n: index among the online CPUs
 *
 * Return: the CPU number, or -ENOENT when fewer CPUs are online.
 */
int mlx5rs_nth_online_cpu(unsigned int n)
{
	unsigned int cpu = cpumask_nth(n, cpu_online_mask);

	return cpu < nr_cpu_ids ? (int)cpu : -ENOENT;
}

/**
 * mlx5rs_irq_set_cpu_hint() - steer an IRQ to one CPU and publish that as its hint
 * @irq: Linux IRQ number with a handler registered by this driver
 * @cpu: the CPU
 *
 * The hint points at cpumask_of(@cpu), a constant mask that lives as long as the
 * kernel, so nothing has to be kept alive for it.
 *
 * Return: 0; -EINVAL if @cpu is not an online CPU or @irq has no descriptor.
 */
int mlx5rs_irq_set_cpu_hint(unsigned int irq, unsigned int cpu)
{
	if (cpu >= nr_cpu_ids || !cpu_online(cpu))
		return -EINVAL;
	return irq_set_affinity_and_hint(irq, cpumask_of(cpu));
}

/**
 * mlx5rs_irq_clear_hint() - remove the affinity hint of an IRQ
 * @irq: Linux IRQ number whose hint mlx5rs_irq_set_cpu_hint() set
 *
 * Leaves the affinity itself as it is. Must run before free_irq(@irq).
 */
void mlx5rs_irq_clear_hint(unsigned int irq)
{
	irq_update_affinity_hint(irq, NULL);
}
