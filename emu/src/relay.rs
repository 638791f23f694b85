//! The vfio-user connection's fast path: QEMU's messages read from the socket in
//! batches, reads and writes of BAR 0 and of configuration space served here (as the
//! crate's backend, `vfio::Backend`, serves them), every other message handed to the
//! `vfio_user` crate's server over a private connection, in order.
//!
//! Why (emu/README.md "Doorbells", the server loop's row): libmlx5 rings one posted
//! BAR 0 write per work request, and the crate reads each message with three system
//! calls (a `recvmsg` for the header, two `recv`s for the rest); under perftest that
//! was most of the server thread's time, and QEMU queues a read behind every posted
//! write it has not sent yet, so a BAR read waited tens of milliseconds. Here one
//! `recvmsg` takes as many messages as the socket holds (up to [`BUF`]).
//!
//! Order: messages are handled one at a time in arrival order, as the protocol has
//! them (a read never passes a posted write). A message handed to the crate is
//! answered (its reply read back from the crate) before the next one is looked at; a
//! posted one (`NO_REPLY`) is handed over with the reply asked for, and the reply
//! dropped, so that it too is done before the next.
//!
//! File descriptors: QEMU sends a message and its descriptors in one `sendmsg`, so the
//! descriptors ride on the message's first bytes; the kernel ends a read right after
//! the data that carried descriptors (`unix_stream_read_generic`, af_unix.c), so the
//! descriptors of one read belong to the message that holds the read's last byte.

use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, RawFd};
use std::os::unix::net::UnixStream;
use std::sync::Arc;

use crate::device::Device;
use vfio_bindings::bindings::vfio::{VFIO_PCI_BAR0_REGION_INDEX, VFIO_PCI_CONFIG_REGION_INDEX};

/// Bytes of a message header (`struct vfio_user_header`: id u16, command u16, size
/// u32, flags u32, error u32).
pub const HDR: usize = 16;
/// Bytes of a region access without its data (header, offset u64, region u32, count
/// u32: `VFIO_USER_REGION_READ` / `_WRITE`).
pub const ACCESS: usize = HDR + 16;
/// `VFIO_USER_REGION_READ`.
pub const CMD_REGION_READ: u16 = 9;
/// `VFIO_USER_REGION_WRITE`.
pub const CMD_REGION_WRITE: u16 = 10;
/// Header flag: this is a reply.
pub const FLAG_REPLY: u32 = 1;
/// Header flag: no reply wanted (a posted write).
pub const FLAG_NO_REPLY: u32 = 1 << 4;
/// BAR 0's region.
const BAR0: u32 = VFIO_PCI_BAR0_REGION_INDEX;
/// Configuration space's region.
const CONFIG: u32 = VFIO_PCI_CONFIG_REGION_INDEX;
/// The read buffer, and the most one `recvmsg` takes.
const BUF: usize = 64 << 10;
/// The largest message accepted: the crate's maximum data transfer (1 MiB) and its
/// header; a larger size is a broken stream.
const MAX_MSG: usize = (1 << 20) + ACCESS;
/// The most descriptors one read can carry (the protocol's `max_msg_fds` is at most
/// 16; more are closed).
const MAX_FDS: usize = 16;

