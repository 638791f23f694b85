//! The link to a peer device. See [`super`].
//!
//! Two emulator processes (two devices in one guest) are joined by a UNIX stream socket
//! as a cable through a switch joins two ports: what one port sends to a LID that is not
//! its own arrives at the other. Frames are opaque (the packet layer, `packet.rs`,
//! encodes and decodes them); the wire only carries them, in order, each as a 4-byte
//! big-endian length and that many bytes, at most [`MAX_FRAME_BYTES`], once both
//! sides greeted each other with [`HELLO`].
//!
//! Who connects (start-up options, `main.rs`): one device listens on a path
//! (`--wire-listen PATH`), the other connects to it (`--wire-connect PATH`) and retries
//! every [`RETRY`] until it can; after the peer goes, the listener accepts again and the
//! connector retries, so either process may restart. The port's physical link follows the
//! connection (the control `link` request's semantics: PortState Down and the
//! port-change EQE when the peer goes, Active again when it comes back).
//!
//! Threads: per connection a reader (frames from the peer into the device's inbox, whose
//! firmware thread hands them to [`Firmware::wire_deliver`]) and a writer (the bounded send
//! queue [`Firmware::wire_send`] fills without blocking). The reader blocks while the
//! device's inbox holds too many frames, so a slow receiver backs up into the sender's
//! queue, whose overflow is counted, never into unbounded memory.

use crate::fw::{Env, Firmware};
use serde_json::{json, Value};
use std::collections::VecDeque;
use std::io::{ErrorKind, Read, Write};
use std::net::Shutdown;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

/// Largest frame the wire carries: 16 MiB of payload plus 4 KiB of headers. Ours: a
/// bound on what one length prefix may make the receiver allocate; the packet layer
/// sends longer messages in pieces. A larger prefix from the peer ends the connection.
pub const MAX_FRAME_BYTES: usize = (16 << 20) + 4096;

/// Frames queued for the peer before [`Firmware::wire_send`] drops (ours; a switch port's
/// buffer is finite too, and RC recovers a drop by its transport retry).
pub const TX_QUEUE_FRAMES: usize = 256;

/// Frames from the peer waiting in the device inbox before the reader stops reading
/// (ours; the peer's send queue then fills and drops).
pub const RX_INBOX_FRAMES: usize = 256;

/// How often the connector retries and an idle listener looks for a peer or a stop.
pub const RETRY: Duration = Duration::from_millis(50);

/// What each side sends first on a new connection; the link is up once both have read
/// the other's (so a connect that only reached the listener's backlog is not a link).
pub const HELLO: [u8; 8] = *b"MLX5WIR1";

/// Where the wire's socket is (start-up option).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WireEndpoint {
    /// `--wire-listen PATH`: bind PATH (replacing a stale socket file) and accept the peer.
    Listen(PathBuf),
    /// `--wire-connect PATH`: connect to PATH, retrying until the peer listens.
    Connect(PathBuf),
}

/// What the wire hands to its device (implemented by `device::Device`).
pub trait WireSink: Send + Sync {
    /// A frame from the peer, in arrival order. May block while the device's inbox is
    /// full; returns false when the device stops.
    fn frame(&self, frame: Vec<u8>) -> bool;
    /// The peer came (true) or went (false).
    fn link(&self, up: bool);
}

/// Why [`Firmware::wire_send`] did not queue a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WireDrop {
    /// No peer connected, no wire configured, or the port's link is down.
    Down,
    /// The send queue is full ([`TX_QUEUE_FRAMES`]).
    Full,
    /// Longer than [`MAX_FRAME_BYTES`].
    Oversize,
}

struct TxQueue {
    frames: VecDeque<Vec<u8>>,
    connected: bool,
}

/// The socket side of the wire, shared by the firmware (send queue) and the wire's
/// threads.
pub struct WireLink {
    tx: Mutex<TxQueue>,
    more: Condvar,
    stop: AtomicBool,
    /// Held down by the control `wire` request: no connection is made.
    hold: AtomicBool,
    /// The current connection, so [`WireLink::stop`] can end it.
    conn: Mutex<Option<UnixStream>>,
    /// Frames and bytes written to the socket.
    written_frames: AtomicU64,
    written_bytes: AtomicU64,
    /// Frames queued but not written when the peer went.
    lost_on_disconnect: AtomicU64,
    /// Connections made.
    connects: AtomicU64,
    /// Connections ended because the peer sent a length beyond [`MAX_FRAME_BYTES`].
    bad_lengths: AtomicU64,
    /// Connections refused because the peer's greeting was not [`HELLO`].
    bad_hellos: AtomicU64,
}

