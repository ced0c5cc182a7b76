//! Sort keys: perf's `--sort` names, the value of each key for an entry,
//! and the texts they are compared and printed by.

use rustc_hash::FxHashMap as HashMap;

use super::*;

/// A column perf can sort and group samples by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SortKey {
    Comm,
    /// perf's "pid" key is the thread: its tid and comm.
    Pid,
    Dso,
    Sym,
    /// `file:line` of the sample's address (innermost inline frame).
    Srcline,
    /// The file of `Srcline`.
    Srcfile,
    /// The first callchain symbol matching the parent regex, else `[other]`.
    Parent,
    Cpu,
    /// The symbol and the address's offset into it (newer perf's `symoff`).
    SymOff,
    SymSize,
    /// The size of the map the address fell in.
    DsoSize,
    /// perf's placeholder IPC column, added to any `--sort` naming `symbol`
    /// (IPC needs branch stacks; without them it shows dashes).
    IpcNull,
    /// perf's LBR IPC column, added in branch mode to a `--sort` naming
    /// `symbol`: it compares entries by symbol and shows `-` for an entry
    /// without one, and `0.00  [  0.0%]` for a symbol where the branches
    /// carry no cycle counts. With cycle counts its values need the
    /// symbol's basic blocks disassembled and counted, which sear does not
    /// do yet: it shows `?`.
    IpcLbr,
    /// The sampled address in the process (perf's `addr`).
    Addr,
    /// The socket of the sample's CPU (from the CPU topology).
    Socket,
    /// The thread's cgroup namespace, device and inode (perf's
    /// `cgroup_id`, from NAMESPACES records: `record --namespaces`).
    CgroupId,
    /// The sample's time, rounded down to the time quantum.
    Time,
    /// The sample's cgroup (`record --all-cgroups`), named by CGROUP records.
    Cgroup,
    /// A tracepoint sample's fields as its print format gives them (perf's
    /// "Trace output"; `N/A` for other events).
    Trace,
    /// The page size of the sampled code (`record --code-page-size`; `N/A`
    /// where the samples do not have it).
    CodePageSize,
    /// Branch mode (a recording with branch stacks): the DSO a sampled
    /// branch left from.
    DsoFrom,
    /// Branch mode: the DSO a branch went to.
    DsoTo,
    /// Branch mode: the symbol (or address) a branch left from.
    SymFrom,
    /// Branch mode: the symbol (or address) a branch went to.
    SymTo,
    /// Branch mode: the source address as symbol+offset.
    AddrFrom,
    /// Branch mode: the target address as symbol+offset.
    AddrTo,
    /// Branch mode: whether the branch was mispredicted (`Y`/`N`).
    Mispredict,
    /// Branch mode: whether the branch was in a transaction (`T`/`.`).
    InTx,
    /// Branch mode: whether the branch was a transaction abort (`A`/`.`).
    Abort,
    /// Branch mode: the cycles since the previous branch.
    Cycles,
    /// The sample's weight (`record -W`; 0 without one): perf's
    /// `local_weight`, the average weight of the entry's samples.
    LocalWeight,
    /// perf's `weight`: the summed weight of the entry's samples.
    Weight,
    /// The instruction latency of a weight struct (`local_ins_lat`: the
    /// average of the entry's samples).
    LocalInsLat,
    /// `ins_lat`: the summed instruction latency of the entry's samples.
    InsLat,
    /// The sample's transaction flags (`record --transaction`).
    Transaction,
    /// Memory mode (`--mem-mode`): where the data access was served
    /// (perf's `mem`: the data source's level).
    Mem,
    /// Memory mode: the data address's symbol (`symbol_daddr`), told apart
    /// by address.
    SymDaddr,
    /// Memory mode: the sampled instruction's symbol (`symbol_iaddr`),
    /// told apart by the instruction's address.
    SymIaddr,
    /// Branch view: the source line of a branch's source or target
    /// (`srcline_from`/`srcline_to`).
    SrclineFrom,
    SrclineTo,
    /// Memory mode: the DSO of the data address (`dso_daddr`).
    DsoDaddr,
    /// Memory mode: the data source's snoop, TLB, lock and blocked fields.
    Snoop,
    Tlb,
    Locked,
    Blocked,
    /// Memory mode: the page size of the data address
    /// (`record --data-page-size`; `N/A` without one).
    DataPageSize,
    /// Memory mode: the data address's physical address (`phys_daddr`;
    /// `record --phys-data`).
    PhysDaddr,
    /// Memory mode: the cache line of the data address in its map
    /// (`dcacheline`).
    Dcacheline,
}

/// The `--sort` names sear knows, for messages.
pub const SORT_KEY_NAMES: &str =
    "comm, pid (alias tid), dso, sym (symbol), symoff, srcline, srcfile, parent, cpu, socket, addr, symbol_size, dso_size, cgroup_id, cgroup, time, trace, code_page_size, local_weight, weight, local_ins_lat, ins_lat, transaction (p_stage_cyc and local_p_stage_cyc are accepted and, as perf does outside powerpc, left out); in report's branch view (recordings with branch stacks) dso_from, dso_to, symbol_from, symbol_to, addr_from, addr_to, srcline_from, srcline_to, mispredict, in_tx, abort, cycles; with --mem-mode (recordings with data addresses) mem, symbol_daddr, symbol_iaddr, dso_daddr, snoop, tlb, locked, blocked, data_page_size, phys_daddr, dcacheline";

impl SortKey {
    /// Whether `name` is a key perf supports on powerpc only and leaves
    /// out elsewhere without a word (the pipeline-stage cycles).
    pub fn left_out(name: &str) -> bool {
        matches!(name, "p_stage_cyc" | "local_p_stage_cyc")
    }