/// Serves `client` (QEMU) until it disconnects: BAR 0 and configuration-space
/// accesses on `dev`, the rest through `inner`, a connection to the crate's server.
pub fn serve(dev: Arc<Device>, mut client: UnixStream, mut inner: UnixStream) -> io::Result<()> {
    let mut buf = vec![0u8; BUF];
    // Bytes read and not yet handled: `buf[..len]`.
    let mut len = 0usize;
    // Descriptors read with the bytes up to `fds_end` that no message has taken yet.
    let mut pending_fds: Vec<File> = Vec::new();
    let mut fds_end = 0usize;
    loop {
        // Whole messages first.
        let mut at = 0usize;
        while let Some(size) = whole_message(&buf[at..len])? {
            // The descriptors go with the message that holds the last byte of the
            // read that brought them.
            let fds = if !pending_fds.is_empty() && at < fds_end && fds_end <= at + size {
                std::mem::take(&mut pending_fds)
            } else {
                Vec::new()
            };
            handle(&dev, &mut client, &mut inner, &buf[at..at + size], fds)?;
            at += size;
        }
        buf.copy_within(at..len, 0);
        len -= at;
        fds_end = fds_end.saturating_sub(at);
        // Then more bytes: room for at least the rest of a started message.
        let need = len + needed(&buf[..len]);
        if need > buf.len() {
            buf.resize(need, 0);
        }
        let (n, fds) = recv_with_fds(&client, &mut buf[len..])?;
        if n == 0 {
            return Ok(());
        }
        len += n;
        if !fds.is_empty() {
            // Two reads' descriptors before their message is whole would mean a client
            // that splits a message's first bytes; the older ones are closed.
            pending_fds = fds;
            fds_end = len;
        }
    }
}

/// The size of the message at the start of `buf` if all of it is there; an error for
/// a size below a header or above [`MAX_MSG`].
fn whole_message(buf: &[u8]) -> io::Result<Option<usize>> {
    let Some(size) = declared_size(buf) else {
        return Ok(None);
    };
    if !(HDR..=MAX_MSG).contains(&size) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("vfio-user message of {size} bytes"),
        ));
    }
    Ok((buf.len() >= size).then_some(size))
}

/// The bytes the message at the start of `buf` still needs (0 when none is started
/// or the size is unreadable).
fn needed(buf: &[u8]) -> usize {
    declared_size(buf).map_or(0, |size| size.min(MAX_MSG).saturating_sub(buf.len()))
}

/// The size field of the header at the start of `buf`, if the header is all there.
fn declared_size(buf: &[u8]) -> Option<usize> {
    let field = buf.get(..HDR)?.get(4..8)?;
    Some(u32::from_le_bytes([field[0], field[1], field[2], field[3]]) as usize)
}

/// One message: a BAR 0 or configuration-space access here, anything else through
/// the crate (configuration space too costs a hand-over each access otherwise, and a
/// device reset's or recovery's config cycles are many).
fn handle(
    dev: &Device,
    client: &mut UnixStream,
    inner: &mut UnixStream,
    msg: &[u8],
    fds: Vec<File>,
) -> io::Result<()> {
    let command = u16::from_le_bytes([msg[2], msg[3]]);
    let flags = u32::from_le_bytes([msg[8], msg[9], msg[10], msg[11]]);
    if fds.is_empty()
        && msg.len() >= ACCESS
        && (command == CMD_REGION_READ || command == CMD_REGION_WRITE)
    {
        let offset = u64::from_le_bytes(msg[16..24].try_into().unwrap_or([0; 8]));
        let region = u32::from_le_bytes([msg[24], msg[25], msg[26], msg[27]]);
        let count = u32::from_le_bytes([msg[28], msg[29], msg[30], msg[31]]) as usize;
        if region == BAR0 || region == CONFIG {
            let whole = if command == CMD_REGION_WRITE {
                ACCESS + count
            } else {
                ACCESS
            };
            if msg.len() != whole {
                // The crate would read `count` bytes whatever the size says, and lose
                // its place in the stream: a broken client.
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("vfio-user region access of {} bytes for {count}", msg.len()),
                ));
            }
            if command == CMD_REGION_WRITE {
                if region == BAR0 {
                    dev.bar0_write(offset, &msg[ACCESS..]);
                } else {
                    dev.config_write(offset, &msg[ACCESS..]);
                }
                if flags & FLAG_NO_REPLY == 0 {
                    client.write_all(&access_reply(msg, CMD_REGION_WRITE, 0))?;
                }
                return Ok(());
            }
            if flags & FLAG_NO_REPLY == 0 && count <= MAX_MSG {
                let mut reply = access_reply(msg, CMD_REGION_READ, count);
                reply.resize(ACCESS + count, 0);
                if region == BAR0 {
                    dev.bar0_read(offset, &mut reply[ACCESS..]);
                } else {
                    dev.config_read(offset, &mut reply[ACCESS..]);
                }
                return client.write_all(&reply);
            }
        }
    }
    // The crate's: asked for a reply even when the client wants none, so that the
    // message is done before the next one.
    let mut fwd = msg.to_vec();
    let posted = flags & FLAG_NO_REPLY != 0;
    if posted {
        fwd[8..12].copy_from_slice(&(flags & !FLAG_NO_REPLY).to_le_bytes());
    }
    send_with_fds(inner, &fwd, &fds)?;
    drop(fds);
    let (reply, reply_fds) = read_reply(inner)?;
    if !posted {
        send_with_fds(client, &reply, &reply_fds)?;
    }
    Ok(())
}

