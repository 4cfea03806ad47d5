/* bare_libfuzzer.c — the in-process limit for bench_fuzz.py: libFuzzer calling the same one
 * C function an atheris harness calls (wf_worker_run: journal, decode/generate, map, walk
 * under the guard, check), with no Python in between. WALKFUZZ_BENCH_HARNESS picks the
 * harness (enum wf_worker_harness: 1 registers ... 5 api); WALKFUZZ_BENCH_JOURNAL the journal file.
 */
#include <stdlib.h>

#include "wf_guard.h"
#include "wf_journal.h"
#include "wf_worker.h"

#define WATCHDOG_NS 200000000ull /* same budget as the atheris harnesses */

static wf_case *bench_case;
static wf_run_result bench_result;
static int bench_harness = WF_HARNESS_LAYOUTS;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    const char *harness = getenv("WALKFUZZ_BENCH_HARNESS");
    const char *journal = getenv("WALKFUZZ_BENCH_JOURNAL");
    if (harness != NULL) bench_harness = atoi(harness);
    if (journal != NULL && wf_journal_open(journal, 1 << 16) != 0) abort();
    bench_case = wf_case_new();
    if (bench_case == NULL) abort();
    wf_guard_set_budget_ns(WATCHDOG_NS);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    wf_worker_run(bench_harness, wf_walker_reference(), data, size, bench_case, &bench_result);
    return 0;
}
