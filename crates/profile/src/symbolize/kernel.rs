//! The kernel's symbols, read on a thread of their own from the start of a
//! replay (reading /proc/kallsyms takes a tenth of a second).

use crate::machine::Machine;

/// The kernel's symbols being read on another thread during pass one, and
/// the build id they are for.
pub struct KernelPrefetch {
    id: Option<Vec<u8>>,
    handle: Option<std::thread::JoinHandle<Result<symbols::Kallsyms, symbols::Reason>>>,
}

impl KernelPrefetch {
    /// Starts reading the symbols of the kernel with build id `id` (when
    /// there is one and the events sample the kernel).
    pub fn start(id: Option<Vec<u8>>, wants_kernel: bool) -> Self {
        let handle = (id.is_some() && wants_kernel)
            .then(|| {
                let id = id.clone();
                std::thread::Builder::new()
                    .name("sear-kallsyms".into())
                    .spawn(move || {
                        symbols::KernelFinder::default().load_for_recording(id.as_deref())
                    })
                    .ok()
            })
            .flatten();
        KernelPrefetch { id, handle }
    }
    /// The prefetched kernel symbols, if pass one kept the kernel's build
    /// id the features named.
    pub(crate) fn take(
        self,
        machine: &Machine,
    ) -> Option<Result<symbols::Kallsyms, symbols::Reason>> {
        let id = self.id;
        self.handle.and_then(|h| h.join().ok()).filter(|_| {
            machine
                .dsos()
                .iter()
                .find(|d| d.name == "[kernel.kallsyms]")
                .is_none_or(|d| d.build_id == id)
        })
    }
}
