//! Numeric constants of the perf.data format and the kernel's perf_event ABI.

// Kernel record types (perf_event_type).
pub const PERF_RECORD_MMAP: u32 = 1;
pub const PERF_RECORD_LOST: u32 = 2;
pub const PERF_RECORD_COMM: u32 = 3;
pub const PERF_RECORD_EXIT: u32 = 4;
pub const PERF_RECORD_THROTTLE: u32 = 5;
pub const PERF_RECORD_UNTHROTTLE: u32 = 6;
pub const PERF_RECORD_FORK: u32 = 7;
pub const PERF_RECORD_READ: u32 = 8;
pub const PERF_RECORD_SAMPLE: u32 = 9;
pub const PERF_RECORD_MMAP2: u32 = 10;
pub const PERF_RECORD_AUX: u32 = 11;
pub const PERF_RECORD_ITRACE_START: u32 = 12;
pub const PERF_RECORD_LOST_SAMPLES: u32 = 13;
pub const PERF_RECORD_SWITCH: u32 = 14;
pub const PERF_RECORD_SWITCH_CPU_WIDE: u32 = 15;
pub const PERF_RECORD_NAMESPACES: u32 = 16;
pub const PERF_RECORD_KSYMBOL: u32 = 17;
pub const PERF_RECORD_BPF_EVENT: u32 = 18;
pub const PERF_RECORD_CGROUP: u32 = 19;
pub const PERF_RECORD_TEXT_POKE: u32 = 20;
pub const PERF_RECORD_AUX_OUTPUT_HW_ID: u32 = 21;

// perf's own (user) record types.
pub const PERF_RECORD_HEADER_ATTR: u32 = 64;
pub const PERF_RECORD_HEADER_EVENT_TYPE: u32 = 65;
pub const PERF_RECORD_HEADER_TRACING_DATA: u32 = 66;
pub const PERF_RECORD_HEADER_BUILD_ID: u32 = 67;
pub const PERF_RECORD_FINISHED_ROUND: u32 = 68;
pub const PERF_RECORD_ID_INDEX: u32 = 69;
pub const PERF_RECORD_AUXTRACE_INFO: u32 = 70;
pub const PERF_RECORD_AUXTRACE: u32 = 71;
pub const PERF_RECORD_AUXTRACE_ERROR: u32 = 72;
pub const PERF_RECORD_THREAD_MAP: u32 = 73;
pub const PERF_RECORD_CPU_MAP: u32 = 74;
pub const PERF_RECORD_STAT_CONFIG: u32 = 75;
pub const PERF_RECORD_STAT: u32 = 76;
pub const PERF_RECORD_STAT_ROUND: u32 = 77;
pub const PERF_RECORD_EVENT_UPDATE: u32 = 78;
pub const PERF_RECORD_TIME_CONV: u32 = 79;
pub const PERF_RECORD_HEADER_FEATURE: u32 = 80;
pub const PERF_RECORD_COMPRESSED: u32 = 81;
pub const PERF_RECORD_FINISHED_INIT: u32 = 82;
pub const PERF_RECORD_COMPRESSED2: u32 = 83;

/// The name perf uses for a record type in `perf report --stats` and `-D`.
pub fn record_type_name(t: u32) -> &'static str {
    match t {
        0 => "TOTAL",
        1 => "MMAP",
        2 => "LOST",
        3 => "COMM",
        4 => "EXIT",
        5 => "THROTTLE",
        6 => "UNTHROTTLE",
        7 => "FORK",
        8 => "READ",
        9 => "SAMPLE",
        10 => "MMAP2",
        11 => "AUX",
        12 => "ITRACE_START",
        13 => "LOST_SAMPLES",
        14 => "SWITCH",
        15 => "SWITCH_CPU_WIDE",
        16 => "NAMESPACES",
        17 => "KSYMBOL",
        18 => "BPF_EVENT",
        19 => "CGROUP",
        20 => "TEXT_POKE",
        21 => "AUX_OUTPUT_HW_ID",
        64 => "ATTR",
        65 => "EVENT_TYPE",
        66 => "TRACING_DATA",
        67 => "BUILD_ID",
        68 => "FINISHED_ROUND",
        69 => "ID_INDEX",
        70 => "AUXTRACE_INFO",
        71 => "AUXTRACE",
        72 => "AUXTRACE_ERROR",
        73 => "THREAD_MAP",
        74 => "CPU_MAP",
        75 => "STAT_CONFIG",
        76 => "STAT",
        77 => "STAT_ROUND",
        78 => "EVENT_UPDATE",
        79 => "TIME_CONV",
        80 => "FEATURE",
        81 => "COMPRESSED",
        82 => "FINISHED_INIT",
        83 => "COMPRESSED2",
        _ => "UNKNOWN",
    }
}

