//! Demangling of Itanium C++ and Rust symbol names into the forms perf and
//! `c++filt` print.
//!
//! C++ names go through GNU libiberty's `cplus_demangle` (the `cplus_demangle`
//! crate), the demangler both perf 6.1 and `c++filt` call: perf's default
//! short form is its output without options, and `c++filt`'s is its output
//! with parameters, qualifiers and the standard streams and strings spelled
//! out (c++filt's `DMGL_VERBOSE`). Rust names go through `rustc-demangle`.

/// Demangles a C++ (Itanium ABI) or Rust (legacy or v0) symbol name; any other name comes
/// back unchanged, leading underscores included.
///
/// Rust legacy names are printed without their hash, as perf does. C++ names are
/// `c++filt`'s output.
pub fn demangle(name: &str) -> String {
    // Synthesised PLT names carry a suffix no demangler knows.
    if let Some(base) = name.strip_suffix("@plt") {
        return format!("{}@plt", demangle(base));
    }
    if let Ok(d) = rustc_demangle::try_demangle(name) {
        return format!("{d:#}");
    }
    if let Some(cpp) = libiberty(name, true) {
        return verbose(&cpp);
    }
    name.to_owned()
}

/// Like [`demangle`], but Rust names keep their hash (legacy) and crate disambiguators
/// (v0), exactly as `c++filt` prints them.
pub fn demangle_full(name: &str) -> String {
    if let Some(base) = name.strip_suffix("@plt") {
        return format!("{}@plt", demangle_full(base));
    }
    if let Ok(d) = rustc_demangle::try_demangle(name) {
        return d.to_string();
    }
    demangle(name)
}

/// A name as `objdump -C` prints it (binutils' `bfd_demangle`, which perf annotate's
/// output shows): libiberty with parameters but without c++filt's verbose spelling
/// (`std::istream`, Rust names without their hash), a version or `@plt` after the name
/// kept as it is. None where libiberty does not read the name (objdump prints it as it is,
/// and `objdump -l` adds `()` to a function's).
pub fn demangle_objdump(name: &str) -> Option<String> {
    let (base, suffix) = name.split_at(name.find('@').unwrap_or(name.len()));
    libiberty(base, true).map(|d| d + suffix)
}

/// The short form perf 6.1 prints: C++ names without parameter lists,
/// qualifiers and return types (`ns::Box<long>::get`, `twice<long>`), Rust
/// names without their hash; other names unchanged.
pub fn demangle_short(name: &str) -> String {
    if let Some(base) = name.strip_suffix("@plt") {
        return format!("{}@plt", demangle_short(base));
    }
    if let Ok(d) = rustc_demangle::try_demangle(name) {
        return format!("{d:#}");
    }
    libiberty(name, false).unwrap_or_else(|| name.to_owned())
}

/// libiberty's answer, with (`c++filt`) or without (perf) parameters and
/// qualifiers; None for a name it does not read.
fn libiberty(name: &str, params: bool) -> Option<String> {
    // Mangled names are ASCII (a length prefix cutting a multi-byte identifier
    // would make a name that is not UTF-8). Only `_Z` names are C++ (libiberty would also
    // rewrite some plain names, which perf and c++filt leave alone here).
    if !name.is_ascii() || !(name.starts_with("_Z") || name.starts_with("_R")) {
        return None;
    }
    let name = std::ffi::CString::new(name).ok()?;
    let options = if params { DMGL_PARAMS | DMGL_ANSI } else { 0 };
    // SAFETY: `name` is NUL-terminated and lives across the call; libiberty returns a
    // string it allocated with malloc, or NULL.
    let out = unsafe { cplus_demangle(name.as_ptr(), options) };
    if out.is_null() {
        return None;
    }
    // SAFETY: `out` is a NUL-terminated string libiberty owns until we free it, once, here.
    let text = unsafe { std::ffi::CStr::from_ptr(out) }
        .to_string_lossy()
        .into_owned();
    unsafe { libc::free(out.cast()) };
    Some(text)
}

// libiberty's demangler, linked as perf links it (`demangle.h`). Called directly rather than
// through a wrapper crate: the one used before never freed the strings it returned (the
// fuzz target's leak checker found it).
// (No `kind = "static"`: the linker finds Debian's libiberty.a in its own search path.)
#[link(name = "iberty")]
extern "C" {
    fn cplus_demangle(
        mangled: *const std::ffi::c_char,
        options: std::ffi::c_int,
    ) -> *mut std::ffi::c_char;
}

/// `demangle.h`: print the parameters, and `const` and the like.
const DMGL_PARAMS: std::ffi::c_int = 1 << 0;
const DMGL_ANSI: std::ffi::c_int = 1 << 1;

