//! Every `unsafe` block of sear: perf_event_open, its ioctls, the ring
//! buffers, fork/exec of the command, signals, poll. Each function is a thin,
//! checked wrapper that returns `io::Result`.

use std::ffi::{CString, OsString};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::sync::atomic::{AtomicI32, AtomicU64, Ordering};

use perf_data::{Endian, EventAttr};
use perf_event_open_sys as sys;

fn cvt(r: libc::c_int) -> io::Result<libc::c_int> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

/// Opens one event. The attr is passed exactly as it will be written to the
/// file (encoded by perf-data), so what is recorded is what was asked for.
pub fn perf_event_open(
    attr: &EventAttr,
    pid: i32,
    cpu: i32,
    group_fd: RawFd,
) -> io::Result<OwnedFd> {
    perf_event_open_flags(attr, pid, cpu, group_fd, 0)
}

/// [`perf_event_open`] with more flags (`PERF_FLAG_PID_CGROUP`: `pid` is
/// a cgroup directory's descriptor).
pub fn perf_event_open_flags(
    attr: &EventAttr,
    pid: i32,
    cpu: i32,
    group_fd: RawFd,
    flags: libc::c_ulong,
) -> io::Result<OwnedFd> {
    let bytes = attr.encode(Endian::native());
    // SAFETY: perf_event_attr is plain old data; zeroed is a valid value.
    let mut raw: sys::bindings::perf_event_attr = unsafe { std::mem::zeroed() };
    let n = bytes
        .len()
        .min(std::mem::size_of::<sys::bindings::perf_event_attr>());
    // SAFETY: copies at most size_of(raw) bytes into raw, from a Vec of at least n bytes.
    unsafe {
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), (&mut raw as *mut _) as *mut u8, n);
    }
    // The size field must not claim more than the struct we pass.
    raw.size = n as u32;
    // SAFETY: raw is a valid, initialised attr that outlives the call.
    let fd = unsafe {
        sys::perf_event_open(
            &mut raw,
            pid,
            cpu,
            group_fd,
            sys::bindings::PERF_FLAG_FD_CLOEXEC as libc::c_ulong | flags,
        )
    };
    let fd = cvt(fd)?;
    // SAFETY: the kernel just gave us this descriptor; nobody else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// The id the kernel gave an event (what samples and records carry).
pub fn event_id(fd: &OwnedFd) -> io::Result<u64> {
    let mut id = 0u64;
    // SAFETY: ID writes one u64 to the pointer, which is valid for the call.
    cvt(unsafe { sys::ioctls::ID(fd.as_raw_fd(), &mut id) })?;
    Ok(id)
}

/// Sets a tracepoint's filter (the kernel's filter language).
pub fn set_filter(fd: &OwnedFd, filter: &str) -> io::Result<()> {
    let c =
        std::ffi::CString::new(filter).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))?;
    // SAFETY: SET_FILTER reads the NUL-terminated string, valid for the call.
    cvt(unsafe { sys::ioctls::SET_FILTER(fd.as_raw_fd(), c.as_ptr() as *mut libc::c_char) })?;
    Ok(())
}

/// Sends `fd`'s records into the ring buffer of `target` (same CPU).
pub fn set_output(fd: &OwnedFd, target: &OwnedFd) -> io::Result<()> {
    // SAFETY: plain ioctl on two descriptors we own.
    cvt(unsafe { sys::ioctls::SET_OUTPUT(fd.as_raw_fd(), target.as_raw_fd()) })?;
    Ok(())
}

/// Reads a counting event opened with read_format TOTAL_TIME_ENABLED |
/// TOTAL_TIME_RUNNING: (value, time enabled, time running).
pub fn read_count(fd: &OwnedFd) -> io::Result<[u64; 3]> {
    let mut v = [0u64; 3];
    // SAFETY: reads at most 24 bytes into a valid 24-byte buffer.
    let r = unsafe { libc::read(fd.as_raw_fd(), v.as_mut_ptr().cast(), 24) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    if r != 24 {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            format!("short read of a counter: {r} bytes"),
        ));
    }
    Ok(v)
}

pub fn enable(fd: &OwnedFd) -> io::Result<()> {
    // SAFETY: plain ioctl on a descriptor we own.
    cvt(unsafe { sys::ioctls::ENABLE(fd.as_raw_fd(), 0) })?;
    Ok(())
}

