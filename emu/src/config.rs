//! Emulator configuration (command line and defaults).

/// Tunables of the emulated device.
#[derive(Clone, Debug)]
pub struct EmuConfig {
    /// Time the `initializing` bit stays set after start / reset.
    pub boot_delay_ms: u64,
    /// Pages demanded by QUERY_PAGES(boot).
    pub boot_pages: u32,
    /// Pages demanded by QUERY_PAGES(init).
    pub init_pages: u32,
    /// Pages demanded by QUERY_PAGES(regular).
    pub regular_pages: u32,
    /// Firmware version (major, minor, subminor).
    pub fw_rev: (u16, u16, u16),
    /// Health counter period.
    pub health_period_ms: u64,
    /// Value reported at init segment 0xff8 (`default_timeout` encoding), 0 = none.
    pub cmd_exec_to: u32,
    /// Value reported at init segment 0xffc (`default_timeout` encoding), 0 = none.
    pub cmd_q_init_to: u32,
    /// Internal timer frequency in kHz (also cap `device_frequency_khz`).
    pub device_frequency_khz: u32,
    /// Random completion latency bound in µs (0 = none).
    pub jitter_us: u64,
    /// MSI-X vectors offered (config-space table size), 1..=[`MAX_MSIX_VECTORS`].
    /// QEMU copies the MSI-X capability when it realizes the device, so this is a
    /// start-up setting (`--msix-vectors`), not a control request.
    pub msix_vectors: u16,
    /// Strict checks switched on at start-up (`--strict NAME`).
    pub strict: crate::fw::strict::Strict,
    /// Cap `ib_virt` at power-on (`--ib-virt`): upstream mlx5_ib then reads the IB
    /// port through the HCA vport commands instead of MAD_IFC.
    pub ib_virt: bool,
    /// The port's LID at power-on (`--lid`; default 2, README "InfiniBand port").
    pub lid: u16,
    /// The master SM's LID at power-on (`--sm-lid`; default 1).
    pub sm_lid: u16,
    /// Which emulated device this is (`--device-index`): its GUIDs are the power-on
    /// ones plus 0x100 × the index, so two wired devices differ (default 0).
    pub device_index: u8,
    /// The link to a peer device (`--wire-listen` / `--wire-connect`), if any.
    pub wire: Option<crate::fw::dp::wire::WireEndpoint>,
}

/// Largest MSI-X table that fits between the table (BAR0 0x2000) and the PBA (0x3000).
pub const MAX_MSIX_VECTORS: u16 = 256;

impl Default for EmuConfig {
    fn default() -> Self {
        EmuConfig {
            boot_delay_ms: 0,
            boot_pages: 64,
            init_pages: 1024,
            regular_pages: 0,
            fw_rev: (16, 35, 1012),
            health_period_ms: 100,
            // 60 s command timeout, 2 s FW-init timeout ("seconds" multiplier).
            cmd_exec_to: crate::ifc::init_seg::encode_timeout(1, 60),
            cmd_q_init_to: crate::ifc::init_seg::encode_timeout(1, 2),
            device_frequency_khz: 156_250,
            jitter_us: 0,
            msix_vectors: crate::pci_config::MSIX_VECTORS,
            strict: crate::fw::strict::Strict::default(),
            ib_virt: false,
            lid: 2,
            sm_lid: 1,
            device_index: 0,
            wire: None,
        }
    }
}

/// Parses one start-up option of the port and the wire (`--lid N`, `--sm-lid N`,
/// `--device-index N`, `--wire-listen PATH`, `--wire-connect PATH`) into `cfg`, taking
/// its value from `val`. `None`: not such an option; `Some(Err)`: a bad value.
/// LIDs are unicast (1..=0xbfff, IBTA 4.1.3), as the control `ib_port` request takes them.
pub fn parse_port_option(
    cfg: &mut EmuConfig,
    opt: &str,
    val: &mut dyn FnMut() -> Option<String>,
) -> Option<Result<(), String>> {
    use crate::fw::dp::wire::WireEndpoint;
    let lid = |v: Option<String>| {
        v.and_then(|v| v.parse::<u16>().ok())
            .filter(|l| (1..=0xbfff).contains(l))
            .ok_or_else(|| format!("{opt} takes a unicast LID (1 to 49151)"))
    };
    let r = match opt {
        "--lid" => lid(val()).map(|l| cfg.lid = l),
        "--sm-lid" => lid(val()).map(|l| cfg.sm_lid = l),
        "--device-index" => val()
            .and_then(|v| v.parse::<u8>().ok())
            .map(|i| cfg.device_index = i)
            .ok_or_else(|| format!("{opt} takes 0 to 255")),
        "--wire-listen" | "--wire-connect" => match (val(), &cfg.wire) {
            (_, Some(_)) => Err("one --wire-listen or --wire-connect".to_string()),
            (Some(p), None) if !p.is_empty() => {
                let p = std::path::PathBuf::from(p);
                cfg.wire = Some(if opt == "--wire-listen" {
                    WireEndpoint::Listen(p)
                } else {
                    WireEndpoint::Connect(p)
                });
                Ok(())
            }
            _ => Err(format!("{opt} takes a socket path")),
        },
        _ => return None,
    };
    Some(r)
}
