//! perf fits the kernel map to the kernel's symbols once it loads them, so
//! kernel addresses past the end the MMAP record gave (the init text:
//! `start_kernel` under every idle stack of CPU 0) are named, in
//! `[kernel.kallsyms]`. Pass two does the same for locations pass one found
//! in no map.

use profile::collect::{Interner, Loc, Origin, NO_DSO};
use profile::machine::Dso;
use profile::symbolize::{symbolize_with_kernel, SymbolizeOptions};

const KALLSYMS: &str = "ffffffff81000000 T _stext
ffffffff81000000 T _text
ffffffff81001000 T do_idle
ffffffff8220bb08 T _etext
ffffffff83783000 T _sinittext
ffffffff83783b00 T start_kernel
ffffffff83790850 T x86_64_start_kernel
ffffffff83790900 T __pfx_clear_bss
ffffffffc0000000 t some_fn\t[some_module]
";

fn loc(ip: u64, dso: u32) -> Loc {
    Loc {
        ip,
        rel: ip,
        dso,
        level: b'k',
        origin: Origin::Return,
        map_size: 0,
    }
}

#[test]
fn init_text_past_the_mmap_record_is_the_kernels() {
    let dsos = vec![Dso {
        name: "[kernel.kallsyms]".into(),
        build_id: None,
        hit: true,
        jit: None,
    }];
    let mut interner = Interner::default();
    let in_map = interner.loc_id(loc(0xffff_ffff_8100_1010, 0));
    let init = interner.loc_id(loc(0xffff_ffff_8378_423d, NO_DSO));
    // Past every kernel symbol and in no map: stays unknown.
    let beyond = interner.loc_id(loc(0xffff_ffff_9000_0000, NO_DSO));
    // A user address in no map is not the kernel's.
    let mut user = loc(0xffff_ffff_8378_4000, NO_DSO);
    user.level = b'.';
    let user = interner.loc_id(user);
    let kallsyms = symbols::Kallsyms::parse(KALLSYMS);
    let syms = symbolize_with_kernel(
        interner.locs(),
        &dsos,
        None,
        &SymbolizeOptions::default(),
        Some(Ok(kallsyms)),
    );
    let name = |l: u32| {
        syms.per_loc[l as usize]
            .sym
            .map(|s| syms.syms[s as usize].name.clone())
    };
    assert_eq!(name(in_map).as_deref(), Some("do_idle"));
    assert_eq!(name(init).as_deref(), Some("start_kernel"));
    assert_eq!(name(beyond), None);
    assert_eq!(name(user), None);
    let (dso, moved) = syms.into_kernel.clone().expect("a kernel DSO");
    assert_eq!((dso, moved.as_slice()), (0, &[init][..]));
    interner.move_into(&moved, dso);
    assert_eq!(interner.locs()[init as usize].dso, 0);
    assert_eq!(interner.locs()[beyond as usize].dso, NO_DSO);
    // The moved location is found by its new identity.
    let now = interner.locs()[init as usize];
    assert_eq!(interner.loc_id(now), init);
}