/// ENABLE on a borrowed descriptor.
pub fn enable_raw(fd: RawFd) -> io::Result<()> {
    // SAFETY: plain ioctl; a closed descriptor gives EBADF.
    cvt(unsafe { sys::ioctls::ENABLE(fd, 0) })?;
    Ok(())
}

/// DISABLE on a borrowed descriptor.
pub fn disable_raw(fd: RawFd) -> io::Result<()> {
    // SAFETY: plain ioctl; a closed descriptor gives EBADF.
    cvt(unsafe { sys::ioctls::DISABLE(fd, 0) })?;
    Ok(())
}

/// Runs `op` on each (cpu, descriptor), from that CPU where one is given
/// (this thread moved there, as perf's evlist affinity does): the kernel
/// then starts or stops a per-CPU counter locally, at one moment for all
/// counters of the CPU, instead of by cross-CPU calls one by one (which
/// for cgroup counters leaves their times inconsistent). The thread's
/// CPU mask is restored after.
pub fn on_their_cpus(fds: &[(i32, RawFd)], op: fn(RawFd) -> io::Result<()>) -> io::Result<()> {
    // SAFETY: cpu_set_t is plain data; sched_getaffinity fills it.
    let mut old: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    let size = std::mem::size_of::<libc::cpu_set_t>();
    // SAFETY: `old` is valid for `size` bytes.
    let have_old = unsafe { libc::sched_getaffinity(0, size, &mut old) } == 0;
    let mut cpus: Vec<i32> = fds.iter().map(|&(c, _)| c).collect();
    cpus.sort_unstable();
    cpus.dedup();
    let mut result = Ok(());
    for cpu in cpus {
        if cpu >= 0 && have_old && (cpu as usize) < libc::CPU_SETSIZE as usize {
            // SAFETY: as above; CPU_SET stays within the set's bits.
            unsafe {
                let mut one: libc::cpu_set_t = std::mem::zeroed();
                libc::CPU_SET(cpu as usize, &mut one);
                libc::sched_setaffinity(0, size, &one);
            }
        }
        for &(_, fd) in fds.iter().filter(|&&(c, _)| c == cpu) {
            if let Err(e) = op(fd) {
                result = result.and(Err(e));
            }
        }
    }
    if have_old {
        // SAFETY: `old` was filled by sched_getaffinity.
        unsafe { libc::sched_setaffinity(0, size, &old) };
    }
    result
}

pub fn disable(fd: &OwnedFd) -> io::Result<()> {
    // SAFETY: plain ioctl on a descriptor we own.
    cvt(unsafe { sys::ioctls::DISABLE(fd.as_raw_fd(), 0) })?;
    Ok(())
}

/// Makes glibc's malloc return big freed buffers to the kernel at once: a
/// fixed mmap threshold (glibc's initial 128 KiB) instead of the default
/// one, which rises to the largest mmapped buffer freed so far, after which
/// such buffers come from the heap and stay resident when freed. Growing
/// hash tables and read buffers free many of those; on a 283k-sample report
/// this keeps peak RSS ~16 MB lower and costs no measurable time.
pub fn return_freed_memory() {
    // SAFETY: mallopt only sets a tuning parameter; it is called before any
    // other thread starts.
    #[cfg(target_env = "gnu")]
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 128 << 10);
    }
}

pub fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p > 0 {
        p as usize
    } else {
        4096
    }
}

/// One mmapped ring buffer: a control page, then 2^n data pages.
pub struct Ring {
    map: memmap2::MmapRaw,
    data_off: usize,
    data_size: usize,
    /// Bytes copied out so far (perf's bytes_transferred).
    pub bytes: u64,
    /// An overwritten ring's head at its last read: a later read stops
    /// there (what is older was read then).
    prev_head: u64,
}

/// Offsets of data_head and data_tail in `struct perf_event_mmap_page`.
const DATA_HEAD: usize = 1024;
const DATA_TAIL: usize = 1032;