    /// Parses perf's `--sort` names. perf 6.1 has no `tid` key: its `pid`
    /// key is already per thread, so `tid` is accepted as the same.
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "comm" => SortKey::Comm,
            "pid" | "tid" => SortKey::Pid,
            "dso" => SortKey::Dso,
            "sym" | "symbol" => SortKey::Sym,
            "srcline" => SortKey::Srcline,
            "srcfile" => SortKey::Srcfile,
            "parent" => SortKey::Parent,
            "cpu" => SortKey::Cpu,
            "symoff" => SortKey::SymOff,
            "symbol_size" => SortKey::SymSize,
            "dso_size" => SortKey::DsoSize,
            "addr" => SortKey::Addr,
            "socket" => SortKey::Socket,
            "cgroup_id" => SortKey::CgroupId,
            "cgroup" => SortKey::Cgroup,
            "time" => SortKey::Time,
            "trace" => SortKey::Trace,
            "code_page_size" => SortKey::CodePageSize,
            "dso_from" => SortKey::DsoFrom,
            "dso_to" => SortKey::DsoTo,
            "symbol_from" => SortKey::SymFrom,
            "symbol_to" => SortKey::SymTo,
            "addr_from" => SortKey::AddrFrom,
            "addr_to" => SortKey::AddrTo,
            "mispredict" => SortKey::Mispredict,
            "in_tx" => SortKey::InTx,
            "abort" => SortKey::Abort,
            "cycles" => SortKey::Cycles,
            "local_weight" => SortKey::LocalWeight,
            "weight" => SortKey::Weight,
            "local_ins_lat" => SortKey::LocalInsLat,
            "ins_lat" => SortKey::InsLat,
            "transaction" => SortKey::Transaction,
            "mem" => SortKey::Mem,
            "symbol_daddr" => SortKey::SymDaddr,
            "symbol_iaddr" => SortKey::SymIaddr,
            "srcline_from" => SortKey::SrclineFrom,
            "srcline_to" => SortKey::SrclineTo,
            "dso_daddr" => SortKey::DsoDaddr,
            "snoop" => SortKey::Snoop,
            "tlb" => SortKey::Tlb,
            "locked" => SortKey::Locked,
            "blocked" => SortKey::Blocked,
            "data_page_size" => SortKey::DataPageSize,
            "phys_daddr" => SortKey::PhysDaddr,
            "dcacheline" => SortKey::Dcacheline,
            _ => return None,
        })
    }

    /// Parses a `--sort` list the way perf reads it: unknown names are
    /// returned as the error; a list naming `symbol` anywhere (perf looks
    /// for the substring) gets perf's IPC placeholder column appended.
    pub fn parse_list(list: &str) -> Result<Vec<SortKey>, crate::Error> {
        let mut keys = Vec::new();
        for k in list.split(',').map(str::trim) {
            if SortKey::left_out(k) {
                continue;
            }
            // (The branch keys are report's branch view's only.)
            let key = SortKey::parse(k)
                .filter(|k| !k.is_branch() && !k.is_mem())
                .ok_or_else(|| crate::Error::UnknownSortKey(k.to_owned()))?;
            keys.push(key);
        }
        if list.contains("symbol") {
            keys.push(SortKey::IpcNull);
        }
        Ok(keys)
    }

    /// The column header perf prints.
    pub fn header(self) -> &'static str {
        match self {
            SortKey::Comm => "Command",
            SortKey::Pid => "    Pid:Command",
            SortKey::Dso => "Shared Object",
            SortKey::Sym => "Symbol",
            SortKey::Srcline => "Source:Line",
            SortKey::Srcfile => "Source File",
            SortKey::Parent => "Parent symbol",
            SortKey::Cpu => "CPU",
            SortKey::SymOff => "Symbol Offset",
            SortKey::SymSize => "Symbol size",
            SortKey::DsoSize => "DSO size",
            SortKey::IpcNull | SortKey::IpcLbr => "IPC   [IPC Coverage]",
            SortKey::Addr => "Address",
            SortKey::Socket => "Socket",
            SortKey::CgroupId => "cgroup id (dev/inode)",
            SortKey::Time => "Time",
            SortKey::Cgroup => "Cgroup",
            SortKey::Trace => "Trace output",
            SortKey::CodePageSize => "Code Page Size",
            SortKey::DsoFrom => "Source Shared Object",
            SortKey::DsoTo => "Target Shared Object",
            SortKey::SymFrom => "Source Symbol",
            SortKey::SymTo => "Target Symbol",
            SortKey::AddrFrom => "Source Address",
            SortKey::AddrTo => "Target Address",
            SortKey::Mispredict => "Branch Mispredicted",
            SortKey::InTx => "Branch in transaction",
            SortKey::Abort => "Transaction abort",
            SortKey::Cycles => "Basic Block Cycles",
            SortKey::LocalWeight => "Local Weight",
            SortKey::Weight => "Weight",
            SortKey::LocalInsLat => "Local INSTR Latency",
            SortKey::InsLat => "INSTR Latency",
            SortKey::Transaction => "Transaction",
            SortKey::Mem => "Memory access",
            SortKey::SymDaddr => "Data Symbol",
            SortKey::SymIaddr => "Code Symbol",
            SortKey::SrclineFrom => "From Source:Line",
            SortKey::SrclineTo => "To Source:Line",
            SortKey::DsoDaddr => "Data Object",
            SortKey::Snoop => "Snoop",
            SortKey::Tlb => "TLB access",
            SortKey::Locked => "Locked",
            SortKey::Blocked => "Blocked",
            SortKey::DataPageSize => "Data Page Size",
            SortKey::PhysDaddr => "Data Physical Address",
            SortKey::Dcacheline => "Data Cacheline",
        }
    }

    /// The keys only memory mode has (perf's memory sort dimensions).
    pub fn is_mem(self) -> bool {
        matches!(
            self,
            SortKey::Mem
                | SortKey::SymDaddr
                | SortKey::SymIaddr
                | SortKey::DsoDaddr
                | SortKey::Snoop
                | SortKey::Tlb
                | SortKey::Locked
                | SortKey::Blocked
                | SortKey::DataPageSize
                | SortKey::PhysDaddr
                | SortKey::Dcacheline
        )
    }

    /// The keys only branch mode has (perf's `bstack` sort dimensions).
    pub fn is_branch(self) -> bool {
        matches!(
            self,
            SortKey::DsoFrom
                | SortKey::DsoTo
                | SortKey::SymFrom
                | SortKey::SymTo
                | SortKey::AddrFrom
                | SortKey::AddrTo
                | SortKey::SrclineFrom
                | SortKey::SrclineTo
                | SortKey::Mispredict
                | SortKey::InTx
                | SortKey::Abort
                | SortKey::Cycles
        )
    }

    /// Whether perf pads the value to the column width itself (so also in
    /// the last column); the others are padded only when a column follows.
    pub fn pads_value(self) -> bool {
        !matches!(
            self,
            SortKey::Sym
                | SortKey::SymOff
                | SortKey::Srcline
                | SortKey::Srcfile
                | SortKey::CgroupId
                | SortKey::Time
                | SortKey::Cgroup
                | SortKey::Trace
                | SortKey::SymFrom
                | SortKey::SymTo
                | SortKey::AddrFrom
                | SortKey::AddrTo
                | SortKey::SymDaddr
                | SortKey::SymIaddr
                | SortKey::Dcacheline
                | SortKey::Locked
                | SortKey::Blocked
        )
    }

    /// Columns as wide as their header whatever the values (perf sizes
    /// them by the header only; longer values overflow): also every
    /// memory key but the data symbol and object, which perf sizes by name.
    pub fn header_width_only(self) -> bool {
        matches!(
            self,
            SortKey::Cpu
                | SortKey::SymSize
                | SortKey::DsoSize
                | SortKey::IpcNull
                | SortKey::IpcLbr
                | SortKey::Socket
                | SortKey::CodePageSize
                | SortKey::LocalWeight
                | SortKey::Weight
                | SortKey::LocalInsLat
                | SortKey::InsLat
                | SortKey::Transaction
                | SortKey::Mispredict
                | SortKey::InTx
                | SortKey::Abort
                | SortKey::Cycles
        ) || self.is_mem()
            && !matches!(
                self,
                SortKey::SymDaddr | SortKey::SymIaddr | SortKey::DsoDaddr | SortKey::Dcacheline
            )
    }

    /// The width perf gives the column whatever its values (its fixed
    /// column lengths for these keys), if wider than the header.
    pub fn min_width(self) -> usize {
        match self {
            SortKey::LocalWeight | SortKey::Weight => 12,
            SortKey::LocalInsLat | SortKey::InsLat => 13,
            SortKey::Transaction => 27,
            // (perf's column lengths: `hists__calc_col_len`.)
            SortKey::Mem => 24,
            SortKey::Snoop => 12,
            SortKey::Tlb | SortKey::DataPageSize | SortKey::PhysDaddr => 22,
            SortKey::Locked => 6,
            SortKey::Blocked => 10,
            _ => 0,
        }
    }

    /// Numbers perf right-aligns.
    pub fn right_aligned(self) -> bool {
        matches!(
            self,
            SortKey::Cpu | SortKey::SymSize | SortKey::DsoSize | SortKey::Socket
        )
    }

    /// Whether the key needs the sums kept by weight, instruction latency
    /// and transaction ([`crate::collect::CollectOptions::by_weight`]).
    pub fn needs_weight(self) -> bool {
        matches!(
            self,
            SortKey::LocalWeight
                | SortKey::Weight
                | SortKey::LocalInsLat
                | SortKey::InsLat
                | SortKey::Transaction
        )
    }

    /// Whether the key needs the sums kept by CPU.
    pub fn needs_cpu(self) -> bool {
        matches!(self, SortKey::Cpu | SortKey::Socket)
    }

    /// Whether the key needs each location's source line.
    pub fn needs_srclines(self) -> bool {
        matches!(
            self,
            SortKey::Srcline | SortKey::Srcfile | SortKey::SrclineFrom | SortKey::SrclineTo
        )
    }

    /// Whether a frame's value depends on its location (address), not
    /// only on its symbol.
    pub fn needs_loc(self) -> bool {
        matches!(
            self,
            SortKey::Srcline
                | SortKey::Srcfile
                | SortKey::SymOff
                | SortKey::DsoSize
                | SortKey::Addr
        )
    }
}

/// A symbol column value: a symbol, or an address nothing covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SymRef {
    Sym(u32),
    /// `ip` as perf keeps it (map-relative for a sample's own address,
    /// raw for a callchain frame), in the DSO `dso` (or [`NO_DSO`]).
    Addr {
        ip: u64,
        dso: u32,
    },
}

/// The value of one sort key for an entry. Ids point into [`Names`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Key {
    /// The comm at sample time (an index into [`Names::comms`]).
    Comm(u32),
    /// A thread (machine index), shown with its last comm.
    Thread(u32),
    /// A DSO (machine index); None where the address hit no map.
    Dso(Option<u32>),
    /// The symbol. (perf's level character, `.` user, `k` kernel, ..., is
    /// not part of an entry's identity: see [`HistEntry::level`].)
    Sym(SymRef),
    /// perf's srcline text (an index into [`Names::strings`]): entries with
    /// equal text are one entry, as in perf.
    Srcline(u32),
    /// perf's srcfile text (an index into [`Names::strings`]).
    Srcfile(u32),
    /// The parent symbol's name (an index into [`Names::strings`]), None for
    /// `[other]`.
    Parent(Option<u32>),
    /// The CPU, `u32::MAX` for none (perf's -1).
    Cpu(u32),
    /// A symbol and the offset into it (for an unresolved address, 0).
    SymOff(SymRef, u64),
    /// The symbol's size, None without a symbol (perf's `unknown`).
    SymSize(Option<u64>),
    /// The map's size, None without a map.
    DsoSize(Option<u64>),
    /// perf's IPC placeholder shows dashes but compares entries by symbol
    /// (its `sort__sym_cmp`), so it splits entries as a symbol key would.
    IpcNull(SymRef),
    /// perf's LBR IPC column (see [`SortKey::IpcLbr`]): by symbol, and
    /// whether the recording's branches have cycle counts.
    IpcLbr(SymRef, bool),
    /// The address perf shows (see [`KeyCtx::own`]).
    Addr(u64),
    /// The socket id, -1 where unknown.
    Socket(i32),
    /// Cgroup namespace device and inode.
    CgroupId(u64, u64),
    /// A time bucket (ns) and whether perf prints it to the nanosecond
    /// (`--ns`).
    Time(u64, bool),
    /// A cgroup id (0: the sample has none).
    Cgroup(u64),
    /// A tracepoint sample's formatted fields (an index into
    /// [`Names::strings`]); None for other events (`N/A`).
    Trace(Option<u32>),
    /// A page size in bytes (0: the sample has none).
    CodePageSize(u64),
    /// A sample's weight, instruction latency or transaction flags (the
    /// entries of these keys hold samples of one value each).
    Weight(u64),
    InsLat(u64),
    Transaction(u64),
    /// A branch end's symbol: perf's `symbol_from`/`symbol_to`. An
    /// unresolved end shows its address in its DSO's terms (`SymRef::Addr`'s
    /// `ip`) and is told apart and ordered by its address in the process
    /// (the `u64`; 0 for a symbol). The `u8` is perf's level of the end
    /// (`.` user, `k` kernel, `H` where no map holds it).
    BranchSym(SymRef, u64, u8),
    /// A branch end's DSO (`dso_from`/`dso_to`), None where no map holds it.
    BranchDso(Option<u32>),
    /// A branch end as `addr_from`/`addr_to` show it: its DSO (perf orders
    /// these by DSO first), its address in the process, and its text
    /// (`symbol+0xoffset`, a NUL between the two, or the address; an index
    /// into [`Names::strings`]).
    BranchAddr(Option<u32>, u64, u32),
    /// `Y` mispredicted, `N` predicted, 0 neither.
    Mispredict(u8),
    InTx(bool),
    Abort(bool),
    Cycles(u16),
    /// Memory mode: one field of a sample's data source word (the word
    /// masked to what the field's text shows; compared by the field).
    DataSrc(MemField, u64),
    /// Memory mode: the data address (what tells entries apart), its
    /// symbol (an id into [`Names::syms`], `u32::MAX` for none), the
    /// address's offset into the symbol and its DSO ([`NO_DSO`] for none).
    DataSym {
        addr: u64,
        sym: u32,
        off: u32,
        dso: u32,
    },
    /// Memory mode: the DSO of the data address; None where no map holds it.
    DsoDaddr(Option<u32>),
    /// Memory mode: the data page size (0: none).
    DataPageSize(u64),
    /// Memory mode: the physical data address (0: none).
    PhysDaddr(u64),
    /// Memory mode: the data address's cache line, told apart and ordered
    /// as perf's `dcacheline` does: by the sample's cpumode, the file
    /// identity of the data's map (through its DSO; [`NO_DSO`] where no map
    /// held the address), the process of private anonymous user memory (0
    /// otherwise) and the line of the address in its map. Shown with a
    /// level of its own (`s`, `X`; 0 for the entry's) and `text`, an index
    /// into [`Names::strings`]: the data symbol's name, a NUL and, for a
    /// data object, perf's offset (empty text: no symbol).
    Dcacheline {
        line: u64,
        dso: u32,
        pid: i32,
        text: u32,
        cpumode: u8,
        level: u8,
    },
}

