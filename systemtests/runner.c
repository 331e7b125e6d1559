/* sopra-scenario: runs *.scn system-test scenarios against sopra-server.
 *
 *   sopra-scenario --server PATH [-j N] [--verbose] [--valgrind] [--fixed-ports] FILE_OR_DIR...
 *   sopra-scenario --self-test
 *
 * Each scenario runs in its own forked worker (at most N at a time); results
 * are printed in input order, followed by the line "N passed, M failed"
 * (", K skipped" appended when a --conformance folder is missing).
 * Format: ../shared/spec/scenarios.md; see systemtests/README.md. */
#define _DEFAULT_SOURCE 1
#include "exec.h"
#include "scenario.h"
#include "sopra/usage.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

typedef struct {
    char *path;
    char *name;
    FILE *out; /* worker output (tmpfile) */
    pid_t pid;
    bool done;
    int status;
} job;

typedef struct {
    job *v;
    size_t n, cap;
} joblist;

static const char usage_text[] =
    "Usage: sopra-scenario --server PATH [-j N] [--verbose] [--valgrind] [--fixed-ports]\n"
    "                      [--conformance N DIR]... FILE_OR_DIR...\n"
    "       sopra-scenario --self-test\n"
    "\n"
    "Runs *.scn scenarios (directories: their *.scn files, sorted by name) against\n"
    "the server and prints PASS/FAIL per scenario and \"N passed, M failed\".\n"
    "  --server PATH  the sopra-server binary (required)\n"
    "  -j N           scenarios run in parallel (default: number of CPUs)\n"
    "  --verbose, -v  print each scenario's transcript and server stderr\n"
    "  --valgrind     run the server under valgrind (memcheck); waits are 4x longer\n"
    "  --fixed-ports  choose a free port and pass it (for servers that cannot report\n"
    "                 the port they got for --port 0 as \"listening on 0.0.0.0:N\")\n"
    "  --conformance N DIR  run DIR like any directory; it is a conformance suite of\n"
    "                 N scenarios from ../shared, which a clone may lack: if DIR is\n"
    "                 missing, its N scenarios are reported as SKIPPED (failed with\n"
    "                 CI=true in the environment)\n"
    "  --journal-dir DIR  run each server with --journal DIR/<name>.jnl and check\n"
    "                 that sopra-replay reproduces every client's stream (with\n"
    "                 --replay PATH, the sopra-replay binary; docs/journal.md)\n"
    "  --self-test    check the runner's own parsing code and exit\n";

static void add_job(joblist *l, const char *path, const char *name)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 64;
        l->v = xrealloc(l->v, l->cap * sizeof *l->v);
    }
    job *j = &l->v[l->n++];
    memset(j, 0, sizeof *j);
    j->path = xstrdup(path);
    j->name = xstrdup(name);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool ends_with(const char *s, const char *suf)
{
    size_t n = strlen(s), m = strlen(suf);
    return n >= m && !strcmp(s + n - m, suf);
}

/* Display name: "<parent dir>/<file without .scn>" (e.g. "base/BaseTest"). */
static char *display_name(const char *path)
{
    size_t n = strlen(path);
    while (n > 1 && path[n - 1] == '/')
        n--;
    char *copy = xmemdup0(path, n);
    char *slash = strrchr(copy, '/');
    char *base = slash ? slash + 1 : copy;
    if (ends_with(base, ".scn") && strlen(base) > 4)
        base[strlen(base) - 4] = '\0';
    const char *parent = "";
    if (slash) {
        *slash = '\0';
        char *ps = strrchr(copy, '/');
        parent = ps ? ps + 1 : copy;
    }
    strbuf b = {0};
    if (*parent && strcmp(parent, "."))
        sb_printf(&b, "%s/", parent);
    sb_puts(&b, base);
    free(copy);
    return b.s;
}

/* Adds the scenarios of arg (a file or a directory); returns how many. */
static size_t add_path(joblist *l, const char *arg)
{
    size_t before = l->n;
    struct stat st;
    if (stat(arg, &st) < 0) {
        if (ends_with(arg, ".scn")) {
            char *name = display_name(arg);
            add_job(l, arg, name); /* reported as FAIL: cannot open */
            free(name);
        } else {
            fprintf(stderr, "sopra-scenario: note: skipping %s (%s)\n", arg, strerror(errno));
        }
        return l->n - before;
    }
    if (!S_ISDIR(st.st_mode)) {
        char *name = display_name(arg);
        add_job(l, arg, name);
        free(name);
        return l->n - before;
    }
    DIR *d = opendir(arg);
    if (!d) {
        fprintf(stderr, "sopra-scenario: note: skipping directory %s (%s)\n", arg, strerror(errno));
        return 0;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' || !ends_with(e->d_name, ".scn"))
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            names = xrealloc(names, cap * sizeof *names);
        }
        names[n++] = xstrdup(e->d_name);
    }
    closedir(d);
    if (n)
        qsort(names, n, sizeof *names, cmp_str);
    size_t alen = strlen(arg);
    while (alen > 1 && arg[alen - 1] == '/')
        alen--;
    for (size_t i = 0; i < n; i++) {
        strbuf p = {0};
        sb_printf(&p, "%.*s/%s", (int)alen, arg, names[i]);
        struct stat fs;
        if (stat(p.s, &fs) == 0 && S_ISREG(fs.st_mode)) {
            char *name = display_name(p.s);
            add_job(l, p.s, name);
            free(name);
        }
        sb_free(&p);
        free(names[i]);
    }
    free(names);
    return l->n - before;
}