impl Ring {
    /// Maps the ring of `fd`; `overwrite` maps it read-only, which makes
    /// the kernel write over the oldest records (for `write_backward`
    /// events, as perf maps them).
    pub fn new(fd: &OwnedFd, data_pages: usize, overwrite: bool) -> io::Result<Ring> {
        let page = page_size();
        let len = page * (1 + data_pages);
        let mut o = memmap2::MmapOptions::new();
        o.len(len);
        let map = if overwrite {
            o.map_raw_read_only(fd.as_raw_fd())?
        } else {
            o.map_raw(fd.as_raw_fd())?
        };
        Ok(Ring {
            map,
            data_off: page,
            data_size: page * data_pages,
            bytes: 0,
            prev_head: 0,
        })
    }

    fn head(&self) -> &AtomicU64 {
        // SAFETY: the control page is at least 1040 bytes, data_head is
        // 8-aligned, and the kernel updates it atomically.
        unsafe { &*(self.map.as_ptr().add(DATA_HEAD) as *const AtomicU64) }
    }

    fn tail(&self) -> &AtomicU64 {
        // SAFETY: as for head; only we write data_tail.
        unsafe { &*(self.map.as_ptr().add(DATA_TAIL) as *const AtomicU64) }
    }

    /// Hands every complete record in the buffer to `f` (a record that wraps
    /// around the end is reassembled in `scratch`), then frees the space.
    /// Stops early, freeing what was handed out, when `f` fails.
    pub fn drain<E>(
        &mut self,
        scratch: &mut Vec<u8>,
        mut f: impl FnMut(&[u8]) -> Result<(), E>,
    ) -> Result<usize, E> {
        let head = self.head().load(Ordering::Acquire);
        let mut tail = self.tail().load(Ordering::Relaxed);
        let size = self.data_size as u64;
        // SAFETY: the data area lies inside the mapping.
        let data = unsafe {
            std::slice::from_raw_parts(self.map.as_ptr().add(self.data_off), self.data_size)
        };
        let mut n = 0;
        let mut result = Ok(());
        while tail < head {
            let off = (tail % size) as usize;
            // Records are 8-aligned and the area is a multiple of 8, so a
            // header never wraps.
            let Some(h) = data.get(off..off + 8) else {
                tail = head;
                break;
            };
            let rsize = u16::from_ne_bytes([h[6], h[7]]) as usize;
            if rsize < 8 || rsize as u64 > head - tail {
                // A corrupt buffer: drop the rest rather than loop forever.
                log::warn!("ring buffer: a record of size {rsize} at {tail}; dropping the rest of this buffer");
                tail = head;
                break;
            }
            let r = if off + rsize <= data.len() {
                f(&data[off..off + rsize])
            } else {
                scratch.clear();
                scratch.extend_from_slice(&data[off..]);
                scratch.extend_from_slice(&data[..rsize - (data.len() - off)]);
                f(scratch)
            };
            tail += rsize as u64;
            self.bytes += rsize as u64;
            n += 1;
            if let Err(e) = r {
                result = Err(e);
                break;
            }
        }
        self.tail().store(tail, Ordering::Release);
        result.map(|_| n)
    }
}

impl Ring {
    /// An overwritten (backward) ring's records, newest first: from the
    /// head forward, as long as whole records fit in one buffer's length
    /// (the oldest, partly overwritten, is left out), as perf's
    /// overwrite_rb_find_range reads them, and only what was written since
    /// the last read. Pause the ring's output first ([`pause_output`]).
    pub fn read_backward(&mut self, mut f: impl FnMut(&[u8])) -> usize {
        let head = self.head().load(Ordering::Acquire);
        // (The head runs down from 0: what lies between it and the head
        // of the last read is new.)
        let ring = self.data_size as u64;
        let limit = ring.min(self.prev_head.wrapping_sub(head));
        self.prev_head = head;
        // SAFETY: the data area lies inside the mapping.
        let data = unsafe {
            std::slice::from_raw_parts(self.map.as_ptr().add(self.data_off), self.data_size)
        };
        let mut scratch = Vec::new();
        let (mut pos, mut n) = (0u64, 0usize);
        while pos + 8 <= limit {
            let off = (head.wrapping_add(pos) % ring) as usize;
            let Some(h) = data.get(off..off + 8) else {
                break;
            };
            let rsize = u16::from_ne_bytes([h[6], h[7]]) as u64;
            if rsize < 8 || pos + rsize > limit {
                break;
            }
            let r = rsize as usize;
            if off + r <= data.len() {
                f(&data[off..off + r]);
            } else {
                scratch.clear();
                scratch.extend_from_slice(&data[off..]);
                scratch.extend_from_slice(&data[..r - (data.len() - off)]);
                f(&scratch);
            }
            pos += rsize;
            self.bytes += rsize;
            n += 1;
        }
        n
    }
}

