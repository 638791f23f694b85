// SPDX-License-Identifier: GPL-2.0

//! BAR 0 mapped piece by piece, as upstream mlx5_core maps it: the region requested
//! once ([`BarRegion`], `pci_request_region`), and only the ranges the kernel touches
//! ioremapped ([`BarRange`]): the initialization segment (`dev->iseg = ioremap(...)`
//! in `mlx5_pci_init`) and the UAR page the kernel rings (`mlx5_get_uars_page`:
//! `ioremap` of that one page). The kernel crate's `pci::Bar` ioremaps the whole BAR
//! uncached, and x86 PAT then gives every later mapping of any page of it that memory
//! type: a user-space write-combining mapping of a UAR page (libmlx5's BlueFlame
//! registers) would silently become uncached. A [`BarRange`] is the kernel crate's
//! `IoMem` over a sub-range of the BAR: the same `Io` accessors (bounds-checked
//! against its size), and device-managed ([`BarRange::into_devres`]) so that every
//! access fails once the device is unbound.

use kernel::{
    bindings,
    device::Bound,
    devres::DevresLt,
    ffi::c_void,
    io::{IoBase, Mmio, MmioBackend, MmioRaw, Region},
    pci,
    prelude::*,
    types::{CovariantForLt, ForLt},
};

/// `struct pci_dev *` of `pdev` (`pci::Device` is `#[repr(transparent)]` over
/// `Opaque<bindings::pci_dev>`).
fn raw(pdev: &pci::Device) -> *mut bindings::pci_dev {
    core::ptr::from_ref(pdev)
        .cast_mut()
        .cast::<bindings::pci_dev>()
}

/// BAR `bar`'s region, requested for this driver (`pci_request_region`: the resource
/// tree says who owns it); released on drop.
///
/// INVARIANT: `pdev`'s BAR `bar` was requested by [`BarRegion::new`] and not released
/// since.
pub(crate) struct BarRegion<'bound> {
    pdev: &'bound pci::Device<Bound>,
    bar: i32,
}

impl<'bound> BarRegion<'bound> {
    /// Requests BAR `bar` of `pdev` under `name`.
    ///
    /// # Errors
    ///
    /// `ENOMEM` for a BAR of size 0 (or an invalid number), `EBUSY` if another driver
    /// holds the region.
    pub(crate) fn new(
        pdev: &'bound pci::Device<Bound>,
        bar: u32,
        name: &'static CStr,
    ) -> Result<Self> {
        if pdev.resource_len(bar)? == 0 {
            return Err(ENOMEM);
        }
        let bar = i32::try_from(bar)?;
        // SAFETY: `raw(pdev)` is a valid `struct pci_dev` for `'bound`; `bar` is a valid
        // BAR number (its length was read above); `name` is a static C string.
        let ret = unsafe { bindings::pci_request_region(raw(pdev), bar, name.as_char_ptr()) };
        if ret != 0 {
            return Err(EBUSY);
        }
        // INVARIANT: requested just above.
        Ok(Self { pdev, bar })
    }
}

impl Drop for BarRegion<'_> {
    fn drop(&mut self) {
        // SAFETY: by the type invariant the region is ours and still requested.
        unsafe { bindings::pci_release_region(raw(self.pdev), self.bar) };
    }
}

/// A range of a BAR mapped uncached, at least `SIZE` bytes (accesses below `SIZE` are
/// checked at compile time, the others at run time); unmapped on drop.
///
/// INVARIANT: `io` holds an `ioremap` mapping of this many bytes of a BAR of `pdev`
/// whose region the owner holds for as long as the range exists.
pub(crate) struct BarRange<'bound, const SIZE: usize> {
    pdev: &'bound pci::Device<Bound>,
    io: MmioRaw<Region<SIZE>>,
}

impl<const SIZE: usize> ForLt for BarRange<'static, SIZE> {
    type Of<'a> = BarRange<'a, SIZE>;
}

// SAFETY: `BarRange<'a, SIZE>` is covariant over `'a`; it holds `&'a Device<Bound>`,
// which is covariant.
unsafe impl<const SIZE: usize> CovariantForLt for BarRange<'static, SIZE> {}

/// A device-managed [`BarRange`].
pub(crate) type DevresBarRange<const SIZE: usize> = DevresLt<BarRange<'static, SIZE>>;

/// A BAR requested for this driver with its first `SIZE` bytes mapped (the init
/// segment of BAR 0): the kernel crate's `pci::Bar`, but mapping `SIZE` bytes only.
/// Its other pages are mapped on their own ([`BarRange::new`]), or only by user space.
pub(crate) struct RequestedBar<'bound, const SIZE: usize> {
    // Unmapped before the region is released.
    range: BarRange<'bound, SIZE>,
    _region: BarRegion<'bound>,
}

impl<const SIZE: usize> ForLt for RequestedBar<'static, SIZE> {
    type Of<'a> = RequestedBar<'a, SIZE>;
}

