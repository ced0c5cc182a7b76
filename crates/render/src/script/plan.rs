//! What `perf script` prints for each event: perf's default fields for
//! what the event's samples carry, changed by `-F` (a list, or `+f`/`-f`
//! items), and the checks perf makes that the samples carry what is asked.

use perf_data::consts::*;

use super::Fields;

/// A `-F` list that cannot be printed (why, as perf says it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError(pub String);

impl std::fmt::Display for FieldError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for FieldError {}

/// perf's defaults for an event, less what its samples do not carry.
fn default_fields(attr: &perf_data::attr::EventAttr, any_callchain: bool) -> Fields {
    let st = attr.sample_type;
    let has = |bit: u64| st & bit != 0;
    let tracepoint = attr.type_ == PERF_TYPE_TRACEPOINT;
    let ip = has(PERF_SAMPLE_IP) && (!tracepoint || any_callchain);
    Fields {
        comm: true,
        pid: false,
        tid: has(PERF_SAMPLE_TID),
        cpu: has(PERF_SAMPLE_CPU),
        time: has(PERF_SAMPLE_TIME),
        // Without PERIOD in the samples perf prints the attr's period.
        period: !tracepoint,
        event: true,
        trace: tracepoint && has(PERF_SAMPLE_RAW),
        ip,
        sym: ip,
        symoff: ip,
        dso: ip,
        bpf_output: attr.type_ == PERF_TYPE_SOFTWARE,
        ..Fields::default()
    }
}

/// What each field needs in the samples, for the error perf gives.
fn check_available(
    f: &Fields,
    attr: &perf_data::attr::EventAttr,
    name: &str,
) -> Result<(), FieldError> {
    let st = attr.sample_type;
    let needs = [
        (f.pid || f.tid, PERF_SAMPLE_TID, "TID", "pid/tid"),
        (f.cpu, PERF_SAMPLE_CPU, "CPU", "cpu"),
        (f.time, PERF_SAMPLE_TIME, "TIME", "time"),
        (f.ip, PERF_SAMPLE_IP, "IP", "ip"),
        (
            f.sym || f.dso,
            PERF_SAMPLE_IP | PERF_SAMPLE_ADDR,
            "IP or ADDR",
            "sym/dso",
        ),
        (f.addr, PERF_SAMPLE_ADDR, "ADDR", "addr"),
        (f.data_src, PERF_SAMPLE_DATA_SRC, "DATA_SRC", "data_src"),
        (
            f.weight,
            PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT,
            "WEIGHT",
            "weight",
        ),
        (
            f.ins_lat,
            PERF_SAMPLE_WEIGHT_STRUCT,
            "WEIGHT_STRUCT",
            "ins_lat",
        ),
        (f.iregs, PERF_SAMPLE_REGS_INTR, "IREGS", "iregs"),
        (f.uregs, PERF_SAMPLE_REGS_USER, "UREGS", "uregs"),
        (f.phys_addr, PERF_SAMPLE_PHYS_ADDR, "PHYS_ADDR", "phys_addr"),
        (
            f.data_page_size,
            PERF_SAMPLE_DATA_PAGE_SIZE,
            "DATA_PAGE_SIZE",
            "data_page_size",
        ),
        (
            f.code_page_size,
            PERF_SAMPLE_CODE_PAGE_SIZE,
            "CODE_PAGE_SIZE",
            "code_page_size",
        ),
    ];
    for (wanted, bit, attr_name, field) in needs {
        if wanted && st & bit == 0 {
            return Err(FieldError(format!(
                "samples for '{name}' event do not have {attr_name} attribute set; \
                 cannot print '{field}' field"
            )));
        }
    }
    Ok(())
}

/// perf prints a source line (or its code) only after the location's
/// address.
fn check_srcline(f: &Fields) -> Result<(), FieldError> {
    if (f.srcline || f.srccode) && !f.ip {
        return Err(FieldError(
            "-F: `srcline` needs `ip`: the source line is looked up at the sample's address".into(),
        ));
    }
    Ok(())
}

/// perf's output types: the attr types up to BREAKPOINT by number, SYNTH, and
/// one for all others.
fn output_type(attr_type: u32) -> u32 {
    match attr_type {
        0..=5 => attr_type,
        PERF_TYPE_SYNTH => PERF_TYPE_SYNTH,
        _ => u32::MAX,
    }
}

