//! Each location's text as `perf script` prints it, made once per field
//! set and use (a callchain line, or the sample's own location on its
//! header line) and copied for every sample passing through it.

use profile::collect::{Loc, NO_DSO};
use profile::machine::Dso;
use profile::symbolize::{SrcPos, SymbolTable};

use super::{write_frame, Fields, PrintedFrame};

/// The texts made so far, over the symbols of a replay's locations.
pub struct FrameTexts<'a> {
    locs: &'a [Loc],
    syms: &'a SymbolTable,
    /// The distinct field sets of the events.
    field_sets: Vec<Fields>,
    set_of_event: Vec<usize>,
    /// A sample's own DSO prints by its long name (kernel modules by
    /// path), callchain frames by [`Dso::chain_name`].
    dso_names: Vec<&'a str>,
    chain_dso_names: Vec<String>,
    /// perf names an address without a source line by the DSO's short
    /// name.
    short_dso_names: Vec<String>,
    identity: Vec<bool>,
    /// Per DSO: perf would not have loaded it by the time it prints a
    /// branch (no sample's own address fell in it, or it cannot be read).
    unloaded: Vec<bool>,
    arena: Vec<u8>,
    /// Per (field set, use: header line, callchain line, data address) and
    /// loc: the range in `arena`, once made.
    made: Vec<Vec<Option<(usize, usize)>>>,
}

impl<'a> FrameTexts<'a> {
    /// For locations `locs` with their symbols `syms`, in a session whose
    /// DSOs are `dsos`, printed with each event's `fields`.
    pub fn new(locs: &'a [Loc], syms: &'a SymbolTable, dsos: &'a [Dso], fields: &[Fields]) -> Self {
        let mut field_sets: Vec<Fields> = Vec::new();
        let set_of_event = fields
            .iter()
            .map(|f| match field_sets.iter().position(|g| g == f) {
                Some(i) => i,
                None => {
                    field_sets.push(*f);
                    field_sets.len() - 1
                }
            })
            .collect();
        let made = vec![vec![None; locs.len()]; field_sets.len() * 3];
        FrameTexts {
            locs,
            syms,
            field_sets,
            set_of_event,
            dso_names: dsos.iter().map(|d| d.name.as_str()).collect(),
            chain_dso_names: dsos.iter().map(Dso::chain_name).collect(),
            short_dso_names: dsos
                .iter()
                .map(|d| profile::hist::dso_short_name(&d.name))
                .collect(),
            identity: dsos.iter().map(Dso::maps_identity).collect(),
            unloaded: dsos
                .iter()
                .map(|d| !d.hit || syms.misses.iter().any(|(n, _)| *n == d.name))
                .collect(),
            arena: Vec::new(),
            made,
        }
    }

    /// The field set of event `ev`, and its fields (None for an event the
    /// plan does not know).
    pub fn fields_of_event(&self, ev: usize) -> Option<(usize, &Fields)> {
        let set = self.set_of_event.get(ev).copied().unwrap_or(0);
        Some((set, self.field_sets.get(set)?))
    }

    /// Location `loc`'s text with field set `set`, as a callchain's lines
    /// (`chain`) or on the header line.
    pub fn text(&mut self, set: usize, chain: bool, loc: u32) -> &[u8] {
        let slot = set * 2 + usize::from(chain);
        let (s, e) = match self.made[slot][loc as usize] {
            Some(r) => r,
            None => {
                let start = self.arena.len();
                let mut arena = std::mem::take(&mut self.arena);
                self.make(&mut arena, set, chain, loc);
                self.arena = arena;
                let r = (start, self.arena.len());
                self.made[slot][loc as usize] = Some(r);
                r
            }
        };
        &self.arena[s..e]
    }

    /// A sample's data address `loc` as perf prints it after the event
    /// name: the address, then its symbol (with offset) and DSO as field
    /// set `set` asks.
    pub fn addr_text(&mut self, set: usize, loc: u32) -> &[u8] {
        let slot = self.field_sets.len() * 2 + set;
        let (s, e) = match self.made[slot][loc as usize] {
            Some(r) => r,
            None => {
                let start = self.arena.len();
                let f = self.field_sets[set];
                let l = &self.locs[loc as usize];
                let ls = &self.syms.per_loc[loc as usize];
                let fr = PrintedFrame {
                    addr: l.ip,
                    sym: ls
                        .sym
                        .map(|i| (self.syms.syms[i as usize].name.as_str(), ls.sym_offset)),
                    inlined: false,
                    dso: self.dso_long_name(loc),
                    srcline: None,
                };
                let only = Fields {
                    ip: true,
                    sym: f.sym,
                    symoff: f.symoff,
                    dso: f.dso,
                    ..Fields::default()
                };
                let _ = write_frame(&mut self.arena, &fr, &only, false);
                let r = (start, self.arena.len());
                self.made[slot][loc as usize] = Some(r);
                r
            }
        };
        &self.arena[s..e]
    }

    /// The symbol of `loc` and the address's offset into it.
    pub fn symbol(&self, loc: u32) -> Option<(&str, u64)> {
        let ls = self.syms.per_loc.get(loc as usize)?;
        let sym = &self.syms.syms[ls.sym? as usize];
        Some((sym.name.as_str(), ls.sym_offset))
    }

