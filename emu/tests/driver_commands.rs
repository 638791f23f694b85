//! The driver's typed commands (`cmd/commands.rs`, `eq/commands.rs`, through the host
//! crate) against the firmware model: each input is built by the driver's encoder,
//! executed by the emulator and its output parsed by the driver's decoder, through a
//! whole bring-up and teardown, with no strict-rule violation.

mod common;

use common::Host;
use mlx5_emu::mem::GuestMemory;
use mlx5_rs_pure::cmd::command::{self, Command};
use mlx5_rs_pure::cmd::commands::*;
use mlx5_rs_pure::eq::commands::*;
use mlx5_rs_pure::ifc::eqe::{event_type, Eqe, EqeComp};
use mlx5_rs_pure::ifc::opcodes::{query_pages_op_mod as qp, teardown_profile};
use zerocopy::byteorder::big_endian::U32;

/// Runs `cmd` as the driver would and returns its reply; the command must succeed.
fn exec<C: Command>(h: &mut Host, cmd: C) -> C::Reply {
    let mut input = vec![0u8; command::in_len(&cmd)];
    command::encode(&cmd, &mut input).unwrap();
    let out = h.ok(&input, command::out_len(&cmd));
    command::decode(cmd, &out).unwrap()
}

struct Pages(Vec<u64>);

impl PageSink for Pages {
    fn reserve(&mut self, n: usize) -> Result<(), command::CodecError> {
        self.0.reserve(n);
        Ok(())
    }
    fn push(&mut self, a: u64) -> Result<(), command::CodecError> {
        self.0.push(a);
        Ok(())
    }
}

fn give(h: &mut Host, n: i32) -> usize {
    let n = usize::try_from(n).unwrap();
    let addrs: Vec<u64> = (0..n).map(|_| h.alloc(4096, 4096)).collect();
    exec(
        h,
        GivePages {
            function_id: 0,
            embedded_cpu: false,
            addrs: &addrs,
        },
    );
    n
}

#[test]
fn driver_bring_up_and_teardown_on_the_firmware_model() {
    let mut h = Host::new();
    exec(
        &mut h,
        EnableHca {
            embedded_cpu: false,
        },
    );
    let issi = exec(&mut h, QueryIssi);
    assert_eq!(issi, 0b11);
    exec(&mut h, SetIssi { issi: 1 });
    let boot = exec(
        &mut h,
        QueryPages {
            op_mod: qp::BOOT,
            embedded_cpu: false,
        },
    );
    assert!(boot > 0);
    let mut given = give(&mut h, boot);

    let max = exec(&mut h, QueryGeneralCaps { current: false });
    let mut cur = exec(&mut h, QueryGeneralCaps { current: true });
    use mlx5_rs_pure::ifc::caps::cmd_hca_cap as g;
    cur.set(g::LOG_MAX_QP, 18u8.min(max.get(g::LOG_MAX_QP)))
        .unwrap();
    cur.set(g::CMDIF_CHECKSUM, 0).unwrap();
    exec(&mut h, SetGeneralCaps(&cur));
    let caps = exec(&mut h, QueryGeneralCaps { current: true });
    assert_eq!(caps.get(g::LOG_MAX_QP), 18u8.min(max.get(g::LOG_MAX_QP)));
    assert!(caps.get(g::NUM_PORTS) >= 1);

    let init = exec(
        &mut h,
        QueryPages {
            op_mod: qp::INIT,
            embedded_cpu: false,
        },
    );
    given += give(&mut h, init);
    let id = [7u8; 16];
    exec(
        &mut h,
        InitHca {
            sw_owner_id: caps.get(g::SW_OWNER_ID).then_some(&id),
        },
    );
    exec(&mut h, SetDriverVersion { version: "0.1.0" });
    assert!(h
        .dev
        .fw()
        .func
        .driver_version
        .starts_with("Linux,mlx5_rs,0.1.0"));
    let board = exec(&mut h, QueryBoardId);
    assert_eq!(&board[..13], b"MT_0000000008");

    // EQ and UAR commands.
    let uar = exec(&mut h, AllocUar);
    let ring = h.alloc(4096, 4096);
    h.mem.write(ring, &[1u8; 4096]).unwrap();
    let eqn = exec(
        &mut h,
        CreateEq {
            log_size: 6,
            uar,
            vector: 0,
            mask: [1, 0, 0, 0],
            pages: &[ring],
        },
    );
    // GEN_EQE of a completion: the device writes it into the ring as given.
    let mut e = Eqe::zeroed();
    e.type_ = event_type::COMP;
    e.set_comp(EqeComp {
        rsvd: [0; 24],
        cqn: U32::new(0x42),
    });
    exec(
        &mut h,
        GenEqe {
            eqn,
            eqe: &e.to_array(),
        },
    );
    h.dev.step();
    let mut raw = [0u8; 64];
    h.mem.read(ring, &mut raw).unwrap();
    let got = Eqe::from_array(&raw);
    assert_eq!((got.type_, got.comp().cqn.get()), (event_type::COMP, 0x42));
    exec(&mut h, Nop);
    exec(&mut h, DestroyEq { eqn });
    exec(&mut h, DeallocUar { uar });

    // Teardown: graceful close, then every page back.
    assert_eq!(
        exec(
            &mut h,
            TeardownHca {
                profile: teardown_profile::GRACEFUL_CLOSE,
            }
        ),
        0
    );
    let mut returned = 0;
    loop {
        let mut got = Pages(Vec::new());
        let n = exec(
            &mut h,
            TakePages {
                function_id: 0,
                embedded_cpu: false,
                max: 768,
                sink: &mut got,
            },
        );
        assert_eq!(n as usize, got.0.len());
        if n == 0 {
            break;
        }
        returned += got.0.len();
    }
    assert!(returned >= given, "returned {returned}, given {given}");
    exec(
        &mut h,
        DisableHca {
            embedded_cpu: false,
        },
    );
    let s = mlx5_emu::control::stats(&h.dev);
    assert_eq!(s["pages"]["held"], 0);
    assert_eq!(s["violations"], 0, "{}", s["recent_violations"]);
}