/// The output type a `TYPE:` prefix of `-F` names, if it has one.
fn spec_type(spec: &str) -> Option<u32> {
    Some(match spec.split_once(':')?.0 {
        "hw" => PERF_TYPE_HARDWARE,
        "sw" => PERF_TYPE_SOFTWARE,
        "trace" => PERF_TYPE_TRACEPOINT,
        "raw" => PERF_TYPE_RAW,
        "break" => PERF_TYPE_BREAKPOINT,
        "synth" => PERF_TYPE_SYNTH,
        _ => return None,
    })
}

/// The event types perf 6.1 warns about when a `-F` list without a
/// `TYPE:` prefix names a field they cannot have (`trace` outside
/// tracepoints, `bpf-output` outside software and tracepoint events), in
/// perf's type order and its names (types past hardware-cache are
/// "unknown" to it).
fn invalid_types(field: &str) -> &'static [&'static str] {
    match field {
        "trace" => &[
            "hardware",
            "software",
            "hardware-cache",
            "unknown",
            "unknown",
            "unknown",
            "unknown",
        ],
        "bpf-output" => &[
            "hardware",
            "hardware-cache",
            "unknown",
            "unknown",
            "unknown",
            "unknown",
        ],
        _ => &[],
    }
}

/// perf's lines for fields some event types cannot have, as it prints them
/// while it reads `-F` (up to a `+`/`-` item mixed into a plain list, where
/// it stops with an error); with a `TYPE:` prefix naming such a field for
/// that type, perf's error instead.
pub fn invalid_field_warnings(spec: &str) -> Result<Vec<String>, FieldError> {
    if let Some(t) = spec_type(spec) {
        let (prefix, rest) = spec.split_once(':').unwrap_or(("", spec));
        let type_name = match prefix {
            "hw" => "hardware",
            "sw" => "software",
            "trace" => "tracepoint",
            "raw" => "raw",
            "break" => "breakpoint",
            _ => "synth",
        };
        for item in rest.split(',').map(str::trim) {
            let name = item.trim_start_matches(['+', '-']);
            let bad = match name {
                "trace" => t != PERF_TYPE_TRACEPOINT,
                "bpf-output" => t != PERF_TYPE_TRACEPOINT && t != PERF_TYPE_SOFTWARE,
                _ => false,
            };
            if bad {
                return Err(FieldError(format!(
                    "'{name}' not valid for {type_name} events."
                )));
            }
        }
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    let modify = spec.trim_start().starts_with(['+', '-']);
    for item in spec.split(',').map(str::trim) {
        if item.starts_with(['+', '-']) != modify {
            break;
        }
        let name = item.trim_start_matches(['+', '-']);
        for t in invalid_types(name) {
            out.push(format!("'{name}' not valid for {t} events. Ignoring."));
        }
    }
    Ok(out)
}

/// Applies `-F` to an event's defaults: a list replaces them, `+f`/`-f`
/// items change them. Also the fields the user named to print (the list,
/// or the `+f` items), which the samples must carry.
pub fn parse_fields(spec: &str, defaults: Fields) -> Result<(Fields, Fields), FieldError> {
    // perf's `TYPE:` prefix selects an event type (see `spec_type`: the
    // caller applies the list to that type's events only).
    let spec = match spec.split_once(':') {
        Some((ty, rest)) if ["hw", "sw", "trace", "raw", "synth", "break"].contains(&ty) => rest,
        _ => spec,
    };
    let modify = spec.starts_with('+') || spec.starts_with('-');
    let mut f = if modify { defaults } else { Fields::default() };
    let mut named = Fields::default();
    for item in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (on, name) = match item.as_bytes()[0] {
            b'+' | b'-' if !modify => {
                return Err(FieldError(format!(
                    "-F {spec}: `{item}`: cannot mix +-field with overridden fields; \
                     write the list without +/-"
                )))
            }
            b'+' => (true, &item[1..]),
            b'-' => (false, &item[1..]),
            _ if modify => {
                return Err(FieldError(format!(
                    "-F {spec}: `{item}`: mix of +/- and plain fields; write +{item}"
                )))
            }
            _ => (true, item),
        };
        if let (true, Some(v)) = (on, named.flag(name)) {
            *v = true;
        }
        match f.flag(name) {
            Some(v) => *v = on,
            None => {
                return Err(FieldError(format!(
                    "-F: `{name}` is not a field sear prints (yet); known: {}",
                    Fields::NAMES.join(", ")
                )))
            }
        }
    }
    Ok((f, named))
}