/* A conformance suite (--conformance N DIR) from ../shared next to the
 * repository: its scenarios when DIR is there. When it is not (a clone
 * without ../shared), its N scenarios count as skipped, loudly; under
 * CI=true as failed. */
typedef struct {
    const char *dir;
    long expected; /* --conformance N; 0: a plain FILE_OR_DIR argument */
} suite;

static void add_suite(joblist *l, const suite *su, size_t *skipped, size_t *failed)
{
    struct stat st;
    if (stat(su->dir, &st) == 0) {
        size_t n = add_path(l, su->dir);
        if ((long)n != su->expected)
            fprintf(stderr, "sopra-scenario: note: %s holds %zu scenarios, %ld expected\n", su->dir,
                    n, su->expected);
        return;
    }
    int e = errno;
    const char *ci = getenv("CI");
    if (ci && !strcmp(ci, "true")) {
        printf("FAIL %s: not found (%s); CI=true needs ../shared/conformance next to the "
               "repository: %ld conformance scenarios cannot run\n",
               su->dir, strerror(e), su->expected);
        *failed += (size_t)su->expected;
    } else {
        printf("SKIPPED: %ld conformance scenarios (%s not found: ../shared/conformance is "
               "not next to the repository)\n",
               su->expected, su->dir);
        *skipped += (size_t)su->expected;
    }
    fflush(stdout);
}

static void free_jobs(joblist *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free(l->v[i].path);
        free(l->v[i].name);
        if (l->v[i].out)
            fclose(l->v[i].out);
    }
    free(l->v);
}

static int start_job(joblist *l, size_t i, const run_opts *o)
{
    job *j = &l->v[i];
    j->out = tmpfile();
    if (!j->out) {
        fprintf(stderr, "sopra-scenario: tmpfile: %s\n", strerror(errno));
        return -1;
    }
    fcntl(fileno(j->out), F_SETFD, FD_CLOEXEC);
    fflush(NULL);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "sopra-scenario: fork: %s\n", strerror(errno));
        return -1;
    }
    if (pid == 0) {
#ifdef __linux__
        /* never outlive the runner (e.g. killed by a ctest timeout); the
         * worker's server gets SIGKILL in turn */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(3);
#else
        (void)parent;
#endif
        FILE *out = j->out;
        char *path = j->path, *name = j->name;
        for (size_t k = 0; k < l->n; k++) {
            if (k != i) {
                free(l->v[k].path);
                free(l->v[k].name);
            }
        }
        free(l->v);
        int rc = run_scenario_file(path, name, o, out);
        free(path);
        free(name);
        fflush(out);
        _exit(rc);
    }
    j->pid = pid;
    return 0;
}

static void print_job(job *j, size_t *passed, size_t *failed)
{
    bool ok = WIFEXITED(j->status) && WEXITSTATUS(j->status) == 0;
    fflush(j->out);
    rewind(j->out);
    char buf[8192];
    size_t n, total = 0;
    while ((n = fread(buf, 1, sizeof buf, j->out)) > 0) {
        fwrite(buf, 1, n, stdout);
        total += n;
    }
    if (!ok && (total == 0 || !WIFEXITED(j->status) || WEXITSTATUS(j->status) != 1)) {
        if (WIFSIGNALED(j->status))
            printf("FAIL %s: runner worker killed by signal %d (%s)\n", j->name,
                   WTERMSIG(j->status), strsignal(WTERMSIG(j->status)));
        else if (total == 0 || WEXITSTATUS(j->status) != 1)
            printf("FAIL %s: runner worker exited with code %d\n", j->name,
                   WIFEXITED(j->status) ? WEXITSTATUS(j->status) : -1);
    }
    fclose(j->out);
    j->out = NULL;
    if (ok)
        (*passed)++;
    else
        (*failed)++;
    fflush(stdout);
}

