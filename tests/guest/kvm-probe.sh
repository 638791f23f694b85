# Guest side of the KVM probe boot: reaching user space is the proof.
echo MLX5RS-KVM-PROBE-OK