/// Stops (`true`) or restarts the kernel's writing into an event's ring
/// (PERF_EVENT_IOC_PAUSE_OUTPUT), for reading an overwritten ring.
pub fn pause_output(fd: RawFd, pause: bool) -> io::Result<()> {
    // SAFETY: plain ioctl; a closed descriptor gives EBADF.
    cvt(unsafe { sys::ioctls::PAUSE_OUTPUT(fd, u32::from(pause) as _) })?;
    Ok(())
}

/// What [`poll`] saw.
#[derive(Debug, Default)]
pub struct Polled {
    /// How many fds were readable (a ring buffer past its wakeup
    /// watermark) or hung up.
    pub ready: usize,
    /// The fds that hung up (their task exited) or failed: they report so
    /// at once from then on, so they are to be polled no more.
    pub hung: Vec<RawFd>,
}

/// Waits until one of `fds` is readable or hung up, a signal arrives, or
/// `timeout_ms` pass.
pub fn poll(fds: &[RawFd], timeout_ms: i32) -> io::Result<Polled> {
    let mut p: Vec<libc::pollfd> = fds
        .iter()
        .map(|&fd| libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        })
        .collect();
    // SAFETY: p is a valid array of p.len() pollfds.
    let r = unsafe { libc::poll(p.as_mut_ptr(), p.len() as libc::nfds_t, timeout_ms) };
    if r < 0 {
        let e = io::Error::last_os_error();
        if e.kind() == io::ErrorKind::Interrupted {
            return Ok(Polled::default());
        }
        return Err(e);
    }
    Ok(Polled {
        ready: p.iter().filter(|x| x.revents != 0).count(),
        hung: p
            .iter()
            .filter(|x| x.revents & (libc::POLLHUP | libc::POLLERR | libc::POLLNVAL) != 0)
            .map(|x| x.fd)
            .collect(),
    })
}

/// The command, forked and waiting for [`Child::go`] before it execs.
pub struct Child {
    pub pid: i32,
    go: Option<OwnedFd>,
    err: OwnedFd,
    reaped: Option<i32>,
}

fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: fds is a valid 2-int array.
    cvt(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) })?;
    // SAFETY: the kernel just created both descriptors.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

