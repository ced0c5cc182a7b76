//! `perf report --tasks` and `--mmaps`: the recorded threads as a tree,
//! optionally with their processes' maps.

use std::io::{self, Write};

use profile::machine::Task;

/// Writes the task tree (with each thread's maps when `maps`), as perf
/// 6.1 prints it.
pub fn write_tasks(out: &mut dyn Write, tasks: &[Task], maps: bool) -> io::Result<()> {
    writeln!(out, "# {:>8} {:>8} {:>8}  comm", "pid", "tid", "ppid")?;
    for t in tasks {
        let lead = format!(
            "  {:>8} {:>8} {:>8} |{:depth$}",
            t.pid,
            t.tid,
            t.ppid,
            "",
            depth = t.depth
        );
        writeln!(out, "{lead}{}", t.comm)?;
        if !maps {
            continue;
        }
        let indent = lead.len();
        for m in &t.maps {
            let flag = |on: bool, c: char| if on { c } else { '-' };
            writeln!(
                out,
                "{:indent$}  {:x}-{:x} {}{}{}{} {:08x} {} {}",
                "",
                m.start,
                m.end,
                flag(m.read, 'r'),
                flag(m.write, 'w'),
                flag(m.exec, 'x'),
                if m.shared { 's' } else { 'p' },
                m.pgoff,
                m.ino,
                m.name
            )?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use profile::machine::TaskMap;

    #[test]
    fn children_indent_under_their_parents_with_their_maps() {
        let map = TaskMap {
            start: 0x1000,
            end: 0x2000,
            read: true,
            write: false,
            exec: true,
            shared: false,
            pgoff: 0x30,
            ino: 7,
            name: "/bin/app".into(),
        };
        let tasks = vec![
            Task {
                pid: 10,
                tid: 10,
                ppid: -1,
                comm: "app".into(),
                depth: 0,
                maps: vec![map.clone()],
            },
            Task {
                pid: 11,
                tid: 11,
                ppid: 10,
                comm: "child".into(),
                depth: 1,
                maps: vec![map],
            },
        ];
        let mut out = Vec::new();
        write_tasks(&mut out, &tasks, true).unwrap();
        let text = String::from_utf8(out).unwrap();
        let want = "#      pid      tid     ppid  comm\n\
                    \x20       10       10       -1 |app\n\
                    \x20                               1000-2000 r-xp 00000030 7 /bin/app\n\
                    \x20       11       11       10 | child\n\
                    \x20                                1000-2000 r-xp 00000030 7 /bin/app\n";
        assert_eq!(text, want);
    }
}
