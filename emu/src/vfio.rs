//! vfio-user transport: regions, DMA mappings and MSI-X eventfds for QEMU.
//!
//! Every callback runs on the server thread; none of them waits for the firmware.
//! Error replies are not relied upon (the crate sends errno 0 for most errors).

use crate::device::Device;
use crate::dma_map::MappedMemory;
use crate::irq::EventFdIrqs;
use crate::pci_config::{BAR0_SIZE, CONFIG_SIZE};
use std::fs::File;
use std::sync::Arc;
use vfio_bindings::bindings::vfio::{
    vfio_region_info, VFIO_IRQ_INFO_EVENTFD, VFIO_IRQ_SET_ACTION_TRIGGER,
    VFIO_IRQ_SET_DATA_EVENTFD, VFIO_IRQ_SET_DATA_NONE, VFIO_PCI_BAR0_REGION_INDEX,
    VFIO_PCI_CONFIG_REGION_INDEX, VFIO_PCI_MSIX_IRQ_INDEX, VFIO_PCI_NUM_IRQS, VFIO_PCI_NUM_REGIONS,
    VFIO_REGION_INFO_FLAG_READ, VFIO_REGION_INFO_FLAG_WRITE,
};
use vfio_user::{DmaMapFlags, DmaUnmapFlags, IrqInfo, ServerBackend, ServerRegion};

/// QEMU's "unmap all" bit (the crate names bit 1 differently).
const UNMAP_ALL_BIT: u32 = 1 << 1;

/// The vfio-user backend of the device.
pub struct Backend {
    /// The device.
    pub dev: Arc<Device>,
    /// Guest RAM mappings.
    pub mem: Arc<MappedMemory>,
    /// MSI-X eventfds.
    pub irqs: Arc<EventFdIrqs>,
    /// DMA_MAP sections without an fd (unreachable).
    pub unreachable_maps: u64,
}

/// The region table advertised to the client.
pub fn regions() -> Vec<ServerRegion> {
    (0..VFIO_PCI_NUM_REGIONS)
        .map(|index| {
            let mut info = vfio_region_info {
                argsz: std::mem::size_of::<vfio_region_info>() as u32,
                index,
                ..Default::default()
            };
            let rw = VFIO_REGION_INFO_FLAG_READ | VFIO_REGION_INFO_FLAG_WRITE;
            if index == VFIO_PCI_CONFIG_REGION_INDEX {
                info.size = CONFIG_SIZE as u64;
                info.flags = rw;
            } else if index == VFIO_PCI_BAR0_REGION_INDEX {
                info.size = BAR0_SIZE;
                info.flags = rw;
            }
            ServerRegion {
                region_info: info,
                sparse_areas: Vec::new(),
                mmap_fd: None,
            }
        })
        .collect()
}

/// The IRQ table advertised to the client: MSI-X only, `msix` vectors (QEMU takes the
/// count from the config-space table size; this keeps both in step).
pub fn irqs(msix: u16) -> Vec<IrqInfo> {
    (0..VFIO_PCI_NUM_IRQS)
        .map(|index| {
            if index == VFIO_PCI_MSIX_IRQ_INDEX {
                IrqInfo {
                    index,
                    count: u32::from(msix),
                    flags: VFIO_IRQ_INFO_EVENTFD,
                }
            } else {
                IrqInfo {
                    index,
                    count: 0,
                    flags: 0,
                }
            }
        })
        .collect()
}

impl ServerBackend for Backend {
    fn region_read(
        &mut self,
        region: u32,
        offset: u64,
        data: &mut [u8],
    ) -> Result<(), std::io::Error> {
        match region {
            VFIO_PCI_CONFIG_REGION_INDEX => self.dev.config_read(offset, data),
            VFIO_PCI_BAR0_REGION_INDEX => self.dev.bar0_read(offset, data),
            _ => data.fill(0xff),
        }
        Ok(())
    }

    fn region_write(
        &mut self,
        region: u32,
        offset: u64,
        data: &[u8],
    ) -> Result<(), std::io::Error> {
        match region {
            VFIO_PCI_CONFIG_REGION_INDEX => self.dev.config_write(offset, data),
            VFIO_PCI_BAR0_REGION_INDEX => self.dev.bar0_write(offset, data),
            _ => {}
        }
        Ok(())
    }

    fn dma_map(
        &mut self,
        _flags: DmaMapFlags,
        offset: u64,
        address: u64,
        size: u64,
        fd: Option<File>,
    ) -> Result<(), std::io::Error> {
        match fd {
            Some(fd) => {
                if let Err(e) = self.mem.map(address, size, offset, &fd) {
                    log::warn!("dma_map {address:#x}+{size:#x}: {e}");
                }
            }
            None => {
                self.unreachable_maps += 1;
                self.dev
                    .dma_maps_without_fd
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
        }
        Ok(())
    }

    fn dma_unmap(
        &mut self,
        flags: DmaUnmapFlags,
        address: u64,
        size: u64,
    ) -> Result<(), std::io::Error> {
        if flags.bits() & UNMAP_ALL_BIT != 0 {
            self.mem.unmap_all();
        } else {
            self.mem.unmap(address, size);
        }
        Ok(())
    }

    fn reset(&mut self) -> Result<(), std::io::Error> {
        if self.dev.reset() {
            log::info!("PCI reset: sync reset activated, firmware at power-on");
        }
        Ok(())
    }

    fn set_irqs(
        &mut self,
        index: u32,
        flags: u32,
        start: u32,
        count: u32,
        fds: Vec<File>,
    ) -> Result<(), std::io::Error> {
        if index != VFIO_PCI_MSIX_IRQ_INDEX || flags & VFIO_IRQ_SET_ACTION_TRIGGER == 0 {
            return Ok(());
        }
        if flags & VFIO_IRQ_SET_DATA_NONE != 0 && count == 0 {
            self.irqs.clear();
            return Ok(());
        }
        if flags & VFIO_IRQ_SET_DATA_EVENTFD != 0 {
            if fds.is_empty() {
                for v in start..start.saturating_add(count) {
                    self.irqs.set(v as usize, None);
                }
            } else {
                for (i, fd) in fds.into_iter().enumerate() {
                    self.irqs.set(start as usize + i, Some(fd));
                }
            }
        }
        Ok(())
    }
}
