//! `mlx5-emu`: the emulated ConnectX served over vfio-user.
fn main() {}
