/* treetime: run a command and measure it together with every process it starts, including
 * helpers that outlive it (perf report's addr2line processes).
 *
 *   treetime [-o OUT] [-e ERR] [-j REPORT] -- COMMAND [ARGS...]
 *
 * How: treetime makes itself a child subreaper (prctl PR_SET_CHILD_SUBREAPER), so descendants
 * orphaned by the command's exit are re-parented to it instead of to init, and it waits until
 * it has no descendant left. Then
 *   wall       = start of the command to the exit of the last descendant;
 *   main_wall  = start of the command to the exit of the command itself;
 *   user, sys  = getrusage(RUSAGE_CHILDREN): CPU of every descendant (all were reaped);
 *   peak_rss   = the largest sum of the resident set sizes of all live descendants (found
 *                through /proc/PID/task/TID/children), sampled every 5 ms in the first second
 *                and every 20 ms after it, and at least the largest single process's ru_maxrss
 *                (which catches a single process's peak between samples).
 * RSS counts mapped file pages as GNU time's %M does (both tools map the input).
 * The report is one line of key=value pairs, appended to REPORT, or to stderr. Exit status: the
 * command's (128+signal if killed).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long page_kb;
static long long peak_kb;
#define MAXSEEN 4096
static struct { int pid; char comm[32]; } seen[MAXSEEN];
static int nseen;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

/* Records pid's name (read again at every sighting: a forked child has its parent's name
 * until it execs). */
static void remember(int pid) {
    int i = 0;
    while (i < nseen && seen[i].pid != pid) i++;
    if (i == MAXSEEN) return;
    if (i == nseen) { nseen++; seen[i].pid = pid; strcpy(seen[i].comm, "?"); }
    char path[64], comm[32];
    snprintf(path, sizeof path, "/proc/%d/comm", pid);
    FILE *f = fopen(path, "r");
    if (f) {
        if (fgets(comm, sizeof comm, f)) {
            comm[strcspn(comm, "\n")] = 0;
            strcpy(seen[i].comm, comm);
        }
        fclose(f);
    }
}

/* Sum of RSS (kB) of pid's descendants (not pid itself when self is 0). */
static long long tree_rss(int pid, int self) {
    long long kb = 0;
    char path[64];
    if (self) {
        remember(pid);
        snprintf(path, sizeof path, "/proc/%d/statm", pid);
        FILE *f = fopen(path, "r");
        long size, res;
        if (f) {
            if (fscanf(f, "%ld %ld", &size, &res) == 2) kb += res * page_kb;
            fclose(f);
        }
    }
    snprintf(path, sizeof path, "/proc/%d/task", pid);
    DIR *d = opendir(path);
    if (!d) return kb;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char cpath[300];
        snprintf(cpath, sizeof cpath, "/proc/%d/task/%s/children", pid, e->d_name);
        FILE *f = fopen(cpath, "r");
        if (!f) continue;
        int child;
        while (fscanf(f, "%d", &child) == 1) kb += tree_rss(child, 1);
        fclose(f);
    }
    closedir(d);
    return kb;
}

static void sample(void) {
    long long kb = tree_rss(getpid(), 0);
    if (kb > peak_kb) peak_kb = kb;
}

int main(int argc, char **argv) {
    const char *out = NULL, *err = NULL, *rep = NULL;
    int i = 1;
    for (; i < argc; i++) {
        if (!strcmp(argv[i], "--")) { i++; break; }
        if (i + 1 < argc && !strcmp(argv[i], "-o")) out = argv[++i];
        else if (i + 1 < argc && !strcmp(argv[i], "-e")) err = argv[++i];
        else if (i + 1 < argc && !strcmp(argv[i], "-j")) rep = argv[++i];
        else break;
    }
    if (i >= argc) {
        fprintf(stderr, "usage: treetime [-o OUT] [-e ERR] [-j REPORT] -- COMMAND [ARGS...]\n");
        return 2;
    }
    page_kb = sysconf(_SC_PAGESIZE) / 1024;
    if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) { perror("treetime: prctl"); return 2; }
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGCHLD);
    sigprocmask(SIG_BLOCK, &set, NULL);

    /* a close-on-exec pipe tells when the child has exec'd (so it is sampled under its name) */
    int ready[2];
    if (pipe2(ready, O_CLOEXEC) != 0) { perror("treetime: pipe"); return 2; }
    double t0 = now();
    pid_t main_pid = fork();
    if (main_pid < 0) { perror("treetime: fork"); return 2; }
    if (main_pid == 0) {
        sigprocmask(SIG_UNBLOCK, &set, NULL);
        if (out) {
            int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
            if (fd < 0 || dup2(fd, 1) < 0) { perror(out); _exit(127); }
        }
        if (err) {
            int fd = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
            if (fd < 0 || dup2(fd, 2) < 0) { perror(err); _exit(127); }
        }
        execvp(argv[i], argv + i);
        perror(argv[i]);
        _exit(127);
    }
    close(ready[1]);
    char c;
    while (read(ready[0], &c, 1) < 0 && errno == EINTR) {}
    close(ready[0]);
    double t_main = -1;
    int status = 0;
    for (;;) {
        sample();
        /* every 5 ms for the first second, then every 20 ms (RSS grows gradually, and the
           walk through /proc should not compete with long runs for the CPU) */
        struct timespec tick = {0, (now() - t0 < 1.0 ? 5 : 20) * 1000 * 1000};
        sigtimedwait(&set, NULL, &tick);
        int st;
        pid_t p;
        while ((p = waitpid(-1, &st, WNOHANG)) > 0)
            if (p == main_pid) { t_main = now(); status = st; }
        if (p < 0 && errno == ECHILD) break;
    }
    double t1 = now();
    struct rusage ru;
    getrusage(RUSAGE_CHILDREN, &ru);
    if (ru.ru_maxrss > peak_kb) peak_kb = ru.ru_maxrss;

    FILE *r = rep ? fopen(rep, "a") : stderr;
    if (!r) { perror(rep); r = stderr; }
    fprintf(r, "wall=%.3f main_wall=%.3f user=%.3f sys=%.3f peak_rss_kb=%lld max_single_rss_kb=%ld procs=",
            t1 - t0, t_main - t0, ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6,
            ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6, peak_kb, ru.ru_maxrss);
    /* process names with counts, e.g. perf:1,addr2line:3 */
    for (int a = 0; a < nseen; a++) {
        int dup = 0, n = 0;
        for (int b = 0; b < a; b++) if (!strcmp(seen[a].comm, seen[b].comm)) dup = 1;
        if (dup) continue;
        for (int b = a; b < nseen; b++) if (!strcmp(seen[a].comm, seen[b].comm)) n++;
        fprintf(r, "%s%s:%d", a ? "," : "", seen[a].comm, n);
    }
    fprintf(r, "%s\n", nseen ? "" : "-");
    if (r != stderr) fclose(r);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return WEXITSTATUS(status);
}
