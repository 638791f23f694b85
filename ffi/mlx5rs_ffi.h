/* SPDX-License-Identifier: GPL-2.0 */
/*
 * C shim of mlx5-rs: prototypes of the small functions the Rust crate calls for
 * what the kernel crate does not wrap. Each is documented where it is defined.
 */
#ifndef MLX5RS_FFI_H
#define MLX5RS_FFI_H

struct pci_dev;

void mlx5rs_pci_disable(struct pci_dev *pdev);
void mlx5rs_pci_clear_master(struct pci_dev *pdev);

unsigned int mlx5rs_num_online_cpus(void);

int mlx5rs_nth_online_cpu(unsigned int n);
int mlx5rs_irq_set_cpu_hint(unsigned int irq, unsigned int cpu);
void mlx5rs_irq_clear_hint(unsigned int irq);

#endif /* MLX5RS_FFI_H */
