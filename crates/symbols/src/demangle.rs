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

/// The short form perf 6.1 prints: C++ names without parameter lists and
/// return types (`ns::Box<long>::get`, `twice<long>`), Rust names without
/// their hash; other names unchanged.
pub fn demangle_short(name: &str) -> String {
    if let Some(base) = name.strip_suffix("@plt") {
        return format!("{}@plt", demangle_short(base));
    }
    if let Ok(d) = rustc_demangle::try_demangle(name) {
        return format!("{d:#}");
    }
    if name.starts_with("_Z") {
        if let Ok(sym) = Symbol::new(name) {
            let options = DemangleOptions::new().no_params().no_return_type();
            if let Ok(out) = sym.demangle_with_options(&options) {
                let out = expand_std_abbreviations(&out);
                return split_closing_angles(&out);
            }
        }
        // cpp_demangle cannot drop the parameters of some names it can print
        // in full: cut them from the full form instead.
        if let Some(full) = demangle_cpp(name) {
            return strip_signature(&full);
        }
        if let Some(short) = name_part_only(name) {
            return short;
        }
    }
    name.to_owned()
}

/// Demangles only the name of a symbol whose return type or parameters
/// cpp_demangle cannot parse: the longest prefix of the encoding that forms
/// a valid symbol with a dummy signature is the name.
fn name_part_only(name: &str) -> Option<String> {
    let body = name.strip_prefix("_Z")?;
    // Quadratic in the name's length: bounded to keep hostile names cheap.
    if body.len() > 512 {
        return None;
    }
    let options = DemangleOptions::new().no_params().no_return_type();
    (1..body.len())
        .rev()
        .filter(|&i| body.is_char_boundary(i))
        .find_map(|i| {
            ["vv", "v"].iter().find_map(|sig| {
                let sym = Symbol::new(format!("_Z{}{sig}", &body[..i])).ok()?;
                let out = sym.demangle_with_options(&options).ok()?;
                Some(split_closing_angles(&expand_std_abbreviations(&out)))
            })
        })
}

/// `ret ns::f<T>(args) const` → `ns::f<T>`: drops a trailing parameter list
/// (with qualifiers after it) and a leading return type, at bracket depth 0.
fn strip_signature(full: &str) -> String {
    let b = full.as_bytes();
    let mut s = full;
    // The parameter list: the last top-level `(...)`.
    let mut depth = 0i32;
    let mut open = None;
    for (i, &c) in b.iter().enumerate().rev() {
        match c {
            b')' | b'>' => depth += 1,
            b'(' | b'<' => {
                depth -= 1;
                if depth == 0 && c == b'(' {
                    open = Some(i);
                    break;
                }
            }
            _ => {}
        }
    }
    if let Some(i) = open.filter(|&i| i > 0) {
        s = &full[..i];
    }
    // The return type: text before the last top-level space.
    let mut depth = 0i32;
    let mut cut = 0;
    for (i, c) in s.bytes().enumerate() {
        match c {
            b'(' | b'<' => depth += 1,
            b')' | b'>' => depth -= 1,
            b' ' if depth == 0 => cut = i + 1,
            _ => {}
        }
    }
    s[cut..].to_owned()
}

fn demangle_cpp(name: &str) -> Option<String> {
    if !name.starts_with("_Z") {
        return None;
    }
    let sym = Symbol::new(name).ok()?;
    // In a local name (`_ZZ<function>E<entity>`) c++filt does not print the enclosing
    // function's return type; the entity itself has none to lose.
    let options = if name.starts_with("_ZZ") {
        DemangleOptions::new().no_return_type()
    } else {
        DemangleOptions::new()
    };
    let out = sym.demangle_with_options(&options).ok()?;
    let out = template_ctor_fix(name, &sym).unwrap_or(out);
    let out = expand_std_abbreviations(&out);
    let out = literal_suffixes(&out).replace("std::nullptr_t", "decltype(nullptr)");
    let mut out = split_closing_angles(&out);
    if name.contains("JE") {
        out = drop_empty_packs(out);
    }
    let out = out.replace("<()...>", "<>");
    let out = unwrap_pack_expressions(&out);
    let out = function_pointer_return(&out).unwrap_or(out);
    Some(special_name_wording(out))
}