/// The fields of perf's data source word (`union perf_mem_data_src`) that
/// memory mode's keys show.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MemField {
    Lvl,
    Snoop,
    Tlb,
    Lock,
    Blk,
}

impl MemField {
    /// The bits of the data source word the field's text shows.
    fn mask(self) -> u64 {
        match self {
            // mem_lvl, mem_lvl_num, mem_remote, mem_hops.
            MemField::Lvl => 0x3fff << 5 | 0x1f << 33 | 0x7 << 43,
            // mem_snoop, mem_snoopx.
            MemField::Snoop => 0x1f << 19 | 0x3 << 38,
            MemField::Tlb => 0x7f << 26,
            MemField::Lock => 0x3 << 24,
            MemField::Blk => 0x7 << 40,
        }
    }

    /// The field perf's sort key compares (`sort__lvl_cmp` and the like).
    fn compared(self, word: u64) -> u64 {
        match self {
            MemField::Lvl => word >> 5 & 0x3fff,
            MemField::Snoop => word >> 19 & 0x1f,
            MemField::Tlb => word >> 26 & 0x7f,
            MemField::Lock => word >> 24 & 0x3,
            MemField::Blk => word >> 40 & 0x7,
        }
    }
}

/// Everything keys refer to, for comparing and printing them.
pub struct Names<'a> {
    pub comms: &'a [String],
    /// perf's short name of each DSO of the machine (with `-v`, its path).
    pub dso_names: &'a [String],
    /// `-v`: perf's verbose symbol column, each symbol after its entry's
    /// address and its DSO's origin character (from `origins`, by DSO).
    pub verbose: bool,
    pub origins: &'a [char],
    pub syms: &'a [SymInfo],
    pub machine: &'a Machine,
    /// Texts of srcline, srcfile and parent keys ([`Report::strings`]).
    pub strings: &'a [String],
}