/// Record types known to this crate (kernel 1..=21, user 64..=83).
pub fn is_known_record_type(t: u32) -> bool {
    (1..=21).contains(&t) || (64..=83).contains(&t)
}

// perf_event_header.misc
pub const PERF_RECORD_MISC_CPUMODE_MASK: u16 = 7;
pub const PERF_RECORD_MISC_CPUMODE_UNKNOWN: u16 = 0;
pub const PERF_RECORD_MISC_KERNEL: u16 = 1;
pub const PERF_RECORD_MISC_USER: u16 = 2;
pub const PERF_RECORD_MISC_HYPERVISOR: u16 = 3;
pub const PERF_RECORD_MISC_GUEST_KERNEL: u16 = 4;
pub const PERF_RECORD_MISC_GUEST_USER: u16 = 5;
pub const PERF_RECORD_MISC_PROC_MAP_PARSE_TIMEOUT: u16 = 1 << 12;
pub const PERF_RECORD_MISC_MMAP_DATA: u16 = 1 << 13;
pub const PERF_RECORD_MISC_COMM_EXEC: u16 = 1 << 13;
pub const PERF_RECORD_MISC_FORK_EXEC: u16 = 1 << 13;
pub const PERF_RECORD_MISC_SWITCH_OUT: u16 = 1 << 13;
pub const PERF_RECORD_MISC_EXACT_IP: u16 = 1 << 14;
pub const PERF_RECORD_MISC_SWITCH_OUT_PREEMPT: u16 = 1 << 14;
pub const PERF_RECORD_MISC_MMAP_BUILD_ID: u16 = 1 << 14;
pub const PERF_RECORD_MISC_EXT_RESERVED: u16 = 1 << 15;

// perf_event_attr.sample_type
pub const PERF_SAMPLE_IP: u64 = 1 << 0;
pub const PERF_SAMPLE_TID: u64 = 1 << 1;
pub const PERF_SAMPLE_TIME: u64 = 1 << 2;
pub const PERF_SAMPLE_ADDR: u64 = 1 << 3;
pub const PERF_SAMPLE_READ: u64 = 1 << 4;
pub const PERF_SAMPLE_CALLCHAIN: u64 = 1 << 5;
pub const PERF_SAMPLE_ID: u64 = 1 << 6;
pub const PERF_SAMPLE_CPU: u64 = 1 << 7;
pub const PERF_SAMPLE_PERIOD: u64 = 1 << 8;
pub const PERF_SAMPLE_STREAM_ID: u64 = 1 << 9;
pub const PERF_SAMPLE_RAW: u64 = 1 << 10;
pub const PERF_SAMPLE_BRANCH_STACK: u64 = 1 << 11;
pub const PERF_SAMPLE_REGS_USER: u64 = 1 << 12;
pub const PERF_SAMPLE_STACK_USER: u64 = 1 << 13;
pub const PERF_SAMPLE_WEIGHT: u64 = 1 << 14;
pub const PERF_SAMPLE_DATA_SRC: u64 = 1 << 15;
pub const PERF_SAMPLE_IDENTIFIER: u64 = 1 << 16;
pub const PERF_SAMPLE_TRANSACTION: u64 = 1 << 17;
pub const PERF_SAMPLE_REGS_INTR: u64 = 1 << 18;
pub const PERF_SAMPLE_PHYS_ADDR: u64 = 1 << 19;
pub const PERF_SAMPLE_AUX: u64 = 1 << 20;
pub const PERF_SAMPLE_CGROUP: u64 = 1 << 21;
pub const PERF_SAMPLE_DATA_PAGE_SIZE: u64 = 1 << 22;
pub const PERF_SAMPLE_CODE_PAGE_SIZE: u64 = 1 << 23;
pub const PERF_SAMPLE_WEIGHT_STRUCT: u64 = 1 << 24;