/// The header and access fields of the reply to region access `msg`, its size
/// counting `count` bytes of data.
fn access_reply(msg: &[u8], command: u16, count: usize) -> Vec<u8> {
    let mut r = Vec::with_capacity(ACCESS + count);
    r.extend_from_slice(&msg[0..2]);
    r.extend_from_slice(&command.to_le_bytes());
    r.extend_from_slice(&((ACCESS + count) as u32).to_le_bytes());
    r.extend_from_slice(&FLAG_REPLY.to_le_bytes());
    r.extend_from_slice(&0u32.to_le_bytes());
    r.extend_from_slice(&msg[HDR..ACCESS]);
    r
}

/// One reply from the crate, whole, with the descriptors it carried.
fn read_reply(inner: &mut UnixStream) -> io::Result<(Vec<u8>, Vec<File>)> {
    let mut hdr = [0u8; HDR];
    let (n, fds) = recv_with_fds(inner, &mut hdr)?;
    if n == 0 {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "the vfio-user server closed",
        ));
    }
    inner.read_exact(&mut hdr[n..])?;
    let size = declared_size(&hdr).unwrap_or(0);
    if !(HDR..=MAX_MSG).contains(&size) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("vfio-user reply of {size} bytes"),
        ));
    }
    let mut reply = vec![0u8; size];
    reply[..HDR].copy_from_slice(&hdr);
    inner.read_exact(&mut reply[HDR..])?;
    Ok((reply, fds))
}

/// `recvmsg` into `buf`, with the descriptors that came along (at most [`MAX_FDS`]).
/// Interrupted calls are retried.
fn recv_with_fds(sock: &UnixStream, buf: &mut [u8]) -> io::Result<(usize, Vec<File>)> {
    const SPACE: usize = MAX_FDS * std::mem::size_of::<RawFd>();
    // A control buffer aligned for `cmsghdr` (u64 alignment covers it on Linux).
    let mut control = [0u64; (SPACE + 64) / 8];
    loop {
        let mut iov = libc::iovec {
            iov_base: buf.as_mut_ptr().cast(),
            iov_len: buf.len(),
        };
        // SAFETY: an all-zero `msghdr` is a valid value (null name, no iovecs).
        let mut mh: libc::msghdr = unsafe { std::mem::zeroed() };
        mh.msg_iov = &mut iov;
        mh.msg_iovlen = 1;
        mh.msg_control = control.as_mut_ptr().cast();
        mh.msg_controllen = std::mem::size_of_val(&control) as _;
        // SAFETY: `mh` points at `iov` (which covers `buf`, writable for its length)
        // and at `control` (writable for `msg_controllen` bytes), all alive for the
        // call; `MSG_CMSG_CLOEXEC` marks received descriptors close-on-exec.
        let n = unsafe { libc::recvmsg(sock.as_raw_fd(), &mut mh, libc::MSG_CMSG_CLOEXEC) };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        let mut fds = Vec::new();
        // SAFETY: `mh` was filled by the kernel above; the CMSG macros walk the
        // control buffer within `msg_controllen`.
        let mut c = unsafe { libc::CMSG_FIRSTHDR(&mh) };
        while !c.is_null() {
            // SAFETY: `c` is a control message header inside `control` (CMSG_FIRSTHDR
            // / CMSG_NXTHDR return only those or null).
            let (level, kind, len) = unsafe { ((*c).cmsg_level, (*c).cmsg_type, (*c).cmsg_len) };
            if level == libc::SOL_SOCKET && kind == libc::SCM_RIGHTS {
                // SAFETY: as above; CMSG_LEN(0) is the header's size.
                let data_len = len.saturating_sub(unsafe { libc::CMSG_LEN(0) } as usize);
                let count = data_len / std::mem::size_of::<RawFd>();
                // SAFETY: the data of an `SCM_RIGHTS` message is `count` descriptors.
                let data = unsafe { libc::CMSG_DATA(c) }.cast::<RawFd>();
                for i in 0..count {
                    // SAFETY: `i < count`, inside the message; an unaligned read, as the
                    // data need not be aligned for `RawFd`.
                    let fd = unsafe { data.add(i).read_unaligned() };
                    // SAFETY: the kernel installed `fd` in this process for us; it is
                    // owned by nothing else.
                    fds.push(unsafe { File::from_raw_fd(fd) });
                }
            }
            // SAFETY: `c` is a header of `mh`'s control buffer.
            c = unsafe { libc::CMSG_NXTHDR(&mh, c) };
        }
        return Ok((n as usize, fds));
    }
}