impl Child {
    /// Forks; the child waits for the go signal on a pipe, then execs `argv`
    /// (looked up in PATH). Events opened for its pid before `go` see the
    /// exec, so enable_on_exec starts sampling exactly at the command.
    pub fn spawn_stopped(argv: &[OsString]) -> io::Result<Child> {
        let cargs: Vec<CString> = argv
            .iter()
            .map(|a| CString::new(a.as_bytes()))
            .collect::<Result<_, _>>()
            .map_err(|_| {
                io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "an argument contains a NUL byte",
                )
            })?;
        if cargs.is_empty() {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "no command"));
        }
        let mut ptrs: Vec<*const libc::c_char> = cargs.iter().map(|c| c.as_ptr()).collect();
        ptrs.push(std::ptr::null());
        let (go_r, go_w) = pipe()?;
        let (err_r, err_w) = pipe()?;
        let (go_w_raw, err_r_raw) = (go_w.as_raw_fd(), err_r.as_raw_fd());
        // SAFETY: between fork and exec the child only makes async-signal-safe
        // calls (read, write, execvp, _exit) on memory prepared before the fork.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            return Err(io::Error::last_os_error());
        }
        if pid == 0 {
            // SAFETY: see above; the child never returns from this block.
            unsafe {
                // The child's copies of the parent's ends: without closing
                // them, a parent that goes away would never be noticed.
                libc::close(go_w_raw);
                libc::close(err_r_raw);
                let mut b = [0u8; 1];
                loop {
                    let r = libc::read(go_r.as_raw_fd(), b.as_mut_ptr().cast(), 1);
                    if r == 1 {
                        break;
                    }
                    if r == 0 || *libc::__errno_location() != libc::EINTR {
                        // The recorder went away: do not run unobserved.
                        libc::_exit(127);
                    }
                }
                libc::execvp(ptrs[0], ptrs.as_ptr());
                let errno = *libc::__errno_location();
                let eb = errno.to_ne_bytes();
                libc::write(err_w.as_raw_fd(), eb.as_ptr().cast(), 4);
                libc::_exit(127);
            }
        }
        drop(go_r);
        drop(err_w);
        Ok(Child {
            pid,
            go: Some(go_w),
            err: err_r,
            reaped: None,
        })
    }

    /// Lets the child exec. Returns the exec error if it failed (the child
    /// has then exited and is reaped).
    pub fn go(&mut self) -> io::Result<()> {
        if let Some(w) = self.go.take() {
            let b = [1u8];
            // SAFETY: writes one byte from a valid buffer.
            let r = unsafe { libc::write(w.as_raw_fd(), b.as_ptr().cast(), 1) };
            if r != 1 {
                return Err(io::Error::last_os_error());
            }
        }
        let mut eb = [0u8; 4];
        let mut got = 0;
        while got < 4 {
            // SAFETY: reads into the rest of a valid 4-byte buffer.
            let r =
                unsafe { libc::read(self.err.as_raw_fd(), eb[got..].as_mut_ptr().cast(), 4 - got) };
            if r < 0 {
                if io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                break;
            }
            if r == 0 {
                break;
            }
            got += r as usize;
        }
        if got == 4 {
            let _ = self.wait();
            return Err(io::Error::from_raw_os_error(i32::from_ne_bytes(eb)));
        }
        Ok(())
    }

    /// The exit status if the child has ended (reaps it).
    pub fn try_wait(&mut self) -> Option<i32> {
        if self.reaped.is_none() {
            let mut st = 0;
            // SAFETY: st is a valid int to write the status to.
            let r = unsafe { libc::waitpid(self.pid, &mut st, libc::WNOHANG) };
            if r == self.pid {
                self.reaped = Some(st);
            }
        }
        self.reaped
    }

    /// Waits for the child to end; its raw wait status.
    pub fn wait(&mut self) -> io::Result<i32> {
        while self.reaped.is_none() {
            let mut st = 0;
            // SAFETY: st is a valid int to write the status to.
            let r = unsafe { libc::waitpid(self.pid, &mut st, 0) };
            if r == self.pid {
                self.reaped = Some(st);
            } else if r < 0 {
                let e = io::Error::last_os_error();
                if e.kind() != io::ErrorKind::Interrupted {
                    return Err(e);
                }
            }
        }
        Ok(self.reaped.unwrap_or(0))
    }

    /// Waits for the child to end (wait4): its raw wait status and the
    /// (user, system) CPU seconds of it and its reaped children.
    pub fn wait_rusage(&mut self) -> io::Result<(i32, f64, f64)> {
        loop {
            if let Some(st) = self.reaped {
                return Ok((st, 0.0, 0.0));
            }
            let mut st = 0;
            // SAFETY: rusage is plain old data; zeroed is a valid value.
            let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
            // SAFETY: st and ru are valid for writes for the call.
            let r = unsafe { libc::wait4(self.pid, &mut st, 0, &mut ru) };
            if r == self.pid {
                self.reaped = Some(st);
                let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
                return Ok((st, secs(ru.ru_utime), secs(ru.ru_stime)));
            } else if r < 0 {
                let e = io::Error::last_os_error();
                if e.kind() != io::ErrorKind::Interrupted {
                    return Err(e);
                }
            }
        }
    }

    /// Like `wait_rusage` without blocking: None while the child runs.
    pub fn try_wait_rusage(&mut self) -> io::Result<Option<(i32, f64, f64)>> {
        if let Some(st) = self.reaped {
            return Ok(Some((st, 0.0, 0.0)));
        }
        let mut st = 0;
        // SAFETY: rusage is plain old data; zeroed is a valid value.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: st and ru are valid for writes for the call.
        let r = unsafe { libc::wait4(self.pid, &mut st, libc::WNOHANG, &mut ru) };
        if r == self.pid {
            self.reaped = Some(st);
            let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
            return Ok(Some((st, secs(ru.ru_utime), secs(ru.ru_stime))));
        }
        if r < 0 {
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
        Ok(None)
    }

    pub fn kill(&self, sig: i32) {
        if self.reaped.is_none() {
            // SAFETY: signals our own unreaped child (its pid cannot be reused yet).
            unsafe {
                libc::kill(self.pid, sig);
            }
        }
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        // A child that never got its go signal exits when the pipe closes;
        // reap it so no zombie is left behind.
        if self.reaped.is_none() && self.go.is_some() {
            self.go = None;
            let _ = self.wait();
        }
    }
}