/// Names of sample_type bits in the order perf prints them.
pub const SAMPLE_TYPE_NAMES: &[(u64, &str)] = &[
    (PERF_SAMPLE_IP, "IP"),
    (PERF_SAMPLE_TID, "TID"),
    (PERF_SAMPLE_TIME, "TIME"),
    (PERF_SAMPLE_ADDR, "ADDR"),
    (PERF_SAMPLE_READ, "READ"),
    (PERF_SAMPLE_CALLCHAIN, "CALLCHAIN"),
    (PERF_SAMPLE_ID, "ID"),
    (PERF_SAMPLE_CPU, "CPU"),
    (PERF_SAMPLE_PERIOD, "PERIOD"),
    (PERF_SAMPLE_STREAM_ID, "STREAM_ID"),
    (PERF_SAMPLE_RAW, "RAW"),
    (PERF_SAMPLE_BRANCH_STACK, "BRANCH_STACK"),
    (PERF_SAMPLE_REGS_USER, "REGS_USER"),
    (PERF_SAMPLE_STACK_USER, "STACK_USER"),
    (PERF_SAMPLE_WEIGHT, "WEIGHT"),
    (PERF_SAMPLE_DATA_SRC, "DATA_SRC"),
    (PERF_SAMPLE_IDENTIFIER, "IDENTIFIER"),
    (PERF_SAMPLE_TRANSACTION, "TRANSACTION"),
    (PERF_SAMPLE_REGS_INTR, "REGS_INTR"),
    (PERF_SAMPLE_PHYS_ADDR, "PHYS_ADDR"),
    (PERF_SAMPLE_AUX, "AUX"),
    (PERF_SAMPLE_CGROUP, "CGROUP"),
    (PERF_SAMPLE_DATA_PAGE_SIZE, "DATA_PAGE_SIZE"),
    (PERF_SAMPLE_CODE_PAGE_SIZE, "CODE_PAGE_SIZE"),
    (PERF_SAMPLE_WEIGHT_STRUCT, "WEIGHT_STRUCT"),
];

// perf_event_attr.read_format
pub const PERF_FORMAT_TOTAL_TIME_ENABLED: u64 = 1 << 0;
pub const PERF_FORMAT_TOTAL_TIME_RUNNING: u64 = 1 << 1;
pub const PERF_FORMAT_ID: u64 = 1 << 2;
pub const PERF_FORMAT_GROUP: u64 = 1 << 3;
pub const PERF_FORMAT_LOST: u64 = 1 << 4;

pub const READ_FORMAT_NAMES: &[(u64, &str)] = &[
    (PERF_FORMAT_TOTAL_TIME_ENABLED, "TOTAL_TIME_ENABLED"),
    (PERF_FORMAT_TOTAL_TIME_RUNNING, "TOTAL_TIME_RUNNING"),
    (PERF_FORMAT_ID, "ID"),
    (PERF_FORMAT_GROUP, "GROUP"),
    (PERF_FORMAT_LOST, "LOST"),
];

// branch_sample_type bit: every kind of branch.
pub const PERF_SAMPLE_BRANCH_ANY: u64 = 1 << 3;
// branch_sample_type bit that adds hw_idx to BRANCH_STACK samples.
pub const PERF_SAMPLE_BRANCH_HW_INDEX: u64 = 1 << 17;

// perf_type_id
pub const PERF_TYPE_HARDWARE: u32 = 0;
pub const PERF_TYPE_SOFTWARE: u32 = 1;
pub const PERF_TYPE_TRACEPOINT: u32 = 2;
pub const PERF_TYPE_HW_CACHE: u32 = 3;
pub const PERF_TYPE_RAW: u32 = 4;
pub const PERF_TYPE_BREAKPOINT: u32 = 5;
/// perf's own type for synthesized events (Intel PT's `ptwrite` and the like).
pub const PERF_TYPE_SYNTH: u32 = i32::MAX as u32 + 1;