int main(int argc, char **argv)
{
    run_opts o = {0};
    long jobs = sysconf(_SC_NPROCESSORS_ONLN);
    if (jobs < 1)
        jobs = 1;
    suite *paths = xmalloc((size_t)argc * sizeof *paths);
    size_t npaths = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--self-test")) {
            free(paths);
            int f = scn_self_test();
            printf("self-test: %s (%d failure%s)\n", f ? "FAILED" : "ok", f, f == 1 ? "" : "s");
            return f ? 1 : 0;
        } else if (!strcmp(a, "--server") && i + 1 < argc) {
            o.server = argv[++i];
        } else if (!strncmp(a, "--server=", 9)) {
            o.server = a + 9;
        } else if ((!strcmp(a, "-j") || !strcmp(a, "--jobs")) && i + 1 < argc) {
            char *end;
            jobs = strtol(argv[++i], &end, 10);
            if (*end || jobs < 1) {
                fprintf(stderr, "sopra-scenario: bad -j value\n");
                free(paths);
                return 2;
            }
        } else if (!strncmp(a, "-j", 2) && a[2]) {
            char *end;
            jobs = strtol(a + 2, &end, 10);
            if (*end || jobs < 1) {
                fprintf(stderr, "sopra-scenario: bad -j value\n");
                free(paths);
                return 2;
            }
        } else if (!strcmp(a, "--verbose") || !strcmp(a, "-v")) {
            o.verbose = true;
        } else if (!strcmp(a, "--valgrind")) {
            o.valgrind = true;
        } else if (!strcmp(a, "--fixed-ports")) {
            o.fixed_ports = true;
        } else if (!strcmp(a, "--journal-dir") && i + 1 < argc) {
            o.journal_dir = argv[++i];
        } else if (!strcmp(a, "--replay") && i + 1 < argc) {
            o.replay = argv[++i];
        } else if (!strcmp(a, "--conformance") && i + 2 < argc) {
            char *end;
            long n = strtol(argv[i + 1], &end, 10);
            if (*end || n < 1) {
                fprintf(stderr, "sopra-scenario: bad --conformance count %s\n", argv[i + 1]);
                free(paths);
                return 2;
            }
            paths[npaths++] = (suite){argv[i + 2], n};
            i += 2;
        } else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(usage_text, stdout);
            free(paths);
            return 0;
        } else if (a[0] == '-' && a[1]) {
            sopra_usage_error("sopra-scenario", usage_text, "unknown option %s", a);
            free(paths);
            return 2;
        } else {
            paths[npaths++] = (suite){a, 0};
        }
    }
    if (o.journal_dir && !o.replay) {
        fprintf(stderr, "sopra-scenario: --journal-dir needs --replay PATH\n");
        free(paths);
        return 2;
    }
    if (!o.server) {
        sopra_usage_error("sopra-scenario", usage_text, "--server PATH is required");
        free(paths);
        return 2;
    }
    if (access(o.server, X_OK) != 0) {
        fprintf(stderr, "sopra-scenario: server %s is not executable: %s\n", o.server,
                strerror(errno));
        free(paths);
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);

    joblist l = {0};
    size_t passed = 0, failed = 0, skipped = 0, next = 0, printed = 0, running = 0;
    for (size_t i = 0; i < npaths; i++) {
        if (paths[i].expected)
            add_suite(&l, &paths[i], &skipped, &failed);
        else
            add_path(&l, paths[i].dir);
    }
    free(paths);

    int rc_fatal = 0;
    while (printed < l.n) {
        while (!rc_fatal && running < (size_t)jobs && next < l.n) {
            if (start_job(&l, next, &o) < 0) {
                rc_fatal = 1;
                break;
            }
            next++;
            running++;
        }
        if (running == 0)
            break;
        int st;
        pid_t p = waitpid(-1, &st, 0);
        if (p < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        for (size_t i = 0; i < next; i++) {
            if (l.v[i].pid == p && !l.v[i].done) {
                l.v[i].done = true;
                l.v[i].status = st;
                running--;
            }
        }
        while (printed < next && l.v[printed].done)
            print_job(&l.v[printed++], &passed, &failed);
    }
    for (size_t i = printed; i < l.n; i++) {
        printf("FAIL %s: not run\n", l.v[i].name);
        failed++;
    }
    /* CI parses this line: "N passed, M failed", then ", K skipped" if K > 0 */
    printf("%zu passed, %zu failed", passed, failed);
    if (skipped)
        printf(", %zu skipped", skipped);
    printf("\n");
    free_jobs(&l);
    if (failed)
        return 1;
    /* nothing ran and something was skipped: ctest's SKIP_RETURN_CODE */
    return passed == 0 && skipped > 0 ? 77 : 0;
}