/// The exit status a shell reports for a raw wait status.
/// The C library's description of signal `sig` (`Terminated`), as
/// psignal(3) prints it.
pub fn signal_text(sig: i32) -> String {
    // SAFETY: strsignal returns a pointer to a NUL-terminated string that
    // stays valid until the next call; it is copied at once.
    let p = unsafe { libc::strsignal(sig) };
    if p.is_null() {
        return format!("Unknown signal {sig}");
    }
    // SAFETY: non-null, NUL-terminated (above).
    unsafe { std::ffi::CStr::from_ptr(p) }
        .to_string_lossy()
        .into_owned()
}

/// The signal that ended a process, from its wait status.
pub fn term_signal(st: i32) -> Option<i32> {
    libc::WIFSIGNALED(st).then(|| libc::WTERMSIG(st))
}

pub fn shell_status(st: i32) -> u8 {
    if libc::WIFEXITED(st) {
        libc::WEXITSTATUS(st) as u8
    } else if libc::WIFSIGNALED(st) {
        (128 + libc::WTERMSIG(st)) as u8
    } else {
        1
    }
}

/// Whether a process or thread exists (signal 0).
pub fn task_exists(pid: i32) -> bool {
    // SAFETY: signal 0 only checks for existence and permission.
    let r = unsafe { libc::kill(pid, 0) };
    r == 0 || io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

static STOP_SIGNAL: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_stop(sig: libc::c_int) {
    STOP_SIGNAL.store(sig, Ordering::SeqCst);
}

extern "C" fn on_child(_: libc::c_int) {}

/// An event per task and CPU adds up (`-p`/`-u` with many threads): the
/// soft limit of open files goes up to the hard one, as perf raises it.
pub fn raise_open_file_limit() {
    // SAFETY: getrlimit/setrlimit with a valid rlimit struct.
    unsafe {
        let mut r: libc::rlimit = std::mem::zeroed();
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) == 0 && r.rlim_cur < r.rlim_max {
            r.rlim_cur = r.rlim_max;
            let _ = libc::setrlimit(libc::RLIMIT_NOFILE, &r);
        }
    }
}

static SWITCH_SIGNAL: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

extern "C" fn on_switch(_: libc::c_int) {
    SWITCH_SIGNAL.store(true, Ordering::SeqCst);
}

/// `--switch-output=signal`: SIGUSR2 asks for a new output file.
pub fn install_switch_handler() -> io::Result<()> {
    SWITCH_SIGNAL.store(false, Ordering::SeqCst);
    set_handler(libc::SIGUSR2, on_switch as *const () as libc::sighandler_t)
}

/// Whether SIGUSR2 came since the last call.
pub fn take_switch_signal() -> bool {
    SWITCH_SIGNAL.swap(false, Ordering::SeqCst)
}

fn set_handler(sig: i32, handler: libc::sighandler_t) -> io::Result<()> {
    // SAFETY: sa is fully initialised; the handlers only store to an atomic.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = handler;
        // No SA_RESTART: poll returns at once with EINTR.
        sa.sa_flags = 0;
        libc::sigemptyset(&mut sa.sa_mask);
        cvt(libc::sigaction(sig, &sa, std::ptr::null_mut()))?;
    }
    Ok(())
}

/// SIGINT and SIGTERM ask the recording to stop; SIGCHLD wakes the poll.
pub fn install_signal_handlers() -> io::Result<()> {
    STOP_SIGNAL.store(0, Ordering::SeqCst);
    set_handler(libc::SIGINT, on_stop as *const () as libc::sighandler_t)?;
    set_handler(libc::SIGTERM, on_stop as *const () as libc::sighandler_t)?;
    set_handler(libc::SIGCHLD, on_child as *const () as libc::sighandler_t)
}