    /// Whether one of the frames of `loc` (its inline ones too) is a
    /// function named in `names` (script's `--stop-bt`).
    pub fn has_frame_named(&self, loc: u32, names: &[String]) -> bool {
        let Some(ls) = self.syms.per_loc.get(loc as usize) else {
            return false;
        };
        let named = |id: u32| {
            self.syms
                .syms
                .get(id as usize)
                .is_some_and(|s| names.contains(&s.name))
        };
        ls.frames.iter().any(|&f| named(f)) || ls.sym.is_some_and(named)
    }

    /// The DSO `loc` fell in, by its long name (None: no map).
    pub fn dso_long_name(&self, loc: u32) -> Option<&'a str> {
        let l = self.locs.get(loc as usize)?;
        self.dso_names.get(l.dso as usize).copied()
    }

    /// Whether perf prints a branch end at `loc` by its offset into its
    /// map (`brstackoff`): where it has not loaded the DSO, which it does
    /// for those a sample's own address fell in and it can read. A loaded
    /// one has its symbols adjusted, and perf prints the address.
    pub fn prints_map_offset(&self, loc: u32) -> bool {
        self.locs
            .get(loc as usize)
            .and_then(|l| self.unloaded.get(l.dso as usize))
            .copied()
            .unwrap_or(false)
    }

    /// The symbol of `loc` as an id (two locations in one function give
    /// the same), its name and the address's offset into it.
    pub fn symbol_id(&self, loc: u32) -> Option<(u32, &str, u64)> {
        let ls = self.syms.per_loc.get(loc as usize)?;
        let id = ls.sym?;
        Some((id, self.syms.syms[id as usize].name.as_str(), ls.sym_offset))
    }

    /// The location's own source line, as perf's map__fprintf_srcline
    /// prints it: none without a map; `??:0` (addr2line found the symbol
    /// but no line) is left out; where addr2line has no answer, the DSO's
    /// short name and the address in the binary's terms.
    pub fn srcline(&self, loc: u32) -> Option<String> {
        let l = self.locs.get(loc as usize)?;
        if l.dso == NO_DSO {
            return None;
        }
        let ls = self.syms.per_loc.get(loc as usize)?;
        match &ls.line {
            Some(p) => {
                let file = self
                    .syms
                    .files
                    .get(p.file as usize)
                    .map_or("??", String::as_str);
                Some(format!("{file}:{}", p.line)).filter(|t| !t.starts_with("??:0"))
            }
            None => {
                let identity = self.identity.get(l.dso as usize).copied().unwrap_or(true);
                let at = ls.svma.unwrap_or(if identity { l.ip } else { l.rel });
                let dso = self
                    .short_dso_names
                    .get(l.dso as usize)
                    .map_or("", String::as_str);
                Some(format!("{dso}[{at:x}]"))
            }
        }
    }

    fn make(&self, arena: &mut Vec<u8>, set: usize, chain: bool, loc: u32) {
        let syms = self.syms;
        let l = &self.locs[loc as usize];
        let f = &self.field_sets[set];
        let dso = (l.dso != NO_DSO).then(|| {
            if chain {
                self.chain_dso_names[l.dso as usize].as_str()
            } else {
                self.dso_names[l.dso as usize]
            }
        });
        let ls = &syms.per_loc[loc as usize];
        // No DSO: `rel` is the address itself.
        let identity = self.identity.get(l.dso as usize).copied().unwrap_or(true);
        // (A kernel frame prints its address, a module's too.)
        let kernel = matches!(l.level, b'k' | b'g');
        let addr = if chain && !identity && !kernel {
            l.rel
        } else {
            l.ip
        };
        let pos_text = |p: &SrcPos| {
            let file = syms.files.get(p.file as usize).map_or("??", String::as_str);
            format!("{file}:{}", p.line)
        };
        let own_srcline = if f.srcline { self.srcline(loc) } else { None };
        let frame_of = |sym: Option<u32>| {
            let s = sym.map(|i| &syms.syms[i as usize]);
            PrintedFrame {
                addr,
                // The offset of the recorded address (one past the one
                // looked up for a return address looked up at address - 1);
                // inline frames keep their function's start.
                sym: s.map(|s| (s.name.as_str(), ls.sym_offset)),
                inlined: s.is_some_and(|s| s.inlined),
                dso,
                srcline: None,
            }
        };
        // Writing to a Vec cannot fail.
        if chain && !ls.frames.is_empty() {
            // Frames perf made from addr2line's inline records carry their
            // own positions, printed as they are (`??:0` too).
            let per_frame = f.srcline && ls.frame_lines.len() == ls.frames.len();
            for (i, &fid) in ls.frames.iter().enumerate() {
                let text = per_frame.then(|| pos_text(&ls.frame_lines[i]));
                let mut fr = frame_of(Some(fid));
                fr.srcline = if per_frame {
                    text.as_deref()
                } else {
                    own_srcline.as_deref()
                };
                let _ = write_frame(arena, &fr, f, true);
            }
        } else {
            let mut fr = frame_of(ls.sym);
            fr.srcline = own_srcline.as_deref();
            let _ = write_frame(arena, &fr, f, chain);
        }
    }
}