impl Names<'_> {
    /// perf's `-v` prefix of an entry's symbol: its address (`%-#18llx`)
    /// and where perf read its DSO's symbols from.
    pub fn verbose_prefix(&self, k: &Key, maker: &super::Maker) -> Option<String> {
        if !self.verbose || !matches!(k, Key::Sym(_)) {
            return None;
        }
        let ip = maker.ip;
        let origin = self.origins.get(maker.dso as usize).copied().unwrap_or('!');
        // C's `%#llx` prints 0 without `0x`.
        let addr = if ip == 0 {
            "0".to_owned()
        } else {
            format!("{ip:#x}")
        };
        Some(format!("{addr:<18} {origin} "))
    }

    /// perf's `-v` prefix of a data symbol: the data address and where
    /// perf read its DSO's symbols from.
    pub fn verbose_data_prefix(&self, k: &Key) -> Option<String> {
        let (addr, dso) = match k {
            Key::DataSym { addr, dso, .. } => (addr, dso),
            // (The line, in the map's terms.)
            Key::Dcacheline { line, dso, .. } => (line, dso),
            _ => return None,
        };
        if !self.verbose {
            return None;
        }
        let origin = self.origins.get(*dso as usize).copied().unwrap_or('!');
        let addr = if *addr == 0 {
            "0".to_owned()
        } else {
            format!("{addr:#x}")
        };
        Some(format!("{addr:<18} {origin} "))
    }

    /// perf's `-v` prefix of a branch end's symbol (source `end` 0,
    /// target 1): the address in its DSO's terms and where perf read the
    /// DSO's symbols from.
    pub fn verbose_branch_prefix(&self, end: usize, maker: &super::Maker) -> Option<String> {
        if !self.verbose {
            return None;
        }
        let (ip, dso) = maker.branch_ends[end.min(1)];
        let origin = self.origins.get(dso as usize).copied().unwrap_or('!');
        let addr = if ip == 0 {
            "0".to_owned()
        } else {
            format!("{ip:#x}")
        };
        Some(format!("{addr:<18} {origin} "))
    }

    fn comm(&self, id: u32) -> &str {
        self.comms.get(id as usize).map_or("", String::as_str)
    }

    fn dso(&self, d: Option<u32>) -> Option<&str> {
        d.and_then(|d| self.dso_names.get(d as usize))
            .map(String::as_str)
    }

    fn string(&self, id: u32) -> &str {
        self.strings.get(id as usize).map_or("", String::as_str)
    }

    fn cmp_sym(&self, x: &SymRef, y: &SymRef) -> Ordering {
        match (x, y) {
            (SymRef::Sym(p), SymRef::Sym(q)) => self.syms[*p as usize]
                .name
                .cmp(&self.syms[*q as usize].name),
            (SymRef::Sym(_), SymRef::Addr { .. }) => Ordering::Less,
            (SymRef::Addr { .. }, SymRef::Sym(_)) => Ordering::Greater,
            (SymRef::Addr { ip: p, dso: d }, SymRef::Addr { ip: q, dso: e }) => {
                let dn = |d: u32| (d == NO_DSO, self.dso((d != NO_DSO).then_some(d)));
                dn(*d).cmp(&dn(*e)).then(p.cmp(q))
            }
        }
    }

    /// The order of perf's collapsed entries (`hist_entry__collapse`, key
    /// by key): the sort's, but symbols by address as perf's `sym` key
    /// compares them there (unresolved ones as signed numbers).
    pub fn cmp_collapsed(&self, a: &Key, b: &Key) -> Ordering {
        collapsed_order(self, a, b)
    }

    /// perf's `sort__sym_cmp` as an order: unresolved addresses by
    /// address, after symbols; symbols by DSO name, then start address
    /// (inlined ones by name first).
    fn cmp_by_address(&self, x: &SymRef, y: &SymRef) -> Ordering {
        by_address_order(self, x, y)
    }

    /// perf's order among entries of equal period (its `se_sort`).
    pub fn cmp_for_sort(&self, a: &Key, b: &Key) -> Ordering {
        match (a, b) {
            (Key::Srcline(x), Key::Srcline(y)) | (Key::Srcfile(x), Key::Srcfile(y)) => {
                self.string(*x).cmp(self.string(*y))
            }
            // Named parents before `[other]`.
            (Key::Parent(x), Key::Parent(y)) => match (x, y) {
                (Some(p), Some(q)) => self.string(*p).cmp(self.string(*q)),
                (None, None) => Ordering::Equal,
                (None, Some(_)) => Ordering::Greater,
                (Some(_), None) => Ordering::Less,
            },
            (Key::Cpu(x), Key::Cpu(y)) => (*x as i32).cmp(&(*y as i32)),
            (Key::SymOff(x, p), Key::SymOff(y, q)) => self.cmp_sym(x, y).then(p.cmp(q)),
            (Key::SymSize(x), Key::SymSize(y)) => x.unwrap_or(0).cmp(&y.unwrap_or(0)),
            (Key::IpcNull(x), Key::IpcNull(y)) | (Key::IpcLbr(x, _), Key::IpcLbr(y, _)) => {
                self.cmp_by_address(x, y)
            }
            (Key::DsoSize(x), Key::DsoSize(y)) => x.unwrap_or(0).cmp(&y.unwrap_or(0)),
            // perf compares the signed difference: kernel addresses first.
            (Key::Addr(x), Key::Addr(y)) => (*x as i64).cmp(&(*y as i64)),
            (Key::Socket(x), Key::Socket(y)) => x.cmp(y),
            (Key::CgroupId(a, b), Key::CgroupId(c, d)) => (a, b).cmp(&(c, d)),
            (Key::Time(x, _), Key::Time(y, _)) => x.cmp(y),
            (Key::Cgroup(x), Key::Cgroup(y)) => x.cmp(y),
            (Key::CodePageSize(x), Key::CodePageSize(y)) => x.cmp(y),
            // (perf's weights order the larger first.)
            (Key::Weight(x), Key::Weight(y)) | (Key::InsLat(x), Key::InsLat(y)) => y.cmp(x),
            (Key::Transaction(x), Key::Transaction(y)) => x.cmp(y),
            (Key::Trace(Some(x)), Key::Trace(Some(y))) => self.string(*x).cmp(self.string(*y)),
            (Key::Comm(x), Key::Comm(y)) => self.comm(*x).cmp(self.comm(*y)),
            // perf's branch keys compare left to right where its other
            // keys compare right to left: DSOs by name descending, entries
            // without one first; cycles descending.
            (Key::BranchSym(x, p, _), Key::BranchSym(y, q, _)) => match (x, y) {
                (SymRef::Sym(i), SymRef::Sym(j)) => {
                    let (a, b) = (&self.syms[*i as usize], &self.syms[*j as usize]);
                    if i == j {
                        Ordering::Equal
                    } else if a.inlined || b.inlined {
                        a.name.cmp(&b.name)
                    } else {
                        a.start.cmp(&b.start).then(a.end.cmp(&b.end))
                    }
                }
                (SymRef::Sym(_), SymRef::Addr { .. }) => Ordering::Less,
                (SymRef::Addr { .. }, SymRef::Sym(_)) => Ordering::Greater,
                (SymRef::Addr { .. }, SymRef::Addr { .. }) => signed_distance(*p, *q),
            },
            (Key::BranchAddr(d, p, _), Key::BranchAddr(e, q, _)) => {
                match (self.dso(*d), self.dso(*e)) {
                    (Some(a), Some(b)) => b.cmp(a),
                    (None, None) => Ordering::Equal,
                    (None, Some(_)) => Ordering::Less,
                    (Some(_), None) => Ordering::Greater,
                }
                .then_with(|| signed_distance(*p, *q))
            }
            // (`dso_daddr` compares as the branch keys do: perf's
            // `_sort__dso_cmp` with its arguments in the other order.)
            (Key::BranchDso(x), Key::BranchDso(y)) | (Key::DsoDaddr(x), Key::DsoDaddr(y)) => {
                match (self.dso(*x), self.dso(*y)) {
                    (Some(a), Some(b)) => b.cmp(a),
                    (None, None) => Ordering::Equal,
                    (None, Some(_)) => Ordering::Less,
                    (Some(_), None) => Ordering::Greater,
                }
            }
            (Key::Cycles(x), Key::Cycles(y)) => y.cmp(x),
            // perf's memory keys compare `right - left`: smaller first.
            (Key::DataSrc(f, x), Key::DataSrc(_, y)) => f.compared(*x).cmp(&f.compared(*y)),
            (Key::DataSym { addr: x, .. }, Key::DataSym { addr: y, .. }) => signed_distance(*x, *y),
            (Key::DataPageSize(x), Key::DataPageSize(y))
            | (Key::PhysDaddr(x), Key::PhysDaddr(y)) => signed_distance(*x, *y),
            // (perf's `sort__dcacheline_cmp`: each part ascending, an
            // address no map held after the mapped ones.)
            (
                Key::Dcacheline {
                    line: l,
                    dso: d,
                    pid: p,
                    cpumode: c,
                    ..
                },
                Key::Dcacheline {
                    line: m,
                    dso: e,
                    pid: q,
                    cpumode: k,
                    ..
                },
            ) => c.cmp(k).then_with(|| {
                let id = |d: u32| (d == NO_DSO, self.machine.dso_id(d as usize));
                id(*d).cmp(&id(*e)).then(p.cmp(q)).then(l.cmp(m))
            }),
            (Key::Thread(x), Key::Thread(y)) => {
                let tid = |t: u32| self.machine.thread_info(t as usize).tid;
                tid(*x).cmp(&tid(*y))
            }
            // Entries without a DSO go after those with one.
            (Key::Dso(x), Key::Dso(y)) => match (self.dso(*x), self.dso(*y)) {
                (Some(a), Some(b)) => a.cmp(b),
                (None, None) => Ordering::Equal,
                (None, Some(_)) => Ordering::Greater,
                (Some(_), None) => Ordering::Less,
            },
            // By name; unresolved entries after symbols, equal among
            // themselves (perf's `cmp_null`): later sort columns decide.
            (Key::Sym(x), Key::Sym(y)) => match (x, y) {
                (SymRef::Sym(p), SymRef::Sym(q)) => self.syms[*p as usize]
                    .name
                    .cmp(&self.syms[*q as usize].name),
                (SymRef::Sym(_), SymRef::Addr { .. }) => Ordering::Less,
                (SymRef::Addr { .. }, SymRef::Sym(_)) => Ordering::Greater,
                (SymRef::Addr { .. }, SymRef::Addr { .. }) => Ordering::Equal,
            },
            _ => Ordering::Equal,
        }
    }

    /// A thread's comm at the end of the recording (`:tid` if never named).
    pub fn thread_comm(&self, t: u32) -> String {
        match self.machine.comm_of(t as usize) {
            Some(c) => c.to_owned(),
            None => format!(":{}", self.machine.thread_info(t as usize).tid),
        }
    }

    /// The text perf prints for a key of an entry whose level is `level`.
    pub fn display(&self, k: &Key, level: u8) -> String {
        match k {
            Key::Comm(c) => self.comm(*c).to_owned(),
            Key::Thread(t) => {
                let info = self.machine.thread_info(*t as usize);
                let comm = self
                    .machine
                    .comm_of(*t as usize)
                    .map_or_else(|| format!(":{}", info.tid), str::to_owned);
                format!("{:>7}:{comm}", info.tid)
            }
            Key::Dso(d) => self.dso(*d).unwrap_or("[unknown]").to_owned(),
            Key::Sym(s) => format!("[{}] {}", level as char, self.sym_name(s)),
            Key::Srcline(i) | Key::Srcfile(i) => self.string(*i).to_owned(),
            Key::Parent(Some(i)) => self.string(*i).to_owned(),
            Key::Parent(None) => "[other]".to_owned(),
            Key::Cpu(c) => three_digits(*c as i32),
            Key::SymOff(s @ SymRef::Sym(_), off) => {
                format!("[{}] {}+{off:#x}", level as char, self.sym_name(s))
            }
            Key::SymOff(s, _) => format!("[{}] {}", level as char, self.sym_name(s)),
            Key::SymSize(Some(n)) => n.to_string(),
            Key::SymSize(None) => "unknown".to_owned(),
            Key::DsoSize(Some(n)) => n.to_string(),
            Key::DsoSize(None) => "unknown".to_owned(),
            Key::IpcNull(_) => "-      -".to_owned(),
            Key::IpcLbr(SymRef::Addr { .. }, _) => "-".to_owned(),
            Key::IpcLbr(_, false) => "0.00  [  0.0%]".to_owned(),
            Key::IpcLbr(_, true) => "?".to_owned(),
            // C's `%#llx`: no `0x` for zero.
            Key::Addr(0) => "0".to_owned(),
            Key::Addr(a) => format!("{a:#x}"),
            Key::Socket(s) => three_digits(*s),
            Key::CgroupId(dev, ino) => format!("{dev}/0x{ino:x}"),
            Key::Time(t, ns) => {
                let (s, frac) = (t / 1_000_000_000, t % 1_000_000_000);
                if *ns {
                    format!("{s}.{frac:09}")
                } else {
                    format!("{s}.{:06}", frac / 1000)
                }
            }
            Key::Cgroup(0) | Key::Trace(None) => "N/A".to_owned(),
            Key::Trace(Some(i)) => self.string(*i).to_owned(),
            Key::CodePageSize(n) => page_size_name(*n),
            Key::Weight(n) | Key::InsLat(n) => n.to_string(),
            Key::Transaction(t) => transaction_text(*t),
            Key::Cgroup(id) => self
                .machine
                .cgroup_name(*id)
                .unwrap_or("unknown")
                .to_owned(),
            Key::BranchSym(s, _, l) => format!("[{}] {}", *l as char, self.sym_name(s)),
            Key::BranchDso(d) => self.dso(*d).unwrap_or("[unknown]").to_owned(),
            Key::BranchAddr(_, _, text) => {
                format!(
                    "[{}] {}",
                    level as char,
                    self.string(*text).replace('\0', "")
                )
            }
            Key::Mispredict(0) => "N/A".to_owned(),
            Key::Mispredict(c) => (*c as char).to_string(),
            Key::InTx(t) => if *t { "T" } else { "." }.to_owned(),
            Key::Abort(a) => if *a { "A" } else { "." }.to_owned(),
            Key::Cycles(0) => "-".to_owned(),
            // C's `%hd`.
            Key::Cycles(c) => (*c as i16).to_string(),
            Key::DataSrc(f, word) => mem_text(*f, *word),
            Key::DataSym { addr, sym, off, .. } => match self.syms.get(*sym as usize) {
                Some(s) if s.object => format!("[{}] {}+{off:#x}", level as char, s.name),
                Some(s) => format!("[{}] {}", level as char, s.name),
                // C's `%-#.16llx`: no `0x` for zero.
                None if *addr == 0 => format!("[{}] {:016x}", level as char, 0),
                None => format!("[{}] {addr:#018x}", level as char),
            },
            Key::DsoDaddr(d) => self.dso(*d).unwrap_or("[unknown]").to_owned(),
            Key::DataPageSize(n) => page_size_name(*n),
            // C's `%-#.16llx`: no `0x` for zero.
            Key::PhysDaddr(0) => format!("[{}] {:016x}", level as char, 0),
            Key::PhysDaddr(a) => format!("[{}] {a:#018x}", level as char),
            Key::Dcacheline {
                line,
                text,
                level: own,
                ..
            } => {
                let level = if *own == 0 { level } else { *own };
                match self.string(*text).split_once('\0') {
                    Some((name, off)) => format!("[{}] {name}{off}", level as char),
                    None if *line == 0 => format!("[{}] {:016x}", level as char, 0),
                    None => format!("[{}] {line:#018x}", level as char),
                }
            }
        }
    }

    /// A symbol's name as perf prints it in the symbol column and call
    /// graphs: `name`, `name (inlined)`, or the address in hex.
    pub fn sym_name(&self, s: &SymRef) -> String {
        match s {
            SymRef::Sym(i) => {
                let s = &self.syms[*i as usize];
                if s.inlined {
                    format!("{} (inlined)", s.name)
                } else {
                    s.name.clone()
                }
            }
            // C's `%#.16llx`: no `0x` for zero.
            SymRef::Addr { ip: 0, .. } => "0".repeat(16),
            SymRef::Addr { ip, .. } => format!("{ip:#018x}"),
        }
    }
}