pub fn restore_signal_handlers() {
    for s in [libc::SIGINT, libc::SIGTERM, libc::SIGCHLD, libc::SIGUSR2] {
        let _ = set_handler(s, libc::SIG_DFL);
    }
}

/// Asks the recording to stop as SIGTERM would (a live view that ends).
pub fn request_stop() {
    STOP_SIGNAL.store(libc::SIGTERM, Ordering::SeqCst);
}

/// The signal that asked us to stop, if one did.
pub fn stop_signal() -> Option<i32> {
    match STOP_SIGNAL.load(Ordering::SeqCst) {
        0 => None,
        s => Some(s),
    }
}

/// The vdso of this process (the kernel maps the same one into every
/// process): its bytes, to read its build id.
pub fn own_vdso() -> Option<Vec<u8>> {
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    let line = maps.lines().find(|l| l.ends_with("[vdso]"))?;
    let range = line.split_whitespace().next()?;
    let (a, b) = range.split_once('-')?;
    let start = usize::from_str_radix(a, 16).ok()?;
    let end = usize::from_str_radix(b, 16).ok()?;
    if end <= start || end - start > (64 << 20) {
        return None;
    }
    // SAFETY: the range is mapped readable in this process for its lifetime
    // (the kernel never unmaps the vdso), as /proc/self/maps just said.
    let bytes = unsafe { std::slice::from_raw_parts(start as *const u8, end - start) };
    Some(bytes.to_vec())
}

/// `PERF_FLAG_PID_CGROUP`.
pub const FLAG_PID_CGROUP: libc::c_ulong = sys::bindings::PERF_FLAG_PID_CGROUP as libc::c_ulong;

/// Where perf looks for cgroups by name (`-G`): a cgroup v1 hierarchy
/// with the perf_event controller, else the cgroup2 one (perf's
/// cgroupfs_find_mountpoint).
pub fn cgroup_root() -> Option<std::path::PathBuf> {
    let mounts = std::fs::read_to_string("/proc/self/mounts").ok()?;
    let mut v2 = None;
    for l in mounts.lines() {
        let f: Vec<&str> = l.split_whitespace().collect();
        let [_, dir, kind, opts, ..] = f[..] else {
            continue;
        };
        if kind == "cgroup" && opts.split(',').any(|o| o == "perf_event") {
            return Some(dir.into());
        }
        if kind == "cgroup2" && v2.is_none() {
            v2 = Some(dir.into());
        }
    }
    v2
}

/// perf's mapping of `-G` names to events: a single name applies to every
/// event, else the names go to the events in order (an empty name, or
/// none left: no cgroup).
pub fn cgroup_of_events(names: &[String], n_events: usize) -> Vec<Option<String>> {
    (0..n_events)
        .map(|i| match names {
            [one] => Some(one.clone()),
            _ => names.get(i).filter(|n| !n.is_empty()).cloned(),
        })
        .collect()
}

/// The cgroups named in `cgroups` opened (each once) where perf looks for
/// them ([`cgroup_root`]), for `PERF_FLAG_PID_CGROUP`.
pub struct CgroupDirs(Vec<(String, std::fs::File)>);

impl CgroupDirs {
    pub fn open<'a>(names: impl IntoIterator<Item = &'a String>) -> Result<Self, String> {
        let mut dirs: Vec<(String, std::fs::File)> = Vec::new();
        for name in names {
            if dirs.iter().any(|(n, _)| n == name) {
                continue;
            }
            let root = cgroup_root().ok_or_else(|| {
                "no cgroup file system is mounted (cgroup2, or v1 with perf_event)".to_owned()
            })?;
            let path = root.join(name.trim_start_matches('/'));
            let dir = std::fs::File::open(&path)
                .map_err(|_| format!("no access to cgroup {}", path.display()))?;
            dirs.push((name.clone(), dir));
        }
        Ok(CgroupDirs(dirs))
    }

    /// The descriptor of the cgroup `name`, if it was opened.
    pub fn fd(&self, name: Option<&String>) -> Option<RawFd> {
        let name = name?;
        self.0
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, d)| d.as_raw_fd())
    }
}