/// All of `data` to `sock`, `fds` with its first bytes.
fn send_with_fds(sock: &mut UnixStream, data: &[u8], fds: &[File]) -> io::Result<()> {
    if fds.is_empty() {
        return sock.write_all(data);
    }
    let raw: Vec<RawFd> = fds.iter().map(|f| f.as_raw_fd()).collect();
    let bytes = std::mem::size_of_val(raw.as_slice());
    // SAFETY: CMSG_SPACE only computes a size.
    let space = unsafe { libc::CMSG_SPACE(bytes as u32) } as usize;
    let mut control = vec![0u64; space.div_ceil(8)];
    let mut iov = libc::iovec {
        iov_base: data.as_ptr() as *mut libc::c_void,
        iov_len: data.len(),
    };
    // SAFETY: an all-zero `msghdr` is a valid value.
    let mut mh: libc::msghdr = unsafe { std::mem::zeroed() };
    mh.msg_iov = &mut iov;
    mh.msg_iovlen = 1;
    mh.msg_control = control.as_mut_ptr().cast();
    mh.msg_controllen = space as _;
    // SAFETY: `mh`'s control buffer has room for one header and `bytes` of data
    // (CMSG_SPACE); CMSG_FIRSTHDR returns its first header.
    unsafe {
        let c = libc::CMSG_FIRSTHDR(&mh);
        (*c).cmsg_level = libc::SOL_SOCKET;
        (*c).cmsg_type = libc::SCM_RIGHTS;
        (*c).cmsg_len = libc::CMSG_LEN(bytes as u32) as _;
        std::ptr::copy_nonoverlapping(raw.as_ptr(), libc::CMSG_DATA(c).cast::<RawFd>(), raw.len());
    }
    // SAFETY: `mh` points at `iov` (covering `data`, only read) and `control`, alive
    // for the call.
    let n = unsafe { libc::sendmsg(sock.as_raw_fd(), &mh, 0) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    // The descriptors went with the first bytes; the rest as plain data.
    sock.write_all(&data[n as usize..])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::EmuConfig;
    use crate::irq::RecordingIrqs;
    use crate::mem::VecMemory;
    use std::sync::atomic::Ordering;

    /// A UAR page's BlueFlame body (page 16, offset 0x808): a write there rings nothing.
    const BF_BODY: u64 = 16 * 4096 + 0x808;

    fn device() -> Arc<Device> {
        let mem = Arc::new(VecMemory::new(0x1000_0000, 1 << 20));
        Device::new(
            EmuConfig::default(),
            mem,
            Arc::new(RecordingIrqs::default()),
        )
    }

    /// A relay on `dev`: QEMU's end and the crate's end of its two connections.
    fn relay(
        dev: &Arc<Device>,
    ) -> (
        UnixStream,
        UnixStream,
        std::thread::JoinHandle<io::Result<()>>,
    ) {
        let (qemu, client) = UnixStream::pair().unwrap();
        let (inner, krate) = UnixStream::pair().unwrap();
        let d = Arc::clone(dev);
        let t = std::thread::spawn(move || serve(d, client, inner));
        (qemu, krate, t)
    }

    fn header(id: u16, command: u16, size: usize, flags: u32) -> Vec<u8> {
        let mut h = Vec::new();
        h.extend_from_slice(&id.to_le_bytes());
        h.extend_from_slice(&command.to_le_bytes());
        h.extend_from_slice(&(size as u32).to_le_bytes());
        h.extend_from_slice(&flags.to_le_bytes());
        h.extend_from_slice(&0u32.to_le_bytes());
        h
    }

    fn access(
        id: u16,
        command: u16,
        flags: u32,
        region: u32,
        offset: u64,
        data: &[u8],
        count: usize,
    ) -> Vec<u8> {
        let mut m = header(id, command, ACCESS + data.len(), flags);
        m.extend_from_slice(&offset.to_le_bytes());
        m.extend_from_slice(&region.to_le_bytes());
        m.extend_from_slice(&(count as u32).to_le_bytes());
        m.extend_from_slice(data);
        m
    }

    /// A posted write of 8 zero bytes to [`BF_BODY`] whose count field says `count`.
    fn posted_bf_write(id: u16, count: usize) -> Vec<u8> {
        access(
            id,
            CMD_REGION_WRITE,
            FLAG_NO_REPLY,
            BAR0,
            BF_BODY,
            &[0; 8],
            count,
        )
    }

    fn read_n(s: &mut UnixStream, n: usize) -> Vec<u8> {
        let mut b = vec![0u8; n];
        s.read_exact(&mut b).unwrap();
        b
    }

    #[test]
    fn bar0_and_config_accesses_are_served_in_order_without_the_crate() {
        let dev = device();
        let (mut qemu, krate, t) = relay(&dev);
        // A posted UAR write (no reply), then a read of the init segment's first dword.
        qemu.write_all(&posted_bf_write(1, 8)).unwrap();
        qemu.write_all(&access(2, CMD_REGION_READ, 0, BAR0, 0, &[], 4))
            .unwrap();
        let r = read_n(&mut qemu, ACCESS + 4);
        assert_eq!(
            r[..HDR],
            header(2, CMD_REGION_READ, ACCESS + 4, FLAG_REPLY)[..]
        );
        assert_eq!(r[HDR..ACCESS], access(0, 0, 0, BAR0, 0, &[], 4)[HDR..]);
        let mut want = [0u8; 4];
        dev.bar0_read(0, &mut want);
        assert_eq!(r[ACCESS..], want);
        // The posted write reached the device before the read was answered.
        assert_eq!(dev.doorbells.uar_messages.load(Ordering::Relaxed), 1);
        // Configuration space too: the vendor and device IDs, as the device has them.
        qemu.write_all(&access(4, CMD_REGION_READ, 0, CONFIG, 0, &[], 4))
            .unwrap();
        let r = read_n(&mut qemu, ACCESS + 4);
        assert_eq!(u16::from_le_bytes([r[0], r[1]]), 4);
        let mut ids = [0u8; 4];
        dev.config_read(0, &mut ids);
        assert_eq!(r[ACCESS..], ids);
        assert_eq!(ids, [0xb3, 0x15, 0x17, 0x10], "15b3:1017");
        // A write that asks for a reply gets one, without data.
        qemu.write_all(&access(3, CMD_REGION_WRITE, 0, BAR0, BF_BODY, &[0; 4], 4))
            .unwrap();
        let r = read_n(&mut qemu, ACCESS);
        assert_eq!(
            r[..HDR],
            header(3, CMD_REGION_WRITE, ACCESS, FLAG_REPLY)[..]
        );
        drop(qemu);
        assert!(t.join().unwrap().is_ok());
        // Nothing reached the crate.
        let mut k = krate;
        assert_eq!(k.read(&mut [0u8; 1]).unwrap(), 0);
    }

    #[test]
    fn other_messages_go_through_the_crate_posted_ones_with_a_reply_asked() {
        let dev = device();
        let (mut qemu, mut krate, t) = relay(&dev);
        // DEVICE_GET_INFO (4): forwarded as is, the crate's reply returned as is.
        let mut info = header(7, 4, HDR + 16, 0);
        info.extend_from_slice(&[0u8; 16]);
        qemu.write_all(&info).unwrap();
        assert_eq!(read_n(&mut krate, info.len()), info);
        let mut reply = header(7, 4, HDR + 16, FLAG_REPLY);
        reply.extend_from_slice(&[9u8; 16]);
        krate.write_all(&reply).unwrap();
        assert_eq!(read_n(&mut qemu, reply.len()), reply);
        // A posted write to another region (2, a BAR the device does not have): the
        // crate sees it without NO_REPLY; its reply is not passed on.
        let w = access(8, CMD_REGION_WRITE, FLAG_NO_REPLY, 2, 0x40, &[1, 2], 2);
        qemu.write_all(&w).unwrap();
        let got = read_n(&mut krate, w.len());
        assert_eq!(got, access(8, CMD_REGION_WRITE, 0, 2, 0x40, &[1, 2], 2));
        krate
            .write_all(&access(8, CMD_REGION_WRITE, FLAG_REPLY, 2, 0x40, &[], 2))
            .unwrap();
        // The next thing QEMU reads is the answer to its next request.
        qemu.write_all(&access(9, CMD_REGION_READ, 0, BAR0, 0, &[], 4))
            .unwrap();
        let r = read_n(&mut qemu, ACCESS + 4);
        assert_eq!(u16::from_le_bytes([r[0], r[1]]), 9);
        drop(qemu);
        assert!(t.join().unwrap().is_ok());
    }

    #[test]
    fn descriptors_stay_with_their_message() {
        let dev = device();
        let (mut qemu, mut krate, t) = relay(&dev);
        // Posted BAR 0 writes, then a DMA_MAP-like message (2) carrying a descriptor,
        // sent back to back so that one read may take them all.
        let (pr, _pw) = UnixStream::pair().unwrap();
        let mut map = header(5, 2, HDR + 32, 0);
        map.extend_from_slice(&[0u8; 32]);
        let mut burst = Vec::new();
        for i in 0..50u16 {
            burst.extend_from_slice(&posted_bf_write(100 + i, 8));
        }
        qemu.write_all(&burst).unwrap();
        send_with_fds(
            &mut qemu,
            &map,
            &[File::from(std::os::fd::OwnedFd::from(pr))],
        )
        .unwrap();
        let mut got = vec![0u8; map.len()];
        let (n, fds) = recv_with_fds(&krate, &mut got).unwrap();
        krate.read_exact(&mut got[n..]).unwrap();
        assert_eq!(got, map);
        assert_eq!(fds.len(), 1, "the descriptor came with its message");
        assert_eq!(dev.doorbells.uar_messages.load(Ordering::Relaxed), 50);
        let mut reply = header(5, 2, HDR, FLAG_REPLY);
        reply.truncate(HDR);
        krate.write_all(&reply).unwrap();
        assert_eq!(read_n(&mut qemu, HDR), reply);
        drop(qemu);
        assert!(t.join().unwrap().is_ok());
    }

    #[test]
    fn a_broken_stream_ends_the_connection() {
        let dev = device();
        let (mut qemu, _krate, t) = relay(&dev);
        // A size below a header.
        qemu.write_all(&header(1, CMD_REGION_READ, 8, 0)).unwrap();
        assert_eq!(
            t.join().unwrap().unwrap_err().kind(),
            io::ErrorKind::InvalidData
        );
        // A BAR 0 write whose count disagrees with its size.
        let (mut qemu, _krate, t) = relay(&dev);
        qemu.write_all(&posted_bf_write(1, 4)).unwrap();
        assert_eq!(
            t.join().unwrap().unwrap_err().kind(),
            io::ErrorKind::InvalidData
        );
    }
}
