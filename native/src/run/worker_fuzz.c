/* The fuzz loop of a minivm harness process (see wf_worker.h): libFuzzer's callback is C, so
 * an input that is no finding costs what it costs the bare libFuzzer C harness
 * (bench/bare_libfuzzer.c); Python runs only for findings. */
#include "wf_worker.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>

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
    return driver.run(&argc, &argv, fuzz_one_input);
}