// Callchain context markers.
pub const PERF_CONTEXT_HV: u64 = (-32i64) as u64;
pub const PERF_CONTEXT_KERNEL: u64 = (-128i64) as u64;
pub const PERF_CONTEXT_USER: u64 = (-512i64) as u64;
pub const PERF_CONTEXT_GUEST: u64 = (-2048i64) as u64;
pub const PERF_CONTEXT_GUEST_KERNEL: u64 = (-2176i64) as u64;
pub const PERF_CONTEXT_GUEST_USER: u64 = (-2560i64) as u64;
pub const PERF_CONTEXT_MAX: u64 = (-4095i64) as u64;

/// Header feature bits (HEADER_* in perf's header.h).
pub mod feature {
    pub const RESERVED: u32 = 0;
    pub const TRACING_DATA: u32 = 1;
    pub const BUILD_ID: u32 = 2;
    pub const HOSTNAME: u32 = 3;
    pub const OSRELEASE: u32 = 4;
    pub const VERSION: u32 = 5;
    pub const ARCH: u32 = 6;
    pub const NRCPUS: u32 = 7;
    pub const CPUDESC: u32 = 8;
    pub const CPUID: u32 = 9;
    pub const TOTAL_MEM: u32 = 10;
    pub const CMDLINE: u32 = 11;
    pub const EVENT_DESC: u32 = 12;
    pub const CPU_TOPOLOGY: u32 = 13;
    pub const NUMA_TOPOLOGY: u32 = 14;
    pub const BRANCH_STACK: u32 = 15;
    pub const PMU_MAPPINGS: u32 = 16;
    pub const GROUP_DESC: u32 = 17;
    pub const AUXTRACE: u32 = 18;
    pub const STAT: u32 = 19;
    pub const CACHE: u32 = 20;
    pub const SAMPLE_TIME: u32 = 21;
    pub const MEM_TOPOLOGY: u32 = 22;
    pub const CLOCKID: u32 = 23;
    pub const DIR_FORMAT: u32 = 24;
    pub const BPF_PROG_INFO: u32 = 25;
    pub const BPF_BTF: u32 = 26;
    pub const COMPRESSED: u32 = 27;
    pub const CPU_PMU_CAPS: u32 = 28;
    pub const CLOCK_DATA: u32 = 29;
    pub const HYBRID_TOPOLOGY: u32 = 30;
    pub const PMU_CAPS: u32 = 31;
    /// One past the last feature perf 6.1 knows.
    pub const LAST_FEATURE: u32 = 32;
    /// Size of the feature bitmap in the file header, in bits.
    pub const BITS: u32 = 256;

    pub fn name(id: u32) -> Option<&'static str> {
        Some(match id {
            0 => "RESERVED",
            1 => "TRACING_DATA",
            2 => "BUILD_ID",
            3 => "HOSTNAME",
            4 => "OSRELEASE",
            5 => "VERSION",
            6 => "ARCH",
            7 => "NRCPUS",
            8 => "CPUDESC",
            9 => "CPUID",
            10 => "TOTAL_MEM",
            11 => "CMDLINE",
            12 => "EVENT_DESC",
            13 => "CPU_TOPOLOGY",
            14 => "NUMA_TOPOLOGY",
            15 => "BRANCH_STACK",
            16 => "PMU_MAPPINGS",
            17 => "GROUP_DESC",
            18 => "AUXTRACE",
            19 => "STAT",
            20 => "CACHE",
            21 => "SAMPLE_TIME",
            22 => "MEM_TOPOLOGY",
            23 => "CLOCKID",
            24 => "DIR_FORMAT",
            25 => "BPF_PROG_INFO",
            26 => "BPF_BTF",
            27 => "COMPRESSED",
            28 => "CPU_PMU_CAPS",
            29 => "CLOCK_DATA",
            30 => "HYBRID_TOPOLOGY",
            31 => "PMU_CAPS",
            _ => return None,
        })
    }
}
