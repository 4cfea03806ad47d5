/* The fuzz loop of a minivm harness process (see wf_worker.h): libFuzzer's callback is C, so
 * an input that is no finding costs what it costs the bare libFuzzer C harness
 * (bench/bare_libfuzzer.c); Python runs only for findings. */
#include "wf_worker.h"

#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#define INTERRUPTED_STATUS 130 /* walkfuzz.core.exit_status.INTERRUPTED, as under atheris */

typedef int (*test_one_input_fn)(const uint8_t *data, size_t len);
typedef int (*run_driver_fn)(int *argc, char ***argv, test_one_input_fn callback);

/* One fuzz loop per process: libFuzzer's callback takes no context of its own. */
static struct {
    int harness;
    const struct wf_walker *walker;
    wf_case *c;
    wf_run_result *r;
    wf_finding_fn on_finding;
} loop;

static int fuzz_one_input(const uint8_t *data, size_t len) {
    if (wf_worker_run(loop.harness, loop.walker, data, len, loop.c, loop.r) != WF_FINDING_NONE &&
        loop.on_finding(data, len) != 0) {
        /* exit, not abort: libFuzzer's exit hook reports "fuzz target exited", stores this
           input as crash-<sha1> and exits with its crash status, as for an atheris harness's
           uncaught exception. */
        exit(EXIT_FAILURE);
    }
    return 0;
}

/* Ctrl-C: Python's handler only sets a flag, which no Python reads while this loop runs, and
   libFuzzer keeps a handler it finds; end the process as an atheris harness did. */
static void on_interrupt(int signo) {
    static const char line[] = "KeyboardInterrupt: stopping.\n";
    (void)signo;
    ssize_t written = write(STDOUT_FILENO, line, sizeof line - 1);
    (void)written; /* exiting either way */
    _exit(INTERRUPTED_STATUS);
}

int wf_worker_fuzz(int argc, char **argv, int harness, const struct wf_walker *w, wf_case *c,
                   wf_run_result *r, wf_finding_fn on_finding) {
    /* Looked up, not linked: the core loads in processes that have no libFuzzer. */
    union {
        void *symbol;
        run_driver_fn run;
    } driver = {.symbol = dlsym(RTLD_DEFAULT, "LLVMFuzzerRunDriver")};
    if (driver.symbol == NULL) return -ENOSYS;
    loop.harness = harness;
    loop.walker = w;
    loop.c = c;
    loop.r = r;
    loop.on_finding = on_finding;
    struct sigaction interrupt = {.sa_handler = on_interrupt};
    sigemptyset(&interrupt.sa_mask);
    if (sigaction(SIGINT, &interrupt, NULL) != 0) return -errno;
    return driver.run(&argc, &argv, fuzz_one_input);
}
