//! End to end over a real vfio-user socket with the crate's client: config space,
//! BAR0, DMA through a shared memfd, an MSI-X eventfd, and a clean exit when the
//! client disconnects.

use mlx5_emu::config::EmuConfig;
use mlx5_emu::device::Device;
use mlx5_emu::dma_map::MappedMemory;
use mlx5_emu::ifc::cmd_layout::{self as cl, entry_off};
use mlx5_emu::irq::EventFdIrqs;
use mlx5_emu::vfio;
use std::fs::File;
use std::os::fd::{AsRawFd, FromRawFd};
use std::os::unix::fs::FileExt;
use std::sync::Arc;
use vfio_bindings::bindings::vfio::{
    VFIO_IRQ_SET_ACTION_TRIGGER, VFIO_IRQ_SET_DATA_EVENTFD, VFIO_PCI_BAR0_REGION_INDEX,
    VFIO_PCI_CONFIG_REGION_INDEX, VFIO_PCI_MSIX_IRQ_INDEX,
};

const GPA: u64 = 0x4000_0000;
const SIZE: u64 = 1 << 20;

fn memfd() -> File {
    // SAFETY: memfd_create with a valid NUL-terminated name; the fd is checked and owned.
    let fd = unsafe { libc::memfd_create(c"guest-ram".as_ptr(), 0) };
    assert!(fd >= 0);
    // SAFETY: `fd` is a fresh descriptor we own.
    let f = unsafe { File::from_raw_fd(fd) };
    f.set_len(SIZE).unwrap();
    f
}

fn eventfd() -> File {
    // SAFETY: plain eventfd creation; the fd is checked and owned.
    let fd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK) };
    assert!(fd >= 0);
    // SAFETY: `fd` is a fresh descriptor we own.
    unsafe { File::from_raw_fd(fd) }
}

#[test]
fn serves_qemu_style_client_and_exits_on_disconnect() {
    let dir = std::env::temp_dir().join(format!("mlx5-emu-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let sock = dir.join("vfio.sock");
    let _ = std::fs::remove_file(&sock);
    let mem = Arc::new(MappedMemory::new());
    let irqs = Arc::new(EventFdIrqs::new(64));
    let dev = Device::new(EmuConfig::default(), mem.clone(), irqs.clone());
    let fw = dev.spawn_firmware();
    let irq_table = vfio::irqs(mlx5_emu::pci_config::MSIX_VECTORS);
    let server = vfio_user::Server::new(&sock, true, irq_table, vfio::regions()).unwrap();
    let d2 = Arc::clone(&dev);
    let srv = std::thread::spawn(move || {
        let mut b = vfio::Backend {
            dev: d2,
            mem,
            irqs,
            unreachable_maps: 0,
        };
        server.run(&mut b)
    });

    let mut c = vfio_user::Client::new(&sock).unwrap();
    let mut b4 = [0u8; 4];
    c.region_read(VFIO_PCI_CONFIG_REGION_INDEX, 0, &mut b4)
        .unwrap();
    assert_eq!(u32::from_le_bytes(b4), 0x1017_15b3);
    c.region_read(VFIO_PCI_BAR0_REGION_INDEX, 4, &mut b4)
        .unwrap();
    assert_eq!(u32::from_be_bytes(b4) >> 16, 5);
    // Enable bus mastering and MSI-X, hand over guest RAM and vector 0.
    c.region_write(VFIO_PCI_CONFIG_REGION_INDEX, 4, &6u16.to_le_bytes())
        .unwrap();
    c.region_write(VFIO_PCI_CONFIG_REGION_INDEX, 0x9e, &0x803fu16.to_le_bytes())
        .unwrap();
    let ram = memfd();
    c.dma_map(0, GPA, SIZE, ram.as_raw_fd()).unwrap();
    let ev = eventfd();
    c.set_irqs(
        VFIO_PCI_MSIX_IRQ_INDEX,
        VFIO_IRQ_SET_DATA_EVENTFD | VFIO_IRQ_SET_ACTION_TRIGGER,
        0,
        1,
        &[ev.as_raw_fd()],
    )
    .unwrap();

    // Command queue at GPA, ENABLE_HCA in slot 0.
    let q = GPA;
    c.region_write(
        VFIO_PCI_BAR0_REGION_INDEX,
        0x10,
        &((q >> 32) as u32).to_be_bytes(),
    )
    .unwrap();
    c.region_write(VFIO_PCI_BAR0_REGION_INDEX, 0x14, &(q as u32).to_be_bytes())
        .unwrap();
    let mut e = [0u8; 64];
    e[entry_off::TYPE] = cl::CMD_TYPE_PCI;
    e[entry_off::INLEN..entry_off::INLEN + 4].copy_from_slice(&16u32.to_be_bytes());
    e[entry_off::OUTLEN..entry_off::OUTLEN + 4].copy_from_slice(&16u32.to_be_bytes());
    e[entry_off::IN..entry_off::IN + 2].copy_from_slice(&0x104u16.to_be_bytes());
    e[entry_off::TOKEN] = 1;
    e[entry_off::STATUS_OWN] = 1;
    e[entry_off::SIG] = cl::entry_signature(&e);
    ram.write_all_at(&e, 0).unwrap();
    c.region_write(VFIO_PCI_BAR0_REGION_INDEX, 0x18, &1u32.to_be_bytes())
        .unwrap();
    let start = std::time::Instant::now();
    let mut so = [1u8];
    while so[0] & 1 == 1 {
        assert!(start.elapsed().as_secs() < 5, "command not completed");
        std::thread::sleep(std::time::Duration::from_millis(1));
        ram.read_exact_at(&mut so, entry_off::STATUS_OWN as u64)
            .unwrap();
    }
    assert_eq!(so[0], 0);
    assert!(dev.fw().func.enabled);
    // A fired vector reaches the eventfd.
    assert!(dev.irq.fire(0));
    let mut cnt = [0u8; 8];
    std::io::Read::read_exact(&mut &ev, &mut cnt).unwrap();
    assert_eq!(u64::from_ne_bytes(cnt), 1);

    c.shutdown().unwrap();
    drop(c);
    srv.join().unwrap().unwrap();
    dev.shutdown();
    fw.join().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}