/// c++filt prints an expanded pack of expressions (`spT0_` with T0 = {0ul}) as its
/// elements, `<0ul>`; cpp_demangle as `<(0ul)...>`.
fn unwrap_pack_expressions(s: &str) -> String {
    let mut out = s.to_owned();
    while let Some(end) = out.find(")...") {
        let Some(start) = out[..end].rfind('(') else {
            break;
        };
        if out[start + 1..end].contains(['(', ')']) {
            break;
        }
        let inner = out[start + 1..end].to_owned();
        out.replace_range(start..end + 4, &inner);
    }
    out
}

/// A function returning a pointer or reference to a function is written by c++filt
/// inside the declarator, `long (*&f())(int)`; cpp_demangle writes the return type
/// whole before the name, `long (*&)(int) f()`.
fn function_pointer_return(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let (mut angle, mut paren) = (0i32, 0i32);
    let mut open = None;
    for (i, &c) in bytes.iter().enumerate() {
        match c {
            b'<' => angle += 1,
            b'>' => angle -= 1,
            b'(' if angle == 0 && paren == 0 => {
                if matches!(bytes.get(i + 1), Some(b'*' | b'&')) {
                    open = Some(i);
                }
                break;
            }
            b'(' => paren += 1,
            b')' => paren -= 1,
            _ => {}
        }
    }
    let open = open?;
    if s[..open].contains("operator") {
        return None;
    }
    let close = open + s[open..].find(')')?;
    let declarator = &s[open + 1..close];
    if !s[close + 1..].starts_with('(') {
        return None;
    }
    // The function type's parameter list: up to its matching parenthesis.
    let mut depth = 0;
    let mut args_end = None;
    for (i, c) in s[close + 1..].char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    args_end = Some(close + 1 + i + 1);
                    break;
                }
            }
            _ => {}
        }
    }
    let args_end = args_end?;
    let rest = s[args_end..].strip_prefix(' ')?;
    if !rest.contains('(') {
        return None;
    }
    Some(format!(
        "{}({declarator}{rest}){}",
        &s[..open],
        &s[close + 1..args_end]
    ))
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
    // `{virtual override thunk({offset(-16)}, X)}`: c++filt does not show the offsets.
    if let Some(rest) = s
        .strip_prefix("{virtual override thunk(")
        .and_then(|r| r.strip_suffix(")}"))
    {
        let kind = if rest.starts_with("{offset(") {
            "non-virtual thunk to "
        } else if rest.starts_with("{virtual offset(") {
            "virtual thunk to "
        } else {
            return s;
        };
        if let Some((_, target)) = rest.split_once("}, ") {
            return format!("{kind}{target}");
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

#[cfg(test)]
mod short_tests {
    use super::demangle_short;

    #[test]
    fn short_names_drop_signatures_like_perf() {
        assert_eq!(demangle_short("_ZN2ns3BoxIlE3getEi"), "ns::Box<long>::get");
        assert_eq!(
            demangle_short("_Z5twiceIlET_RKN2ns3BoxIS0_EEi"),
            "twice<long>"
        );
        assert_eq!(demangle_short("main"), "main");
        // cpp_demangle cannot parse this return type; the name still comes out.
        assert_eq!(
            demangle_short("_ZSt4swapIiENSt9enable_ifIXsrSt6__and_IJSt6__not_ISt15__is_tuple_likeIT_EESt21is_move_constructibleIS4_ESt18is_move_assignableIS4_EEE5valueEvE4typeERS4_SE_"),
            "std::swap<int>"
        );
    }
}
