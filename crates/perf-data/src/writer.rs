//! Writing perf.data files that perf reads (file mode and pipe mode).