impl std::fmt::Debug for WireLink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WireLink")
            .field("connected", &self.connected())
            .finish_non_exhaustive()
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl WireLink {
    /// A link with no connection yet.
    pub fn new() -> Arc<Self> {
        Arc::new(WireLink {
            tx: Mutex::new(TxQueue {
                frames: VecDeque::new(),
                connected: false,
            }),
            more: Condvar::new(),
            stop: AtomicBool::new(false),
            hold: AtomicBool::new(false),
            conn: Mutex::new(None),
            written_frames: AtomicU64::new(0),
            written_bytes: AtomicU64::new(0),
            lost_on_disconnect: AtomicU64::new(0),
            connects: AtomicU64::new(0),
            bad_lengths: AtomicU64::new(0),
            bad_hellos: AtomicU64::new(0),
        })
    }

    /// Whether a peer is connected now.
    pub fn connected(&self) -> bool {
        lock(&self.tx).connected
    }

    /// Queues `frame` for the peer without blocking.
    pub fn try_send(&self, frame: Vec<u8>) -> Result<(), WireDrop> {
        if frame.len() > MAX_FRAME_BYTES {
            return Err(WireDrop::Oversize);
        }
        let mut q = lock(&self.tx);
        if !q.connected {
            return Err(WireDrop::Down);
        }
        if q.frames.len() >= TX_QUEUE_FRAMES {
            return Err(WireDrop::Full);
        }
        q.frames.push_back(frame);
        drop(q);
        self.more.notify_one();
        Ok(())
    }

    /// Starts the wire at `endpoint`: binds at once for [`WireEndpoint::Listen`] (an
    /// error if it cannot), then serves connections on a thread until [`WireLink::stop`].
    pub fn start(
        self: &Arc<Self>,
        endpoint: &WireEndpoint,
        sink: Arc<dyn WireSink>,
    ) -> std::io::Result<JoinHandle<()>> {
        let link = Arc::clone(self);
        let spawn = |f: Box<dyn FnOnce() + Send>| {
            std::thread::Builder::new()
                .name("mlx5-emu-wire".into())
                .spawn(f)
        };
        match endpoint {
            WireEndpoint::Listen(path) => {
                // A socket file nobody answers on is stale (a previous run).
                if UnixStream::connect(path).is_err() {
                    let _ = std::fs::remove_file(path);
                }
                let listener = UnixListener::bind(path)?;
                listener.set_nonblocking(true)?;
                spawn(Box::new(move || link.serve_listener(&listener, &*sink)))
            }
            WireEndpoint::Connect(path) => {
                let path = path.clone();
                spawn(Box::new(move || link.serve_connector(&path, &*sink)))
            }
        }
    }

    /// Serves one already connected stream (tests: a socket pair), no reconnection.
    pub fn attach(
        self: &Arc<Self>,
        stream: UnixStream,
        sink: Arc<dyn WireSink>,
    ) -> std::io::Result<JoinHandle<()>> {
        let link = Arc::clone(self);
        std::thread::Builder::new()
            .name("mlx5-emu-wire".into())
            .spawn(move || link.run_connection(stream, &*sink))
    }

    /// Ends the current connection (the peer sees it go) and every wire thread.
    pub fn stop(&self) {
        self.stop.store(true, Ordering::Release);
        self.drop_connection();
    }

    /// Ends the current connection only; a listener accepts again, a connector retries.
    pub fn drop_connection(&self) {
        if let Some(s) = lock(&self.conn).as_ref() {
            let _ = s.shutdown(Shutdown::Both);
        }
        self.more.notify_all();
    }

    /// Holds the link down (`false`: the current connection ends and no other is made,
    /// the peer sees the link go) or lets it come up again (`true`).
    pub fn set_connectable(&self, on: bool) {
        self.hold.store(!on, Ordering::Release);
        if !on {
            self.drop_connection();
        }
    }

    /// Whether the control `wire` request holds the link down.
    pub fn held(&self) -> bool {
        self.hold.load(Ordering::Acquire)
    }

    fn stopping(&self) -> bool {
        self.stop.load(Ordering::Acquire)
    }

    fn serve_listener(&self, listener: &UnixListener, sink: &dyn WireSink) {
        while !self.stopping() {
            if self.held() {
                std::thread::sleep(RETRY);
                continue;
            }
            match listener.accept() {
                Ok((s, _)) => {
                    if s.set_nonblocking(false).is_ok() {
                        self.run_connection(s, sink);
                    }
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => std::thread::sleep(RETRY),
                Err(e) => {
                    log::warn!("wire: accept: {e}");
                    std::thread::sleep(RETRY);
                }
            }
        }
    }

    fn serve_connector(&self, path: &std::path::Path, sink: &dyn WireSink) {
        while !self.stopping() {
            if self.held() {
                std::thread::sleep(RETRY);
                continue;
            }
            match UnixStream::connect(path) {
                Ok(s) => self.run_connection(s, sink),
                Err(_) => std::thread::sleep(RETRY),
            }
        }
    }

    /// One connection: link up, a writer thread, frames read until the peer goes (or a
    /// stop), then link down.
    fn run_connection(&self, stream: UnixStream, sink: &dyn WireSink) {
        let (Ok(writer), Ok(handle)) = (stream.try_clone(), stream.try_clone()) else {
            return;
        };
        *lock(&self.conn) = Some(handle);
        if self.stopping() || self.held() || !self.greet(&stream) {
            let _ = stream.shutdown(Shutdown::Both);
            *lock(&self.conn) = None;
            return;
        }
        {
            let mut q = lock(&self.tx);
            q.frames.clear();
            q.connected = true;
        }
        self.connects.fetch_add(1, Ordering::Relaxed);
        sink.link(true);
        let writer = std::thread::scope(|scope| {
            let w = scope.spawn(|| self.write_frames(writer));
            self.read_frames(&stream, sink);
            {
                let mut q = lock(&self.tx);
                q.connected = false;
                let lost = q.frames.len() as u64;
                q.frames.clear();
                self.lost_on_disconnect.fetch_add(lost, Ordering::Relaxed);
            }
            let _ = stream.shutdown(Shutdown::Both);
            self.more.notify_all();
            w.join()
        });
        if writer.is_err() {
            log::warn!("wire: the writer thread panicked");
        }
        *lock(&self.conn) = None;
        sink.link(false);
    }

    /// Sends [`HELLO`] and reads the peer's.
    fn greet(&self, mut stream: &UnixStream) -> bool {
        let mut hello = [0u8; 8];
        if stream
            .write_all(&HELLO)
            .and_then(|()| stream.read_exact(&mut hello))
            .is_err()
        {
            return false;
        }
        if hello != HELLO {
            self.bad_hellos.fetch_add(1, Ordering::Relaxed);
            log::warn!("wire: the peer is not an mlx5-emu wire (greeting {hello:02x?})");
            return false;
        }
        true
    }

    fn read_frames(&self, mut stream: &UnixStream, sink: &dyn WireSink) {
        loop {
            let mut len = [0u8; 4];
            if stream.read_exact(&mut len).is_err() {
                return;
            }
            let n = u32::from_be_bytes(len) as usize;
            if n > MAX_FRAME_BYTES {
                self.bad_lengths.fetch_add(1, Ordering::Relaxed);
                log::warn!("wire: the peer sent a frame of {n} bytes (limit {MAX_FRAME_BYTES}); dropping the connection");
                return;
            }
            let mut frame = vec![0u8; n];
            if stream.read_exact(&mut frame).is_err() || !sink.frame(frame) {
                return;
            }
        }
    }

    fn write_frames(&self, mut stream: UnixStream) {
        loop {
            let frame = {
                let mut q = lock(&self.tx);
                loop {
                    if !q.connected || self.stopping() {
                        return;
                    }
                    if let Some(f) = q.frames.pop_front() {
                        break f;
                    }
                    q = self.more.wait(q).unwrap_or_else(|e| e.into_inner());
                }
            };
            let len = (frame.len() as u32).to_be_bytes();
            if stream
                .write_all(&len)
                .and_then(|()| stream.write_all(&frame))
                .is_err()
            {
                // The reader sees the connection end and takes the link down.
                let _ = stream.shutdown(Shutdown::Both);
                return;
            }
            self.written_frames.fetch_add(1, Ordering::Relaxed);
            self.written_bytes
                .fetch_add(frame.len() as u64, Ordering::Relaxed);
        }
    }
}

/// The wire's state and statistics (`stats` → `dp` → `wire`).
#[derive(Clone, Debug, Default)]
pub struct WireState {
    /// The socket side, when the device has a wire (`--wire-*`).
    pub link: Option<Arc<WireLink>>,
    /// Whether the peer is connected, as the firmware last heard.
    pub link_up: bool,
    /// Times the peer came and went.
    pub link_ups: u64,
    /// Times the peer went.
    pub link_downs: u64,
    /// Frames and bytes queued for the peer.
    pub frames_out: u64,
    /// Bytes queued for the peer.
    pub bytes_out: u64,
    /// Frames and bytes received from the peer and handed to the packet layer.
    pub frames_in: u64,
    /// Bytes received from the peer.
    pub bytes_in: u64,
    /// Frames not sent: no peer / port down, queue full, too long.
    pub dropped_down: u64,
    /// Frames not sent because the queue was full.
    pub dropped_full: u64,
    /// Frames not sent because they were too long.
    pub dropped_oversize: u64,
    /// Frames received while the port's link was down (not delivered).
    pub dropped_rx_down: u64,
    /// Test tap: when set, a copy of every delivered frame (oldest dropped past the
    /// limit), see [`Firmware::wire_tap`].
    pub tap: Option<(usize, VecDeque<Vec<u8>>)>,
}

impl WireState {
    /// The `stats` → `dp` → `wire` object.
    pub fn report(&self) -> Value {
        let l = self.link.as_deref();
        let ld = |f: fn(&WireLink) -> &AtomicU64| l.map_or(0, |l| f(l).load(Ordering::Relaxed));
        json!({
            "configured": l.is_some(),
            "link_up": self.link_up,
            "link_ups": self.link_ups,
            "link_downs": self.link_downs,
            "frames_out": self.frames_out,
            "bytes_out": self.bytes_out,
            "frames_written": ld(|l| &l.written_frames),
            "bytes_written": ld(|l| &l.written_bytes),
            "frames_in": self.frames_in,
            "bytes_in": self.bytes_in,
            "dropped": {
                "down": self.dropped_down,
                "full": self.dropped_full,
                "oversize": self.dropped_oversize,
                "rx_down": self.dropped_rx_down,
                "lost_on_disconnect": ld(|l| &l.lost_on_disconnect),
            },
            "connects": ld(|l| &l.connects),
            "bad_lengths": ld(|l| &l.bad_lengths),
            "bad_hellos": ld(|l| &l.bad_hellos),
            "held": l.is_some_and(WireLink::held),
        })
    }
}

impl Firmware {
    /// Sends `frame` to the peer device (the packet layer's `port_deliver` for a DLID
    /// that is not this port's). Never blocks: a frame that cannot be queued is counted
    /// and dropped, as a switch drops what it cannot buffer.
    pub fn wire_send(&mut self, frame: Vec<u8>) -> Result<(), WireDrop> {
        let w = &mut self.dp.wire;
        let len = frame.len() as u64;
        let res = if frame.len() > MAX_FRAME_BYTES {
            Err(WireDrop::Oversize)
        } else if !self.port_link_up {
            Err(WireDrop::Down)
        } else {
            match &w.link {
                Some(l) => l.try_send(frame),
                None => Err(WireDrop::Down),
            }
        };
        match res {
            Ok(()) => {
                w.frames_out += 1;
                w.bytes_out += len;
            }
            Err(WireDrop::Down) => w.dropped_down += 1,
            Err(WireDrop::Full) => w.dropped_full += 1,
            Err(WireDrop::Oversize) => w.dropped_oversize += 1,
        }
        res
    }

    /// A frame from the peer (firmware thread, in arrival order): counted and handed to
    /// the packet layer, unless the port's link is down.
    pub fn wire_deliver(&mut self, env: &Env<'_>, frame: Vec<u8>) {
        let w = &mut self.dp.wire;
        if !self.port_link_up {
            w.dropped_rx_down += 1;
            return;
        }
        w.frames_in += 1;
        w.bytes_in += frame.len() as u64;
        if let Some((limit, tap)) = &mut w.tap {
            if tap.len() == *limit {
                tap.pop_front();
            }
            tap.push_back(frame.clone());
        }
        self.receive_frame(env, &frame);
    }

    /// The peer came or went: the port's physical link follows, with the port-change
    /// event of the change (as the control `link` request).
    pub fn wire_link(&mut self, env: &Env<'_>, up: bool) {
        let w = &mut self.dp.wire;
        if up {
            w.link_ups += 1;
        } else {
            w.link_downs += 1;
        }
        w.link_up = up;
        let port = self.ib_port.clone();
        self.set_ib_port(env, port, Some(up), false);
    }

    /// Test tap: keep a copy of the last `limit` delivered frames (0 = off).
    pub fn wire_tap(&mut self, limit: usize) {
        self.dp.wire.tap = (limit > 0).then(|| (limit, VecDeque::new()));
    }

    /// Takes the frames the tap kept, oldest first.
    pub fn wire_tapped(&mut self) -> Vec<Vec<u8>> {
        match &mut self.dp.wire.tap {
            Some((_, t)) => t.drain(..).collect(),
            None => Vec::new(),
        }
    }
}