/// perf's `_sort__addr_cmp` as an order. perf takes the sign of the
/// wrapped difference, which is not transitive (a sort may reject it);
/// comparing the addresses as signed numbers agrees with it on any two
/// addresses of one half of the space, and puts kernel addresses (the
/// upper half) first, as it does.
/// [`Names`]' two sort comparisons with the names they compare by text
/// (comms, DSO names, symbol names) replaced by their dense ranks, so a
/// comparison is integer compares where the rows are put in order
/// ([`crate::hist::Hists::sort_by_columns`], where perf's tree replays make
/// millions of them). Exact: two names have equal ranks exactly when their
/// texts are equal, and ranks follow the texts' order; every other key
/// compares as [`Names`] compares it.
pub struct RankedNames<'n, 'a> {
    names: &'n Names<'a>,
    /// By comm id; ids past the table compare as [`Names`] does.
    comm: Vec<u32>,
    /// By DSO id: 1 + the rank of its name (0: an id with no name).
    dso: Vec<u32>,
    /// By symbol: the rank of its name.
    sym: Vec<u32>,
}

/// Dense ranks of `texts` in their order (equal texts, equal ranks).
fn dense_ranks<'t>(texts: impl ExactSizeIterator<Item = &'t str>) -> Vec<u32> {
    let texts: Vec<&str> = texts.collect();
    let mut order: Vec<u32> = (0..texts.len() as u32).collect();
    order.sort_unstable_by(|&a, &b| texts[a as usize].cmp(texts[b as usize]));
    let mut ranks = vec![0u32; texts.len()];
    let mut rank = 0u32;
    for (i, w) in order.iter().enumerate() {
        if i > 0 && texts[order[i - 1] as usize] != texts[*w as usize] {
            rank += 1;
        }
        ranks[*w as usize] = rank;
    }
    ranks
}

impl<'n, 'a> RankedNames<'n, 'a> {
    pub fn new(names: &'n Names<'a>) -> Self {
        RankedNames {
            names,
            comm: dense_ranks(names.comms.iter().map(String::as_str)),
            dso: dense_ranks(names.dso_names.iter().map(String::as_str))
                .into_iter()
                .map(|r| r + 1)
                .collect(),
            sym: dense_ranks(names.syms.iter().map(|s| s.name.as_str())),
        }
    }

    /// A DSO as [`Names::dso`] orders it: None (no id, or an id past the
    /// table) or the rank of its name.
    fn dso(&self, d: Option<u32>) -> Option<u32> {
        d.and_then(|d| self.dso.get(d as usize).copied())
    }

    /// [`Names::cmp_for_sort`].
    pub fn cmp_for_sort(&self, a: &Key, b: &Key) -> Ordering {
        match (a, b) {
            (Key::Comm(x), Key::Comm(y)) => {
                match (self.comm.get(*x as usize), self.comm.get(*y as usize)) {
                    (Some(p), Some(q)) => p.cmp(q),
                    _ => self.names.cmp_for_sort(a, b),
                }
            }
            (Key::Dso(x), Key::Dso(y)) => match (self.dso(*x), self.dso(*y)) {
                (Some(a), Some(b)) => a.cmp(&b),
                (None, None) => Ordering::Equal,
                (None, Some(_)) => Ordering::Greater,
                (Some(_), None) => Ordering::Less,
            },
            (Key::Sym(SymRef::Sym(p)), Key::Sym(SymRef::Sym(q))) => {
                self.sym[*p as usize].cmp(&self.sym[*q as usize])
            }
            _ => self.names.cmp_for_sort(a, b),
        }
    }

    /// [`Names::cmp_collapsed`].
    pub fn cmp_collapsed(&self, a: &Key, b: &Key) -> Ordering {
        collapsed_order(self, a, b)
    }
}

/// What the orders shared by [`Names`] and [`RankedNames`] need of the
/// names: the one compares texts, the other their ranks.
trait NameOrder {
    fn syms(&self) -> &[SymInfo];
    /// DSOs as `sort__sym_cmp` orders them: by name, an id with no name
    /// before the named ones, [`NO_DSO`] last.
    fn cmp_dsos(&self, d: u32, e: u32) -> Ordering;
    /// Two symbols by name.
    fn cmp_sym_names(&self, p: u32, q: u32) -> Ordering;
    fn cmp_keys(&self, a: &Key, b: &Key) -> Ordering;
}

impl NameOrder for Names<'_> {
    fn syms(&self) -> &[SymInfo] {
        self.syms
    }

    fn cmp_dsos(&self, d: u32, e: u32) -> Ordering {
        let dn = |d: u32| (d == NO_DSO, self.dso((d != NO_DSO).then_some(d)));
        dn(d).cmp(&dn(e))
    }

    fn cmp_sym_names(&self, p: u32, q: u32) -> Ordering {
        self.syms[p as usize].name.cmp(&self.syms[q as usize].name)
    }

    fn cmp_keys(&self, a: &Key, b: &Key) -> Ordering {
        self.cmp_for_sort(a, b)
    }
}

impl NameOrder for RankedNames<'_, '_> {
    fn syms(&self) -> &[SymInfo] {
        self.names.syms
    }

    fn cmp_dsos(&self, d: u32, e: u32) -> Ordering {
        // (An id past the table as `None`: before every named DSO.)
        let dn = |d: u32| {
            if d == NO_DSO {
                u32::MAX
            } else {
                self.dso.get(d as usize).copied().unwrap_or(0)
            }
        };
        dn(d).cmp(&dn(e))
    }

    fn cmp_sym_names(&self, p: u32, q: u32) -> Ordering {
        self.sym[p as usize].cmp(&self.sym[q as usize])
    }

    fn cmp_keys(&self, a: &Key, b: &Key) -> Ordering {
        self.cmp_for_sort(a, b)
    }
}

/// [`Names::cmp_collapsed`] over either way of comparing names.
fn collapsed_order(n: &impl NameOrder, a: &Key, b: &Key) -> Ordering {
    match (a, b) {
        (Key::Sym(SymRef::Addr { ip: p, .. }), Key::Sym(SymRef::Addr { ip: q, .. })) => {
            signed_distance(*p, *q)
        }
        (Key::Sym(x), Key::Sym(y)) => by_address_order(n, x, y),
        _ => n.cmp_keys(a, b),
    }
}

/// [`Names::cmp_by_address`] over either way of comparing names.
fn by_address_order(n: &impl NameOrder, x: &SymRef, y: &SymRef) -> Ordering {
    let syms = n.syms();
    let dso = |s: &SymRef| match s {
        SymRef::Sym(i) => syms[*i as usize].dso,
        SymRef::Addr { dso, .. } => *dso,
    };
    if let (SymRef::Addr { ip: p, .. }, SymRef::Addr { ip: q, .. }) = (x, y) {
        return p.cmp(q);
    }
    n.cmp_dsos(dso(x), dso(y)).then_with(|| match (x, y) {
        (SymRef::Sym(p), SymRef::Sym(q)) => {
            let (a, b) = (&syms[*p as usize], &syms[*q as usize]);
            let by_name = if a.inlined || b.inlined {
                n.cmp_sym_names(*p, *q)
            } else {
                Ordering::Equal
            };
            by_name.then(a.start.cmp(&b.start)).then(a.end.cmp(&b.end))
        }
        (SymRef::Sym(_), SymRef::Addr { .. }) => Ordering::Less,
        (SymRef::Addr { .. }, SymRef::Sym(_)) => Ordering::Greater,
        (SymRef::Addr { ip: p, .. }, SymRef::Addr { ip: q, .. }) => p.cmp(q),
    })
}

fn signed_distance(a: u64, b: u64) -> Ordering {
    (a as i64).cmp(&(b as i64))
}

/// C's `%3.3d`: at least three digits.
fn three_digits(v: i32) -> String {
    if v < 0 {
        format!("-{:03}", v.unsigned_abs())
    } else {
        format!("{v:03}")
    }
}

/// What one entry's keys are made of.
pub(super) struct KeyCtx {
    pub(super) comm: u32,
    pub(super) thread: u32,
    pub(super) cpu: u32,
    /// The sample's tag ([`crate::collect::SampleKey::tag`]).
    pub(super) tag: u32,
    pub(super) dso: u32,
    pub(super) sym: SymRef,
    /// The location (loc id) the entry's address came from.
    pub(super) loc: u32,
    pub(super) parent: Option<u32>,
    /// The entry is a sample's own address, not a callchain frame: perf
    /// keeps the former map-relative and the latter raw, and maps both
    /// back to the process for the `addr` key (a callchain frame's
    /// address so ends up moved by the map's offset twice).
    pub(super) own: bool,
    /// In branch mode, the sampled branch the entry counts.
    pub(super) branch: Option<crate::collect::Branch>,
}