/// libiberty prints the standard substitutions `Ss`, `Si`, `So` and `Sd`
/// as `std::string`, `std::istream`, ... unless asked for c++filt's verbose
/// form, which the crate cannot ask for: they are spelled out here. The
/// abbreviations appear in its output only for those substitutions.
fn verbose(s: &str) -> String {
    const LONG: [(&str, &str); 4] = [
        (
            "std::string",
            "std::basic_string<char, std::char_traits<char>, std::allocator<char> >",
        ),
        (
            "std::istream",
            "std::basic_istream<char, std::char_traits<char> >",
        ),
        (
            "std::ostream",
            "std::basic_ostream<char, std::char_traits<char> >",
        ),
        (
            "std::iostream",
            "std::basic_iostream<char, std::char_traits<char> >",
        ),
    ];
    if !s.contains("std::") {
        return s.to_owned();
    }
    let mut out = String::with_capacity(s.len() + 64);
    let mut rest = s;
    'outer: while !rest.is_empty() {
        // Only at the start of a name (not `xstd::string`).
        let at_start = !out.ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_' || c == ':');
        if at_start && rest.starts_with("std::") {
            for (short, long) in LONG {
                if let Some(after) = rest.strip_prefix(short) {
                    if after.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_') {
                        continue;
                    }
                    out.push_str(long);
                    // As the demangler separates closing brackets.
                    if after.starts_with('>') {
                        out.push(' ');
                    }
                    rest = after;
                    continue 'outer;
                }
            }
        }
        let c = rest.chars().next().unwrap_or_default();
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objdump_names_are_libiberty_without_verbose_spelling() {
        // objdump -C: the standard streams abbreviated, the version kept.
        assert_eq!(
            demangle_objdump("_ZNSi3getEv@@GLIBCXX_3.4").as_deref(),
            Some("std::istream::get()@@GLIBCXX_3.4")
        );
        assert_eq!(
            demangle("_ZNSi3getEv"),
            "std::basic_istream<char, std::char_traits<char> >::get()"
        );
        assert_eq!(
            demangle_objdump("_Z4takeRKSs@plt").as_deref(),
            Some("take(std::string const&)@plt")
        );
        // Rust legacy names lose their hash, as objdump prints them.
        assert_eq!(
            demangle_objdump("_ZN4core3ptr13drop_in_place17h0123456789abcdefE").as_deref(),
            Some("core::ptr::drop_in_place")
        );
        // Names libiberty does not read: objdump prints them as they are.
        assert_eq!(demangle_objdump("main"), None);
        assert_eq!(demangle_objdump("operator()"), None);
        assert_eq!(demangle_objdump("_Zbad"), None);
    }

    #[test]
    fn short_names_drop_signatures_like_perf() {
        assert_eq!(demangle_short("_ZN2ns3BoxIlE3getEi"), "ns::Box<long>::get");
        assert_eq!(
            demangle_short("_Z5twiceIlET_RKN2ns3BoxIS0_EEi"),
            "twice<long>"
        );
        assert_eq!(demangle_short("main"), "main");
        assert_eq!(
            demangle_short("_ZSt4swapIiENSt9enable_ifIXsrSt6__and_IJSt6__not_ISt15__is_tuple_likeIT_EESt21is_move_constructibleIS4_ESt18is_move_assignableIS4_EEE5valueEvE4typeERS4_SE_"),
            "std::swap<int>"
        );
        // perf keeps the standard abbreviations and drops a method's const.
        assert_eq!(demangle_short("_ZNSi3getEv"), "std::istream::get");
        assert_eq!(
            demangle_short("_ZZN1A1fEvENKUliE_clEi"),
            "A::f()::{lambda(int)#1}::operator()"
        );
        assert_eq!(demangle_short("_Z3fooi@plt"), "foo@plt");
    }

    #[test]
    fn full_names_spell_out_the_standard_streams_as_cxxfilt() {
        assert_eq!(
            demangle("_ZNSi3getEv"),
            "std::basic_istream<char, std::char_traits<char> >::get()"
        );
        assert_eq!(
            demangle("_ZNKSt4hashISsEclESs"),
            "std::hash<std::basic_string<char, std::char_traits<char>, std::allocator<char> > >::operator()(std::basic_string<char, std::char_traits<char>, std::allocator<char> >) const"
        );
        assert_eq!(verbose("my::std::string"), "my::std::string");
        assert_eq!(verbose("f(std::stringx)"), "f(std::stringx)");
    }

    #[test]
    fn foreign_bytes_are_left_alone() {
        assert_eq!(demangle("_Z1\u{e9}v"), "_Z1\u{e9}v");
        assert_eq!(demangle_short("_Z"), "_Z");
        assert_eq!(demangle("_Z3fooILi"), "_Z3fooILi");
    }
}
