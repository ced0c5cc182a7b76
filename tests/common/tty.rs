//! A program on a real pseudo-terminal, its screen parsed by a terminal
//! emulator (vt100), keys sent as a user types them.

#![allow(dead_code)]

use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct Tty {
    master: std::fs::File,
    /// The terminal side, kept open so that its modes can be read after
    /// the program has exited.
    slave: OwnedFd,
    pub child: Child,
    parser: vt100::Parser,
    pub rows: u16,
    pub cols: u16,
}

impl Tty {
    /// Starts `cmd` with stdin, stdout and stderr on a new pty of this
    /// size, as the session leader with the pty as its controlling
    /// terminal, `TERM=xterm-256color`.
    pub fn spawn(cmd: Command, rows: u16, cols: u16) -> Tty {
        Self::spawn_with_term(cmd, rows, cols, "xterm-256color")
    }

    /// [`Tty::spawn`] with this `TERM`.
    pub fn spawn_with_term(mut cmd: Command, rows: u16, cols: u16, term: &str) -> Tty {
        let (mut m, mut s) = (0, 0);
        let ws = libc::winsize {
            ws_row: rows,
            ws_col: cols,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        // SAFETY: openpty fills the two descriptors it is given.
        let r =
            unsafe { libc::openpty(&mut m, &mut s, std::ptr::null_mut(), std::ptr::null(), &ws) };
        assert_eq!(r, 0, "openpty: {}", std::io::Error::last_os_error());
        // SAFETY: both are fresh descriptors we own.
        let (master, slave) = unsafe { (OwnedFd::from_raw_fd(m), OwnedFd::from_raw_fd(s)) };
        // SAFETY: fcntl on our descriptor.
        unsafe {
            let fl = libc::fcntl(m, libc::F_GETFL);
            libc::fcntl(m, libc::F_SETFL, fl | libc::O_NONBLOCK);
        }
        let io = |fd: &OwnedFd| Stdio::from(fd.try_clone().unwrap());
        cmd.stdin(io(&slave))
            .stdout(io(&slave))
            .stderr(io(&slave))
            .env("TERM", term)
            .env_remove("NO_COLOR");
        // SAFETY: only async-signal-safe calls between fork and exec.
        unsafe {
            cmd.pre_exec(|| {
                if libc::setsid() < 0 || libc::ioctl(0, libc::TIOCSCTTY, 0) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = cmd.spawn().expect("start the program on the pty");
        Tty {
            master: std::fs::File::from(master),
            slave,
            child,
            parser: vt100::Parser::new(nz(rows), nz(cols), 0),
            rows,
            cols,
        }
    }

    /// Feeds what the program wrote so far to the emulator.
    pub fn pump(&mut self) {
        let mut buf = [0u8; 65536];
        loop {
            match self.master.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => self.parser.process(&buf[..n]),
                Err(_) => break,
            }
        }
    }

    /// The screen's lines, trailing blanks cut.
    pub fn lines(&mut self) -> Vec<String> {
        self.pump();
        self.parser
            .screen()
            .rows(0, self.cols)
            .map(|r| r.trim_end().to_owned())
            .collect()
    }

    pub fn screen(&mut self) -> String {
        self.lines().join("\n")
    }

    /// Waits until the screen satisfies `ok` (panics with the screen after
    /// `secs` seconds).
    pub fn wait_for(
        &mut self,
        what: &str,
        secs: u64,
        ok: impl Fn(&[String]) -> bool,
    ) -> Vec<String> {
        let end = Instant::now() + Duration::from_secs(secs);
        loop {
            let lines = self.lines();
            if ok(&lines) {
                return lines;
            }
            if Instant::now() > end {
                panic!("waiting for {what}: the screen is\n{}", lines.join("\n"));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Types `keys`, then lets the program redraw: waits until the screen
    /// has stayed the same for 300 ms (at most 10 s).
    pub fn send(&mut self, keys: &[u8]) {
        let before = self.screen();
        self.master.write_all(keys).unwrap();
        // (A loaded machine may take a while to answer: wait for a change
        // first, at most 2 s, then for the screen to stay still.)
        let end = Instant::now() + Duration::from_secs(2);
        while Instant::now() < end && self.screen() == before {
            std::thread::sleep(Duration::from_millis(20));
        }
        self.settle();
    }

    /// Waits until the screen stops changing.
    pub fn settle(&mut self) {
        let end = Instant::now() + Duration::from_secs(10);
        let mut last = self.screen();
        let mut same_since = Instant::now();
        while Instant::now() < end {
            std::thread::sleep(Duration::from_millis(50));
            let now = self.screen();
            if now != last {
                last = now;
                same_since = Instant::now();
            } else if same_since.elapsed() >= Duration::from_millis(300) {
                return;
            }
        }
    }

    /// Waits for the program to exit (at most `secs`), returning its code.
    pub fn wait_exit(&mut self, secs: u64) -> Option<i32> {
        let end = Instant::now() + Duration::from_secs(secs);
        loop {
            self.pump();
            if let Some(st) = self.child.try_wait().unwrap() {
                self.pump();
                return st.code();
            }
            if Instant::now() > end {
                let _ = self.child.kill();
                panic!("the program did not exit: the screen is\n{}", self.screen());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The terminal's modes now: (canonical input, echo).
    pub fn cooked(&self) -> (bool, bool) {
        // SAFETY: tcgetattr fills the struct it is given.
        unsafe {
            let mut t: libc::termios = std::mem::zeroed();
            assert_eq!(libc::tcgetattr(self.slave.as_raw_fd(), &mut t), 0);
            (t.c_lflag & libc::ICANON != 0, t.c_lflag & libc::ECHO != 0)
        }
    }

    /// Whether the emulator shows the cursor and is on the main screen.
    pub fn cursor_shown_on_main_screen(&mut self) -> (bool, bool) {
        self.pump();
        let s = self.parser.screen();
        (!s.hide_cursor(), !s.alternate_screen())
    }

    pub fn resize(&mut self, rows: u16, cols: u16) {
        let ws = libc::winsize {
            ws_row: rows,
            ws_col: cols,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        // SAFETY: TIOCSWINSZ with a valid winsize; the kernel sends SIGWINCH.
        unsafe { libc::ioctl(self.master.as_raw_fd(), libc::TIOCSWINSZ, &ws) };
        self.parser.screen_mut().set_size(nz(rows), nz(cols));
        self.rows = rows;
        self.cols = cols;
        self.settle();
    }
}

impl Drop for Tty {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn nz(n: u16) -> std::num::NonZeroU16 {
    std::num::NonZeroU16::new(n).expect("a terminal is at least one cell")
}
