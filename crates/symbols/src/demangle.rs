//! Demangling of Itanium C++ and Rust symbol names into the form perf prints.

use cpp_demangle::{DemangleOptions, Symbol};

/// Demangles a C++ (Itanium ABI) or Rust (legacy or v0) symbol name; any other name comes
/// back unchanged, leading underscores included.
///
/// Rust legacy names are printed without their hash, as perf does. C++ names aim at
/// `c++filt`'s output, which is what perf shows.
pub fn demangle(name: &str) -> String {
    // Synthesised PLT names carry a suffix no demangler knows.
    if let Some(base) = name.strip_suffix("@plt") {
        return format!("{}@plt", demangle(base));
    }
    if let Ok(d) = rustc_demangle::try_demangle(name) {
        return format!("{d:#}");
    }
    if let Some(cpp) = demangle_cpp(name) {
        return cpp;
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

fn demangle_cpp(name: &str) -> Option<String> {
    if !name.starts_with("_Z") {
        return None;
    }
    let sym = Symbol::new(name).ok()?;
    let out = sym.demangle_with_options(&DemangleOptions::new()).ok()?;
    let out = template_ctor_fix(name, &sym).unwrap_or(out);
    let out = expand_std_abbreviations(&out);
    let out = literal_suffixes(&out).replace("std::nullptr_t", "decltype(nullptr)");
    let mut out = split_closing_angles(&out);
    if name.contains("JE") {
        out = drop_empty_packs(out);
    }
    Some(special_name_wording(out))
}

/// An empty template parameter pack (`JE`) prints nothing in c++filt; cpp_demangle leaves
/// an empty argument (`<int, >`) and a bare `&&` parameter for its expansion.
fn drop_empty_packs(mut s: String) -> String {
    for (from, to) in [
        (", >", ">"),
        (", , ", ", "),
        ("<, ", "<"),
        (", &&)", ")"),
        (", &&, ", ", "),
        ("(&&, ", "("),
        ("(&&)", "()"),
    ] {
        while s.contains(from) {
            s = s.replace(from, to);
        }
    }
    s
}

/// Special names (vtables, typeinfo, guards) are worded as c++filt words them:
/// `vtable for X` where cpp_demangle writes `{vtable(X)}`.
fn special_name_wording(s: String) -> String {
    const WORDS: [(&str, &str); 7] = [
        ("{vtable(", "vtable for "),
        ("{vtt(", "VTT for "),
        ("{typeinfo(", "typeinfo for "),
        ("{typeinfo name(", "typeinfo name for "),
        ("{guard variable(", "guard variable for "),
        ("{tls init(", "TLS init function for "),
        ("{tls wrapper(", "TLS wrapper function for "),
    ];
    for (theirs, ours) in WORDS {
        if let Some(inner) = s.strip_prefix(theirs).and_then(|r| r.strip_suffix(")}")) {
            return format!("{ours}{inner}");
        }
    }
    s
}

/// c++filt separates closing template brackets (`> >`); only `operator>>` keeps `>>`.
fn split_closing_angles(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if c == '>' && out.ends_with('>') && !out.ends_with("operator>") {
            out.push(' ');
        }
        out.push(c);
    }
    out
}

/// c++filt writes integer template arguments as `1l`, `2ul`; cpp_demangle as `(long)1`.
fn literal_suffixes(s: &str) -> String {
    const SUFFIXES: [(&str, &str); 6] = [
        ("(int)", ""),
        ("(unsigned int)", "u"),
        ("(long)", "l"),
        ("(unsigned long)", "ul"),
        ("(long long)", "ll"),
        ("(unsigned long long)", "ull"),
    ];
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    'outer: while !rest.is_empty() {
        if rest.starts_with('(') && !out.ends_with(is_ident) {
            for (cast, suffix) in SUFFIXES {
                if let Some(after) = rest.strip_prefix(cast) {
                    let digits = after.strip_prefix('-').unwrap_or(after);
                    let n = digits.bytes().take_while(u8::is_ascii_digit).count();
                    if n > 0 && !digits[n..].starts_with(is_ident) {
                        let len = after.len() - digits.len() + n;
                        out.push_str(&after[..len]);
                        out.push_str(suffix);
                        rest = &after[len..];
                        continue 'outer;
                    }
                }
            }
        }
        let c = rest.chars().next().unwrap_or_default();
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

/// A constructor or destructor template has no return type in its mangling, but
/// cpp_demangle 0.5 reads its first parameter as one and so drops it. Giving it a dummy
/// `void` return type (builtin types are not substitution candidates, so later
/// back-references keep their meaning) restores the parameter. The name without
/// parameters must come out unchanged, which guards against a wrong insertion point.
fn template_ctor_fix(name: &str, orig: &Symbol<&str>) -> Option<String> {
    let b = name.as_bytes();
    let start = b.windows(3).position(|w| {
        matches!(
            (w[0], w[1], w[2]),
            (b'C', b'1'..=b'5', b'I') | (b'D', b'0'..=b'5', b'I')
        )
    })?;
    let no_params = DemangleOptions::new().no_params();
    let orig_name = orig.demangle_with_options(&no_params).ok()?;
    for i in start + 5..=b.len() {
        if b[i - 1] != b'E' || b[i - 2] != b'E' {
            continue;
        }
        let cand = format!("{}v{}", &name[..i], &name[i..]);
        let Ok(sym) = Symbol::new(cand.as_str()) else {
            continue;
        };
        if sym.demangle_with_options(&no_params).ok().as_ref() == Some(&orig_name) {
            return sym.demangle_with_options(&DemangleOptions::new()).ok();
        }
    }
    None
}

/// c++filt demangles in libiberty's verbose mode, which spells the standard abbreviations
/// `Ss`, `Si`, `So` and `Sd` out in full; cpp_demangle prints their short typedef names.
const STD_ABBREVIATIONS: [(&str, &str); 4] = [
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

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

fn expand_std_abbreviations(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    'outer: while !rest.is_empty() {
        let at_boundary = !out.ends_with(|c: char| is_ident(c) || c == ':');
        if at_boundary {
            for (short, long) in STD_ABBREVIATIONS {
                if let Some(after) = rest.strip_prefix(short) {
                    if !after.starts_with(is_ident) {
                        out.push_str(long);
                        rest = after;
                        // A constructor or destructor is named after the full template.
                        let class = &long[5..long.find('<').unwrap_or(long.len())];
                        let plain = &short[5..];
                        for prefix in ["::", "::~"] {
                            let ctor = format!("{prefix}{plain}");
                            if let Some(after) = rest.strip_prefix(ctor.as_str()) {
                                if !after.starts_with(is_ident) {
                                    out.push_str(prefix);
                                    out.push_str(class);
                                    rest = after;
                                }
                            }
                        }
                        continue 'outer;
                    }
                }
            }
        }
        let c = rest.chars().next().unwrap_or_default();
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}