/// The L1 data cache's line size, as perf takes it (glibc's
/// `sysconf(_SC_LEVEL1_DCACHE_LINESIZE)`, 0 where it cannot tell).
pub(super) fn cacheline_size() -> u64 {
    // SAFETY: sysconf only reads system information.
    let n = unsafe { libc::sysconf(libc::_SC_LEVEL1_DCACHE_LINESIZE) };
    u64::try_from(n).unwrap_or(0)
}

/// What the `dcacheline` key needs of the machine.
pub(super) struct CacheLines {
    /// The cache line size in bytes (perf's `cacheline_size()`).
    pub(super) size: u64,
    /// Per thread: its process id.
    pub(super) pids: Vec<i32>,
    /// Per DSO: whether it has a file identity (an MMAP2 record gave one).
    pub(super) with_id: Vec<bool>,
}

/// Makes entries' keys, computing per location (once) the texts of keys
/// perf compares as text.
pub(super) struct KeyMaker<'a> {
    pub(super) keys: &'a [SortKey],
    pub(super) locs: &'a [Loc],
    pub(super) syms: &'a SymbolTable,
    pub(super) dso_names: &'a [String],
    /// Each DSO's row: the first DSO with its short name (perf's dso key
    /// compares short names, so two binaries named alike share a row).
    pub(super) dso_rows: Vec<u32>,
    pub(super) strings: Vec<String>,
    pub(super) string_ids: HashMap<String, u32>,
    /// Per loc id: its srcline and srcfile string ids (`u32::MAX`: not yet).
    pub(super) srclines: Vec<(u32, u32)>,
    /// Socket id per CPU (from the CPU topology; empty where unknown).
    pub(super) sockets: &'a [i32],
    /// Per DSO: its maps keep addresses as they are (heap, stack, JIT).
    pub(super) identity: Vec<bool>,
    /// Per thread: its cgroup namespace (for the `cgroup_id` key).
    pub(super) cgroup_ns: Vec<(u64, u64)>,
    /// What the `dcacheline` key needs (None without the key).
    pub(super) cache_lines: Option<CacheLines>,
    /// Memory mode: per data symbol name, the first symbol id with it
    /// (entries of one data address and symbol name are one entry).
    data_sym_names: HashMap<String, u32>,
    /// Per sample tag: time bucket, cgroup id, raw data (for `time`,
    /// `cgroup` and `trace`).
    pub(super) tags: &'a [crate::collect::Tag],
    /// Per raw data of [`crate::collect::Collector::trace_raws`]: its
    /// formatted fields (None: not a tracepoint's).
    pub(super) trace_texts: &'a [Option<String>],
    /// `--ns`: times to the nanosecond.
    pub(super) nanosecs: bool,
    /// Branch mode: some sampled branch has a cycle count.
    pub(super) lbr_cycles: bool,
    /// Call graphs keyed by address: an entry made from a chain's frame
    /// takes the frame's source line, which perf names without the
    /// symbol (`+OFF` where no line is known).
    pub(super) chain_srclines_bare: bool,
}

/// perf's text for an address without a source line or map.
const SRCLINE_UNKNOWN: &str = "??:0";

impl<'a> KeyMaker<'a> {
    pub(super) fn new(
        keys: &'a [SortKey],
        locs: &'a [Loc],
        syms: &'a SymbolTable,
        dso_names: &'a [String],
        dso_rows: Vec<u32>,
        sockets: &'a [i32],
    ) -> Self {
        let lines = keys.iter().any(|k| k.needs_srclines());
        KeyMaker {
            keys,
            locs,
            syms,
            dso_names,
            dso_rows,
            strings: Vec::new(),
            string_ids: HashMap::default(),
            srclines: if lines {
                vec![(u32::MAX, u32::MAX); locs.len()]
            } else {
                Vec::new()
            },
            sockets,
            identity: Vec::new(),
            cgroup_ns: Vec::new(),
            cache_lines: None,
            data_sym_names: HashMap::default(),
            tags: &[],
            trace_texts: &[],
            nanosecs: false,
            lbr_cycles: false,
            chain_srclines_bare: false,
        }
    }

    /// What tells entries with keys `keys` apart, where it is less than
    /// their text: perf's `symbol_daddr` compares the data address and the
    /// symbol's name, not the symbol's map or offset, so samples of one
    /// address in two processes' copies of a symbol are one entry, shown as
    /// the first. Writes the keys to compare into `out` and returns true
    /// where they differ from `keys`.
    pub(super) fn merge_view(&mut self, keys: &[Key], out: &mut Vec<Key>) -> bool {
        if !keys.iter().any(|k| matches!(k, Key::DataSym { .. })) {
            return false;
        }
        out.clear();
        for k in keys {
            out.push(match *k {
                Key::DataSym { addr, sym, .. } => {
                    let sym = match self.syms.syms.get(sym as usize) {
                        Some(s) => *self.data_sym_names.entry(s.name.clone()).or_insert(sym),
                        None => u32::MAX,
                    };
                    Key::DataSym {
                        addr,
                        sym,
                        off: 0,
                        dso: 0,
                    }
                }
                k => k,
            });
        }
        true
    }

    /// With the samples' tags (see [`crate::collect::SampleKey::tag`]).
    pub(super) fn with_tags(
        mut self,
        tags: &'a [crate::collect::Tag],
        trace_texts: &'a [Option<String>],
        nanosecs: bool,
    ) -> Self {
        self.tags = tags;
        self.trace_texts = trace_texts;
        self.nanosecs = nanosecs;
        self
    }

    /// With what the `dcacheline` key needs.
    pub(super) fn with_cache_lines(mut self, c: Option<CacheLines>) -> Self {
        self.cache_lines = c;
        self
    }

    /// With each thread's cgroup namespace (for the `cgroup_id` key).
    pub(super) fn with_cgroup_ns(mut self, ns: Vec<(u64, u64)>) -> Self {
        self.cgroup_ns = ns;
        self
    }

    /// Whether some sampled branch has a cycle count (branch mode).
    /// With chain entries' source lines as an address-keyed call graph
    /// names its frames (see [`Self::chain_srclines_bare`]).
    pub(super) fn with_chain_srclines_bare(mut self, bare: bool) -> Self {
        self.chain_srclines_bare = bare;
        self
    }

    pub(super) fn with_lbr_cycles(mut self, cycles: bool) -> Self {
        self.lbr_cycles = cycles;
        self
    }

    /// With each DSO's identity-mapping flag (for the `addr` key).
    pub(super) fn with_identity(mut self, identity: Vec<bool>) -> Self {
        self.identity = identity;
        self
    }

    pub(super) fn intern(&mut self, s: &str) -> u32 {
        if let Some(&i) = self.string_ids.get(s) {
            return i;
        }
        let i = self.strings.len() as u32;
        self.strings.push(s.to_owned());
        self.string_ids.insert(s.to_owned(), i);
        i
    }

    /// perf's srcline and srcfile texts of a location: `file:line`, where
    /// DWARF (or, as `??:0`, the symbol table) covers the address; else
    /// `symbol+offset` (decimal) or `dso[address]`; `??:0` without a map.
    /// The srcfile is the file part of a found line, else empty.
    /// The source line perf gives a chain's frame in an address-keyed call
    /// graph (its `callchain_srcline`): [`Self::srcline`]'s, but `+OFF`
    /// without the symbol's name where the line is not known.
    fn chain_srcline(&mut self, lid: u32) -> u32 {
        let line = self.srcline(lid).0;
        let ls = self.syms.per_loc.get(lid as usize);
        match ls {
            Some(ls) if ls.line.is_none() && ls.sym.is_some() => {
                let bare = format!("+{}", ls.sym_offset);
                self.intern(&bare)
            }
            _ => line,
        }
    }

    pub(super) fn srcline(&mut self, lid: u32) -> (u32, u32) {
        if let Some(&(l, f)) = self.srclines.get(lid as usize) {
            if l != u32::MAX {
                return (l, f);
            }
        }
        let loc = &self.locs[lid as usize];
        let ls = self.syms.per_loc.get(lid as usize);
        let (line, file) = if loc.dso == NO_DSO {
            (SRCLINE_UNKNOWN.to_owned(), String::new())
        } else if let Some(pos) = ls.and_then(|l| l.line) {
            let name = self
                .syms
                .files
                .get(pos.file as usize)
                .map_or("??", String::as_str);
            let text = format!("{name}:{}", pos.line);
            let file = if text == SRCLINE_UNKNOWN {
                String::new()
            } else {
                // perf cuts the text at its first colon.
                text.split(':').next().unwrap_or("").to_owned()
            };
            (text, file)
        } else if let Some((s, ls)) = ls.and_then(|l| l.sym.map(|s| (s, l))) {
            let name = &self.syms.syms[s as usize].name;
            (format!("{name}+{}", ls.sym_offset), String::new())
        } else {
            let dso = self
                .dso_names
                .get(loc.dso as usize)
                .map_or("", String::as_str);
            // The address in the binary's own terms, where it was read.
            let at = ls.and_then(|l| l.svma).unwrap_or(loc.rel);
            (format!("{dso}[{at:x}]"), String::new())
        };
        let ids = (self.intern(&line), self.intern(&file));
        if let Some(slot) = self.srclines.get_mut(lid as usize) {
            *slot = ids;
        }
        ids
    }

    /// A branch end's location id and location (`from` or to).
    fn branch_end(&self, c: &KeyCtx, from: bool) -> Option<(u32, Loc)> {
        let b = c.branch?;
        let lid = if from { b.from } else { b.to };
        Some((lid, *self.locs.get(lid as usize)?))
    }

