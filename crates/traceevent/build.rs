//! Links the system's libtraceevent (Debian: libtraceevent-dev), the library perf
//! formats tracepoint fields with.
fn main() {
    if let Err(e) = pkg_config::Config::new()
        .atleast_version("1.5")
        .probe("libtraceevent")
    {
        panic!(
            "sear formats tracepoint fields with libtraceevent, as perf does, and could not \
             find it: {e}\ninstall it (Debian/Ubuntu: apt-get install libtraceevent-dev; \
             Fedora: dnf install libtraceevent-devel)"
        );
    }
}
