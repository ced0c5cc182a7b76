//! Symbols for a live session (`sear top`): each call looks up only the
//! locations interned since the last one, so a binary is read when the
//! first sample in it arrives, not at the start, and the work per refresh
//! grows with the new addresses, not with all of them. The running kernel's
//! symbols are read once, when the first kernel address arrives.

use super::{symbolize_with_ready_kernel, SymbolTable, SymbolizeOptions};
use crate::collect::Collector;
use crate::machine::Machine;

pub struct Incremental {
    opts: SymbolizeOptions,
    table: SymbolTable,
    kernel: Option<Result<symbols::Kallsyms, symbols::Reason>>,
}

impl Incremental {
    pub fn new(opts: SymbolizeOptions) -> Self {
        Incremental {
            opts,
            table: SymbolTable::default(),
            kernel: None,
        }
    }

    /// The symbols of every location looked up so far.
    pub fn table(&self) -> &SymbolTable {
        &self.table
    }

    /// Looks up the locations `collector` interned since the last call
    /// (kernel addresses beyond the kernel map moved into it, as pass two
    /// moves them).
    pub fn update(&mut self, collector: &mut Collector, machine: &Machine) {
        let done = self.table.per_loc.len();
        let locs = collector.interner.locs();
        if locs.len() <= done {
            return;
        }
        let new = &locs[done..];
        // (The kernel's symbols are read once, relocated, and kept.)
        let no_kernel = Err(symbols::Reason::NoSuchFile);
        let kernel = if new.iter().any(|l| l.level == b'k') {
            &*self.kernel.get_or_insert_with(|| {
                let id = machine
                    .dsos()
                    .iter()
                    .find(|d| d.name == "[kernel.kallsyms]")
                    .and_then(|d| d.build_id.clone());
                super::load_kernel(id.as_deref(), machine.kernel_reloc())
            })
        } else {
            &no_kernel
        };
        let more = symbolize_with_ready_kernel(new, machine.dsos(), &self.opts, kernel);
        if let Some((dso, ids)) = &more.into_kernel {
            let ids: Vec<u32> = ids.iter().map(|&i| i + done as u32).collect();
            collector.interner.move_into(&ids, *dso);
        }
        self.table.append(more);
    }
}