    /// The `dcacheline` key of a sample (perf's `sort__dcacheline_cmp` and
    /// `hist_entry__dcacheline_snprintf`): the line of the data address in
    /// its map's terms, and the data symbol, whose offset perf takes from
    /// that line to the symbol's start in the process.
    fn dcacheline(&mut self, c: &KeyCtx) -> Key {
        let tag = self.tags.get(c.tag as usize);
        let daddr = tag.map_or(0, |t| t.daddr);
        let dloc = tag.map_or(u32::MAX, |t| t.dloc);
        let map = tag.map_or(0, |t| t.data_map);
        let (rel, dso, own_level) = self
            .locs
            .get(dloc as usize)
            .map_or((daddr, NO_DSO, b'.'), |l| (l.rel, l.dso, l.level));
        let (size, pid, with_id) = match &self.cache_lines {
            Some(cl) => (
                cl.size,
                cl.pids.get(c.thread as usize).copied().unwrap_or(0),
                cl.with_id.get(dso as usize).copied().unwrap_or(false),
            ),
            None => (64, 0, false),
        };
        // (A size of 0 makes every line 0, as in perf.)
        let line = rel & !size.wrapping_sub(1);
        let cpumode = match own_level {
            b'k' => 1,
            b'.' => 2,
            b'g' => 4,
            b'u' => 5,
            _ => 3,
        };
        let mapped = dso != NO_DSO;
        let shared = map & crate::collect::DATA_SHARED != 0;
        let user = cpumode != 1;
        let anon = user && mapped && !shared && !with_id;
        let level = if user && mapped && shared && with_id && map & crate::collect::DATA_EXEC == 0 {
            b's'
        } else if !mapped {
            b'X'
        } else {
            0
        };
        let found = self
            .syms
            .per_loc
            .get(dloc as usize)
            .and_then(|l| Some((l.sym?, l.sym_offset)));
        let text = match found.and_then(|(s, off)| Some((self.syms.syms.get(s as usize)?, off))) {
            Some((s, off)) if s.object => {
                let start = daddr.wrapping_sub(off);
                format!("{}\0+{:#x}", s.name, line.wrapping_sub(start))
            }
            Some((s, _)) => format!("{}\0", s.name),
            None => String::new(),
        };
        Key::Dcacheline {
            line,
            dso,
            pid: if anon { pid } else { 0 },
            text: self.intern(&text),
            cpumode,
            level,
        }
    }

    /// A memory key's field of the sample's data source word.
    fn data_src(&self, c: &KeyCtx, f: MemField) -> Key {
        let word = self.tags.get(c.tag as usize).map_or(0, |t| t.data_src);
        Key::DataSrc(f, word & f.mask())
    }

    pub(super) fn make(&mut self, out: &mut Vec<Key>, c: &KeyCtx) {
        out.clear();
        for k in self.keys {
            let key = match k {
                SortKey::Mem => self.data_src(c, MemField::Lvl),
                SortKey::Snoop => self.data_src(c, MemField::Snoop),
                SortKey::Tlb => self.data_src(c, MemField::Tlb),
                SortKey::Locked => self.data_src(c, MemField::Lock),
                SortKey::Blocked => self.data_src(c, MemField::Blk),
                SortKey::Dcacheline => self.dcacheline(c),
                SortKey::SymDaddr => {
                    let tag = self.tags.get(c.tag as usize);
                    let addr = tag.map_or(0, |t| t.daddr);
                    let dloc = tag.map_or(u32::MAX, |t| t.dloc);
                    let dso = self.locs.get(dloc as usize).map_or(NO_DSO, |l| l.dso);
                    let found = self
                        .syms
                        .per_loc
                        .get(dloc as usize)
                        .and_then(|l| Some((l.sym?, l.sym_offset)));
                    match found {
                        Some((sym, off)) => Key::DataSym {
                            addr,
                            sym,
                            off: u32::try_from(off).unwrap_or(u32::MAX),
                            dso,
                        },
                        None => Key::DataSym {
                            addr,
                            sym: u32::MAX,
                            off: 0,
                            dso,
                        },
                    }
                }
                // perf's `symbol_iaddr`: the instruction's address (raw)
                // and its symbol, compared and shown as `symbol_daddr`'s.
                SortKey::SymIaddr => {
                    let l = &self.locs[c.loc as usize];
                    let (sym, off) = match c.sym {
                        SymRef::Sym(s) => (
                            s,
                            self.syms
                                .per_loc
                                .get(c.loc as usize)
                                .map_or(0, |l| l.sym_offset),
                        ),
                        SymRef::Addr { .. } => (u32::MAX, 0),
                    };
                    Key::DataSym {
                        addr: l.ip,
                        sym,
                        off: u32::try_from(off).unwrap_or(u32::MAX),
                        dso: l.dso,
                    }
                }
                SortKey::DsoDaddr => {
                    let dso = self
                        .tags
                        .get(c.tag as usize)
                        .and_then(|t| self.locs.get(t.dloc as usize))
                        .map_or(NO_DSO, |l| l.dso);
                    let dso = self.dso_rows.get(dso as usize).copied().unwrap_or(dso);
                    Key::DsoDaddr((dso != NO_DSO).then_some(dso))
                }
                SortKey::DataPageSize => {
                    Key::DataPageSize(self.tags.get(c.tag as usize).map_or(0, |t| t.data_page))
                }
                SortKey::PhysDaddr => {
                    Key::PhysDaddr(self.tags.get(c.tag as usize).map_or(0, |t| t.phys))
                }
                SortKey::Comm => Key::Comm(c.comm),
                SortKey::Pid => Key::Thread(c.thread),
                SortKey::Dso => {
                    let dso = self.dso_rows.get(c.dso as usize).copied().unwrap_or(c.dso);
                    Key::Dso((dso != NO_DSO).then_some(dso))
                }
                // perf tells unresolved symbols apart by address only.
                SortKey::Sym => Key::Sym(unresolved_by_address(c.sym)),
                SortKey::Srcline if !c.own && self.chain_srclines_bare => {
                    Key::Srcline(self.chain_srcline(c.loc))
                }
                SortKey::Srcline => Key::Srcline(self.srcline(c.loc).0),
                SortKey::Srcfile => Key::Srcfile(self.srcline(c.loc).1),
                SortKey::Parent => Key::Parent(c.parent),
                SortKey::Cpu => Key::Cpu(c.cpu),
                SortKey::SymOff => {
                    let off = match c.sym {
                        SymRef::Sym(_) => self
                            .syms
                            .per_loc
                            .get(c.loc as usize)
                            .map_or(0, |l| l.sym_offset),
                        SymRef::Addr { .. } => 0,
                    };
                    Key::SymOff(c.sym, off)
                }
                SortKey::SymSize => Key::SymSize(match c.sym {
                    SymRef::Sym(s) => Some(self.syms.syms[s as usize].size),
                    SymRef::Addr { .. } => None,
                }),
                SortKey::DsoSize => {
                    let l = &self.locs[c.loc as usize];
                    let kernel = self
                        .dso_names
                        .get(l.dso as usize)
                        .is_some_and(|n| n == "[kernel.kallsyms]");
                    let size = match self.syms.kernel_extent {
                        Some((start, end)) if kernel => end.wrapping_sub(start),
                        _ => l.map_size,
                    };
                    Key::DsoSize((l.dso != NO_DSO).then_some(size))
                }
                SortKey::IpcNull => Key::IpcNull(unresolved_by_address(c.sym)),
                SortKey::IpcLbr => Key::IpcLbr(unresolved_by_address(c.sym), self.lbr_cycles),
                SortKey::Addr => {
                    let l = &self.locs[c.loc as usize];
                    // perf's map__unmap_ip: `rel` back by the map's shift.
                    let shift = l.ip.wrapping_sub(l.rel);
                    let kept = if c.own { l.rel } else { l.ip };
                    let identity = self.identity.get(l.dso as usize).copied().unwrap_or(true);
                    Key::Addr(if identity {
                        l.ip
                    } else {
                        kept.wrapping_add(shift)
                    })
                }
                SortKey::Socket => {
                    Key::Socket(self.sockets.get(c.cpu as usize).copied().unwrap_or(-1))
                }
                SortKey::Time => {
                    let t = self.tags.get(c.tag as usize).map_or(0, |t| t.time);
                    Key::Time(t, self.nanosecs)
                }
                SortKey::Cgroup => {
                    Key::Cgroup(self.tags.get(c.tag as usize).map_or(0, |t| t.cgroup))
                }
                SortKey::CodePageSize => {
                    Key::CodePageSize(self.tags.get(c.tag as usize).map_or(0, |t| t.code_page))
                }
                SortKey::LocalWeight | SortKey::Weight => {
                    Key::Weight(self.tags.get(c.tag as usize).map_or(0, |t| t.weight))
                }
                SortKey::LocalInsLat | SortKey::InsLat => {
                    Key::InsLat(self.tags.get(c.tag as usize).map_or(0, |t| t.ins_lat))
                }
                SortKey::Transaction => {
                    Key::Transaction(self.tags.get(c.tag as usize).map_or(0, |t| t.transaction))
                }
                SortKey::Trace => {
                    let text = self
                        .tags
                        .get(c.tag as usize)
                        .and_then(|t| self.trace_texts.get(t.trace as usize))
                        .and_then(Option::as_deref);
                    Key::Trace(text.map(|t| self.intern(t)))
                }
                SortKey::CgroupId => {
                    let (dev, ino) = self
                        .cgroup_ns
                        .get(c.thread as usize)
                        .copied()
                        .unwrap_or((0, 0));
                    Key::CgroupId(dev, ino)
                }
                SortKey::DsoFrom | SortKey::DsoTo => {
                    let end = self.branch_end(c, *k == SortKey::DsoFrom);
                    Key::BranchDso(
                        end.map(|(_, l)| l.dso)
                            .filter(|&d| d != NO_DSO)
                            .map(|d| self.dso_rows.get(d as usize).copied().unwrap_or(d)),
                    )
                }
                SortKey::SymFrom | SortKey::SymTo => {
                    match self.branch_end(c, *k == SortKey::SymFrom) {
                        Some((lid, l)) => match super::sym_ref_of(self.syms, lid, &l) {
                            s @ SymRef::Sym(_) => Key::BranchSym(s, 0, l.level),
                            SymRef::Addr { .. } => Key::BranchSym(
                                SymRef::Addr {
                                    ip: l.rel,
                                    dso: NO_DSO,
                                },
                                l.ip,
                                l.level,
                            ),
                        },
                        None => Key::BranchSym(SymRef::Addr { ip: 0, dso: NO_DSO }, 0, b'H'),
                    }
                }
                SortKey::AddrFrom | SortKey::AddrTo => {
                    match self.branch_end(c, *k == SortKey::AddrFrom) {
                        Some((lid, l)) => {
                            let text = match super::sym_ref_of(self.syms, lid, &l) {
                                SymRef::Sym(s) => {
                                    let off = self
                                        .syms
                                        .per_loc
                                        .get(lid as usize)
                                        .map_or(0, |p| p.sym_offset);
                                    let name = &self.syms.syms[s as usize].name;
                                    // (A NUL between name and offset: the
                                    // name alone is cut to the column.)
                                    if off == 0 {
                                        name.clone()
                                    } else {
                                        format!("{name}\0+{off:#x}")
                                    }
                                }
                                // C's `%-#.16llx`: no `0x` for zero.
                                SymRef::Addr { .. } if l.rel == 0 => "0".repeat(16),
                                SymRef::Addr { .. } => format!("{:#018x}", l.rel),
                            };
                            let dso = (l.dso != NO_DSO).then(|| {
                                self.dso_rows.get(l.dso as usize).copied().unwrap_or(l.dso)
                            });
                            Key::BranchAddr(dso, l.ip, self.intern(&text))
                        }
                        None => Key::BranchAddr(None, 0, self.intern("N/A")),
                    }
                }
                // A branch end's srcline, as the `srcline` key's of its
                // address (perf's `map__srcline`): entries of one text are
                // one, ties in text order.
                SortKey::SrclineFrom | SortKey::SrclineTo => {
                    match self.branch_end(c, *k == SortKey::SrclineFrom) {
                        Some((lid, _)) => Key::Srcline(self.srcline(lid).0),
                        None => Key::Srcline(self.intern(SRCLINE_UNKNOWN)),
                    }
                }
                SortKey::Mispredict => Key::Mispredict(match c.branch {
                    Some(b) if b.flags & 2 != 0 => b'N',
                    Some(b) if b.flags & 1 != 0 => b'Y',
                    _ => 0,
                }),
                SortKey::InTx => Key::InTx(c.branch.is_some_and(|b| b.flags & 4 != 0)),
                SortKey::Abort => Key::Abort(c.branch.is_some_and(|b| b.flags & 8 != 0)),
                SortKey::Cycles => {
                    Key::Cycles(c.branch.map_or(0, |b| ((b.flags >> 4) & 0xffff) as u16))
                }
            };
            out.push(key);
        }
    }
}