/// What is printed for each event.
pub struct FieldPlan {
    /// Per event.
    pub fields: Vec<Fields>,
    pub event_names: Vec<String>,
    /// The longest event name.
    pub name_width: usize,
    /// Whether the event's samples print as call chains.
    pub chain_of_event: Vec<bool>,
}

impl FieldPlan {
    /// perf's fields for each event of `meta`, changed by `-F` (`spec`).
    pub fn new(
        meta: &perf_data::Meta,
        spec: Option<&str>,
        hide_call_graph: bool,
    ) -> Result<FieldPlan, FieldError> {
        // perf adds the location to tracepoints' defaults when a tracepoint
        // event has call chains and they are shown (not `-G`).
        let any_callchain = !hide_call_graph
            && meta.events.iter().any(|e| {
                e.attr.type_ == PERF_TYPE_TRACEPOINT
                    && e.attr.sample_type & PERF_SAMPLE_CALLCHAIN != 0
            });
        let mut fields = Vec::with_capacity(meta.events.len());
        for e in &meta.events {
            // perf's defaults are per type: what the type's first event
            // lacks is left out for all of its events.
            let first = meta
                .events
                .iter()
                .find(|x| output_type(x.attr.type_) == output_type(e.attr.type_))
                .unwrap_or(e);
            // A `TYPE:` list is for that type's events; the others keep
            // their defaults.
            let spec = spec.filter(|s| spec_type(s).is_none_or(|t| t == output_type(e.attr.type_)));
            // (perf adds the location to tracepoints only where `-F` leaves
            // their fields to it.)
            let d = default_fields(&first.attr, any_callchain && spec.is_none());
            let f = match spec {
                None => d,
                Some(spec) => {
                    let (mut f, named) = parse_fields(spec, d)?;
                    // `trace` is for tracepoints: perf drops it from the others
                    // (saying so).
                    f.trace &= e.attr.type_ == PERF_TYPE_TRACEPOINT;
                    check_available(&named, &e.attr, &e.name())?;
                    check_srcline(&f)?;
                    f
                }
            };
            fields.push(f);
        }
        // perf decodes branch stacks' blocks only from stacks of every
        // kind of branch.
        let branch_types = meta
            .events
            .iter()
            .fold(0, |t, e| t | e.attr.branch_sample_type);
        if fields.iter().any(|f| f.brstackinsn) && branch_types & PERF_SAMPLE_BRANCH_ANY == 0 {
            return Err(FieldError(
                "Display of branch stack assembler requested, but non all-branch filter set\n\
                 Hint: run 'perf record -b ...'"
                    .into(),
            ));
        }
        if fields.iter().any(|f| f.tod) && meta.features.clock_data().is_none() {
            return Err(FieldError(
                "-F tod: the recording has no clock data to give the time of day: \
                 record with -k/--clockid (for example `-k mono`)"
                    .into(),
            ));
        }
        let event_names: Vec<String> = meta.events.iter().map(|e| e.name()).collect();
        let name_width = event_names.iter().map(String::len).max().unwrap_or(0);
        let chain_of_event = meta
            .events
            .iter()
            .map(|e| e.attr.sample_type & PERF_SAMPLE_CALLCHAIN != 0)
            .collect();
        Ok(FieldPlan {
            fields,
            event_names,
            name_width,
            chain_of_event,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_lists() {
        let d = Fields {
            comm: true,
            tid: true,
            ip: true,
            ..Default::default()
        };
        let (f, named) = parse_fields("comm,pid", d).unwrap();
        assert!(f.comm && f.pid && !f.tid && !f.ip);
        assert_eq!(named, f);
        let (f, named) = parse_fields("-ip,+cpu", d).unwrap();
        assert!(f.comm && f.tid && f.cpu && !f.ip);
        assert!(named.cpu && !named.comm && !named.tid);
        let (f, _) = parse_fields("sw:tid", d).unwrap();
        assert!(f.tid && !f.comm);
        assert!(parse_fields("+cpu,ip", d).is_err());
        assert!(parse_fields("nonsense", d).is_err());
    }
}