// SAFETY: `RequestedBar<'a, SIZE>` is covariant over `'a`: it holds a `BarRange<'a>`
// and a `BarRegion<'a>`, each only a `&'a Device<Bound>` besides plain data.
unsafe impl<const SIZE: usize> CovariantForLt for RequestedBar<'static, SIZE> {}

/// A device-managed [`RequestedBar`].
pub(crate) type DevresRequestedBar<const SIZE: usize> = DevresLt<RequestedBar<'static, SIZE>>;

impl<'bound, const SIZE: usize> RequestedBar<'bound, SIZE> {
    /// Requests BAR `bar` of `pdev` under `name` and maps its first `SIZE` bytes.
    ///
    /// # Errors
    ///
    /// As [`BarRegion::new`] and [`BarRange::new`].
    pub(crate) fn new(
        pdev: &'bound pci::Device<Bound>,
        bar: u32,
        name: &'static CStr,
    ) -> Result<Self> {
        let region = BarRegion::new(pdev, bar, name)?;
        let range = BarRange::new(pdev, bar, 0, SIZE)?;
        Ok(Self {
            range,
            _region: region,
        })
    }

    /// Registers it as a device-managed resource (see [`BarRange::into_devres`]): the
    /// mapping goes, then the region, when the device is unbound.
    pub(crate) fn into_devres(self) -> Result<DevresRequestedBar<SIZE>> {
        let dev = self.range.pdev.as_ref();
        // SAFETY: as `BarRange::into_devres`; the region is held for the same scope.
        unsafe { DevresLt::new(dev, self) }
    }
}

impl<'a, const SIZE: usize> IoBase<'a> for &'a RequestedBar<'_, SIZE> {
    type Backend = MmioBackend;
    type Target = Region<SIZE>;

    #[inline]
    fn as_view(self) -> Mmio<'a, Self::Target> {
        (&self.range).as_view()
    }
}

impl<'bound, const SIZE: usize> BarRange<'bound, SIZE> {
    /// `[off, off + len)` of BAR `bar` of `pdev` mapped uncached (`ioremap`). The
    /// caller holds the BAR's region ([`BarRegion`], [`RequestedBar`]) for as long as
    /// the range exists.
    ///
    /// # Errors
    ///
    /// `EINVAL` for a range outside the BAR or shorter than `SIZE`; `ENOMEM` if the
    /// mapping fails.
    pub(crate) fn new(
        pdev: &'bound pci::Device<Bound>,
        bar: u32,
        off: u64,
        len: usize,
    ) -> Result<Self> {
        let bar_len = pdev.resource_len(bar)?;
        let end = off.checked_add(u64::try_from(len)?).ok_or(EINVAL)?;
        if len == 0 || len < SIZE || end > bar_len {
            return Err(EINVAL);
        }
        let start = pdev.resource_start(bar)?.checked_add(off).ok_or(EINVAL)?;
        // SAFETY: `[start, start + len)` lies inside BAR `bar` of a bound device and
        // `len` is not 0.
        let addr = unsafe { bindings::ioremap(start, len) };
        if addr.is_null() {
            return Err(ENOMEM);
        }
        let io = match MmioRaw::new_region(addr as usize, len) {
            Ok(io) => io,
            Err(e) => {
                // SAFETY: `addr` was returned by `ioremap` just above and is unused.
                unsafe { bindings::iounmap(addr) };
                return Err(e);
            }
        };
        // INVARIANT: `io` is the mapping just made, of `len` bytes.
        Ok(BarRange { pdev, io })
    }

    /// Registers the range as a device-managed resource: it can outlive the probe
    /// borrow, and access is revoked (and the range unmapped) when the device is
    /// unbound.
    pub(crate) fn into_devres(self) -> Result<DevresBarRange<SIZE>> {
        let dev = self.pdev.as_ref();
        // SAFETY: a `BarRange` holds only a device reference and an I/O mapping, both
        // valid for the device's whole bound scope (the BAR's region, device-managed
        // too and registered earlier, is released after it: devres releases in reverse
        // order).
        unsafe { DevresLt::new(dev, self) }
    }
}

impl<const SIZE: usize> Drop for BarRange<'_, SIZE> {
    fn drop(&mut self) {
        // SAFETY: by the type invariant `io` is our `ioremap` mapping, unmapped once.
        unsafe { bindings::iounmap(self.io.addr() as *mut c_void) };
    }
}

impl<'a, const SIZE: usize> IoBase<'a> for &'a BarRange<'_, SIZE> {
    type Backend = MmioBackend;
    type Target = Region<SIZE>;

    #[inline]
    fn as_view(self) -> Mmio<'a, Self::Target> {
        // SAFETY: by the type invariant the range is mapped, for as long as `self`.
        unsafe { Mmio::from_raw(self.io) }
    }
}