/// A page size as perf names it: `4K`, `2M`, `1G` (`N/A` for none).
pub fn page_size_name(size: u64) -> String {
    if size == 0 {
        return "N/A".into();
    }
    let units = ['B', 'K', 'M', 'G'];
    let (mut n, mut i) = (size, 0);
    while n / 1024 > 1 && i < 3 {
        n /= 1024;
        i += 1;
    }
    format!("{n}{}", units[i])
}

/// perf 6.1's text of one field of a data source word (its `mem-events.c`
/// `perf_mem__*_scnprintf`; `script -F data_src` joins them).
pub fn mem_text(f: MemField, word: u64) -> String {
    // Each set bit's name, joined by " or ".
    fn or_names(m: u64, names: &[&str], out: &mut String) {
        for (i, name) in names.iter().enumerate() {
            if m >> i & 1 != 0 {
                if !out.is_empty() {
                    out.push_str(" or ");
                }
                out.push_str(name);
            }
        }
    }
    // `N/A` for no name, then the field's hit and miss bits (1 and 2).
    fn na_hit_miss(out: &mut String, m: u64) {
        if out.is_empty() {
            out.push_str("N/A");
        }
        if m & 2 != 0 {
            out.push_str(" hit");
        }
        if m & 4 != 0 {
            out.push_str(" miss");
        }
    }
    let bits = |shift: u32, width: u32| word >> shift & ((1 << width) - 1);
    match f {
        MemField::Lvl => {
            const LVL: [&str; 14] = [
                "N/A",
                "HIT",
                "MISS",
                "L1",
                "LFB",
                "L2",
                "L3",
                "Local RAM",
                "Remote RAM (1 hop)",
                "Remote RAM (2 hops)",
                "Remote Cache (1 hop)",
                "Remote Cache (2 hops)",
                "I/O",
                "Uncached",
            ];
            const HOPS: [&str; 5] = [
                "N/A",
                "core, same node",
                "node, same socket",
                "socket, same board",
                "board",
            ];
            let lvl = bits(5, 14);
            let (lvl_num, remote, hops) = (bits(33, 4), bits(37, 1), bits(43, 3));
            let mut out = String::new();
            if remote != 0 {
                out.push_str("Remote ");
            }
            // (The hops name the level where set; else the level bits do.)
            let mut names = String::new();
            if hops != 0 {
                out.push_str(HOPS.get(hops as usize).copied().unwrap_or("(null)"));
                out.push(' ');
            } else {
                or_names(lvl & !0b110, &LVL, &mut names);
            }
            if lvl_num != 0 {
                if !names.is_empty() {
                    names.push_str(" or ");
                }
                match lvl_num {
                    0x0b => names.push_str("Any cache"),
                    0x0c => names.push_str("LFB"),
                    0x0d => names.push_str("RAM"),
                    0x0e => names.push_str("PMEM"),
                    0x0f => names.push_str("N/A"),
                    n => names.push_str(&format!("L{n}")),
                }
            }
            out.push_str(&names);
            na_hit_miss(&mut out, lvl);
            out
        }
        MemField::Snoop => {
            let mut out = String::new();
            or_names(
                bits(19, 5),
                &["N/A", "None", "Hit", "Miss", "HitM"],
                &mut out,
            );
            // (perf 6.1 names the forward bit of the extended field alone.)
            or_names(bits(38, 1), &["Fwd"], &mut out);
            if out.is_empty() {
                out.push_str("N/A");
            }
            out
        }
        MemField::Tlb => {
            let m = bits(26, 7);
            let mut out = String::new();
            or_names(
                m & !0b110,
                &["N/A", "HIT", "MISS", "L1", "L2", "Walker", "Fault"],
                &mut out,
            );
            na_hit_miss(&mut out, m);
            out
        }
        MemField::Lock => match bits(24, 2) {
            m if m & 1 != 0 => "N/A".to_owned(),
            m if m & 2 != 0 => "Yes".to_owned(),
            _ => "No".to_owned(),
        },
        MemField::Blk => {
            let m = bits(40, 3);
            if m == 0 || m & 1 != 0 {
                " N/A".to_owned()
            } else {
                let mut out = String::new();
                if m & 2 != 0 {
                    out.push_str(" Data");
                }
                if m & 4 != 0 {
                    out.push_str(" Addr");
                }
                out
            }
        }
    }
}

/// An unresolved symbol without its DSO: perf's symbol keys compare such
/// entries by address only.
fn unresolved_by_address(sym: SymRef) -> SymRef {
    match sym {
        SymRef::Addr { ip, .. } => SymRef::Addr { ip, dso: NO_DSO },
        s => s,
    }
}

/// perf's text for a sample's transaction flags: the flag names, `NEITHER`
/// for a transaction neither synchronous nor asynchronous, and the abort
/// code after a colon.
pub fn transaction_text(t: u64) -> String {
    const ABORT_MASK: u64 = 0xffff_ffff << 32;
    const BITS: [(u64, &str); 8] = [
        (1 << 0, "EL "),
        (1 << 1, "TX "),
        (1 << 2, "SYNC "),
        (1 << 3, "ASYNC "),
        (1 << 4, "RETRY "),
        (1 << 5, "CON "),
        (1 << 6, "CAP-WRITE "),
        (1 << 7, "CAP-READ "),
    ];
    let mut s = String::new();
    for (bit, name) in BITS {
        if t & bit != 0 {
            s.push_str(name);
        }
    }
    if t != 0 && t & (1 << 2 | 1 << 3) == 0 {
        s.push_str("NEITHER ");
    }
    if t & ABORT_MASK != 0 {
        s.push_str(&format!(":{:x}", (t & ABORT_MASK) >> 32));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::transaction_text;

    #[test]
    fn transaction_flags_read_as_perf_prints_them() {
        assert_eq!(transaction_text(0), "");
        assert_eq!(transaction_text(1 << 1 | 1 << 2 | 5 << 32), "TX SYNC :5");
        assert_eq!(transaction_text(1 << 1), "TX NEITHER ");
        assert_eq!(
            transaction_text(1 << 0 | 1 << 3 | 1 << 7),
            "EL ASYNC CAP-READ "
        );
    }
}
