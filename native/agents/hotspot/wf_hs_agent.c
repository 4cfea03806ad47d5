/* Agent_OnLoad, option parsing and the JVMTI callbacks.
 *
 * Order matters (DESIGN.md, facts): the SIGPROF handler is installed here in Agent_OnLoad,
 * before any timer exists; ClassLoad events are enabled because ASGCT refuses to walk
 * (ticks_no_class_load) without them; every prepared class gets its jmethodIDs created so
 * ASGCT can name the frames it finds.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "wf_hs.h"

/* ---- options ------------------------------------------------------------------------------ */

static int fail(const char *fmt, const char *value) {
    fprintf(stderr, "walkfuzz-hotspot: ");
    fprintf(stderr, fmt, value);
    fputc('\n', stderr);
    return JNI_ERR;
}

static int copy_opt(char *dst, size_t cap, const char *value, const char *key) {
    if (strlen(value) >= cap) return fail("option %s: value too long", key);
    strcpy(dst, value);
    return 0;
}

static int parse_u64(const char *key, const char *value, uint64_t *out) {
    char *end;
    errno = 0;
    unsigned long long v = strtoull(value, &end, 0);
    if (errno || *end || end == value) {
        fprintf(stderr, "walkfuzz-hotspot: option %s: %s is not a number\n", key, value);
        return JNI_ERR;
    }
    *out = v;
    return 0;
}

static void set_defaults(wf_hs_config *c) {
    memset(c, 0, sizeof *c);
    c->mode = WF_HS_MODE_FUZZ;
    strcpy(c->thread_prefix, "wf-");
    c->interval_ns = 100000;
    c->batch = 32;
    c->depth = 64;
    c->duty_percent = 50;
    c->strategies = (1u << WF_HS_STRATEGIES) - 1;
    c->seed = 1;
    c->check_every_ms = 20;
    c->tick_ms = 250;
    c->walk = 1;
}

static int parse_one(wf_hs_config *c, const char *key, const char *value) {
    uint64_t n = 0;
    if (!strcmp(key, "mode")) {
        if (!strcmp(value, "fuzz")) c->mode = WF_HS_MODE_FUZZ;
        else if (!strcmp(value, "stress")) c->mode = WF_HS_MODE_STRESS;
        else if (!strcmp(value, "control")) c->mode = WF_HS_MODE_CONTROL;
        else return fail("option mode: %s is not fuzz, stress or control", value);
        return 0;
    }
    if (!strcmp(key, "out")) return copy_opt(c->out_path, sizeof c->out_path, value, key);
    if (!strcmp(key, "methods"))
        return copy_opt(c->methods_path, sizeof c->methods_path, value, key);
    if (!strcmp(key, "corpus")) return copy_opt(c->corpus_path, sizeof c->corpus_path, value, key);
    if (!strcmp(key, "flight")) return copy_opt(c->flight_path, sizeof c->flight_path, value, key);
    if (!strcmp(key, "prefix"))
        return copy_opt(c->thread_prefix, sizeof c->thread_prefix, value, key);
    if (parse_u64(key, value, &n)) return JNI_ERR;
    if (!strcmp(key, "interval_ns")) c->interval_ns = n;
    else if (!strcmp(key, "batch")) c->batch = (uint32_t)n;
    else if (!strcmp(key, "depth")) c->depth = (uint32_t)n;
    else if (!strcmp(key, "duty_percent")) c->duty_percent = (uint32_t)n;
    else if (!strcmp(key, "strategies")) c->strategies = (uint32_t)n;
    else if (!strcmp(key, "seed")) c->seed = n;
    else if (!strcmp(key, "budget_ns")) c->budget_ns = n;
    else if (!strcmp(key, "check_every_ms")) c->check_every_ms = (uint32_t)n;
    else if (!strcmp(key, "tick_ms")) c->tick_ms = (uint32_t)n;
    else if (!strcmp(key, "walk")) c->walk = (uint32_t)n;
    else return fail("unknown option %s", key);
    return 0;
}

/* "key=value,key=value"; values cannot contain commas. */
static int parse_options(wf_hs_config *c, const char *options) {
    set_defaults(c);
    if (!options) return fail("%s", "no options: need at least out=PATH");
    char buf[4096];
    if (strlen(options) >= sizeof buf) return fail("%s", "options string too long");
    strcpy(buf, options);
    char *save = NULL;
    for (char *item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(item, '=');
        if (!eq) return fail("option %s has no '='", item);
        *eq = '\0';
        if (parse_one(c, item, eq + 1)) return JNI_ERR;
    }
    if (!c->out_path[0]) return fail("%s", "missing option out=PATH");
    if (c->interval_ns && c->interval_ns < 1000)
        return fail("%s", "interval_ns below 1000 (1 us); 0 means no sampling");
    if (c->depth < 1 || c->depth > WF_HS_MAX_DEPTH) return fail("%s", "depth outside 1..2048");
    if (c->duty_percent < 1 || c->duty_percent > 90)
        return fail("%s", "duty_percent outside 1..90 (the workload must keep running)");
    if ((c->strategies & ((1u << WF_HS_STRATEGIES) - 1)) == 0)
        return fail("%s", "strategies mask selects no strategy");
    if (c->walk > 1) return fail("%s", "walk is 0 (count signals only) or 1 (sample)");
    return 0;
}

/* ---- the SIGPROF handler -------------------------------------------------------------------- */

static void on_sigprof(int sig, siginfo_t *info, void *ucv) {
    (void)sig;
    (void)info;
    int saved_errno = errno;
    wf_hs_thread *t = wf_hs_self();
    if (t) {
        ucontext_t *uc = (ucontext_t *)ucv;
        switch (wf_hs_cfg.mode) {
        case WF_HS_MODE_FUZZ: wf_hs_fuzz_on_signal(t, uc, 1); break;
        case WF_HS_MODE_CONTROL: wf_hs_fuzz_on_signal(t, uc, 0); break;
        case WF_HS_MODE_STRESS: wf_hs_stress_on_signal(t, uc); break;
        }
    }
    errno = saved_errno;
}

static int install_sigprof(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sigprof;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    return sigaction(SIGPROF, &sa, NULL);
}

/* ---- JVMTI callbacks ------------------------------------------------------------------------ */

static int is_target_thread(jvmtiEnv *jvmti, jthread thread) {
    jvmtiThreadInfo info;
    memset(&info, 0, sizeof info);
    if ((*jvmti)->GetThreadInfo(jvmti, thread, &info) != JVMTI_ERROR_NONE || !info.name) return 0;
    int match = strncmp(info.name, wf_hs_cfg.thread_prefix, strlen(wf_hs_cfg.thread_prefix)) == 0;
    (*jvmti)->Deallocate(jvmti, (unsigned char *)info.name);
    return match;
}

static void JNICALL on_thread_start(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread) {
    if (!is_target_thread(jvmti, thread)) return;
    wf_hs_thread *t = wf_hs_thread_attach(jni, thread);
    if (!t) {
        wf_hs_out_line("{\"type\":\"warning\",\"message\":\"thread table full (%d)\"}",
                       WF_HS_MAX_THREADS);
        return;
    }
    if (wf_hs_cfg.interval_ns && wf_hs_timer_start(t, wf_hs_cfg.interval_ns) != 0)
        wf_hs_out_line("{\"type\":\"warning\",\"message\":\"timer_create failed: errno %d\"}",
                       errno);
}

static void JNICALL on_thread_end(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread) {
    (void)jvmti;
    (void)jni;
    (void)thread;
    wf_hs_thread *t = wf_hs_self();
    if (t) wf_hs_timer_stop(t);
    wf_hs_thread_detach();
}

static void JNICALL on_class_load(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jclass klass) {
    /* Enabled only so that ASGCT agrees to walk (it checks should_post_class_load). */
    (void)jvmti;
    (void)jni;
    (void)thread;
    (void)klass;
}

static void JNICALL on_class_prepare(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jclass klass) {
    (void)jni;
    (void)thread;
    wf_hs_methods_add_class(jvmti, klass);
}

static void preload_loaded_classes(jvmtiEnv *jvmti) {
    jint count = 0;
    jclass *classes = NULL;
    if ((*jvmti)->GetLoadedClasses(jvmti, &count, &classes) != JVMTI_ERROR_NONE) return;
    for (jint i = 0; i < count; i++) wf_hs_methods_add_class(jvmti, classes[i]);
    (*jvmti)->Deallocate(jvmti, (unsigned char *)classes);
}

static void JNICALL on_vm_init(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread) {
    (void)thread;
    preload_loaded_classes(jvmti);
    wf_hs_regions_refresh();
    wf_hs_out_start_reporter();
    if (wf_hs_cfg.mode == WF_HS_MODE_STRESS && wf_hs_cfg.interval_ns && wf_hs_cfg.walk &&
        wf_hs_cfg.check_every_ms)
        wf_hs_check_start(jni);
    wf_hs_out_line("{\"type\":\"vm_init\",\"methods\":%llu}",
                   (unsigned long long)wf_hs_methods_count());
}

static void JNICALL on_vm_death(jvmtiEnv *jvmti, JNIEnv *jni) {
    (void)jvmti;
    (void)jni;
    wf_hs_check_stop();
    for (int i = 0; i < wf_hs_thread_count(); i++)
        if (wf_hs_threads[i].live) wf_hs_timer_stop(&wf_hs_threads[i]);
    wf_hs_out_finish(wf_hs_check_cpu_s());
}

static int enable_events(jvmtiEnv *jvmti) {
    jvmtiCapabilities caps;
    memset(&caps, 0, sizeof caps);
    caps.can_get_line_numbers = 1;
    caps.can_get_source_file_name = 1;
    if ((*jvmti)->AddCapabilities(jvmti, &caps) != JVMTI_ERROR_NONE) return -1;
    jvmtiEventCallbacks cb;
    memset(&cb, 0, sizeof cb);
    cb.VMInit = on_vm_init;
    cb.VMDeath = on_vm_death;
    cb.ThreadStart = on_thread_start;
    cb.ThreadEnd = on_thread_end;
    cb.ClassLoad = on_class_load;
    cb.ClassPrepare = on_class_prepare;
    if ((*jvmti)->SetEventCallbacks(jvmti, &cb, sizeof cb) != JVMTI_ERROR_NONE) return -1;
    jvmtiEvent events[] = {JVMTI_EVENT_VM_INIT,      JVMTI_EVENT_VM_DEATH,
                           JVMTI_EVENT_THREAD_START, JVMTI_EVENT_THREAD_END,
                           JVMTI_EVENT_CLASS_LOAD,   JVMTI_EVENT_CLASS_PREPARE};
    for (size_t i = 0; i < sizeof events / sizeof events[0]; i++)
        if ((*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, events[i], NULL) !=
            JVMTI_ERROR_NONE)
            return -1;
    return 0;
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved) {
    (void)reserved;
    char err[512];
    if (parse_options(&wf_hs_cfg, options)) return JNI_ERR;
    if (wf_hs_asgct_resolve(err, sizeof err)) return fail("%s", err);
    if (wf_hs_methods_load_manifest(wf_hs_cfg.methods_path, err, sizeof err))
        return fail("%s", err);
    if (wf_hs_perturb_load_corpus(wf_hs_cfg.corpus_path, err, sizeof err)) return fail("%s", err);
    if (wf_hs_out_open(err, sizeof err)) return fail("%s", err);
    wf_hs_vm = vm;
    if ((*vm)->GetEnv(vm, (void **)&wf_hs_jvmti, JVMTI_VERSION_1_2) != JNI_OK)
        return fail("%s", "GetEnv(JVMTI_VERSION_1_2) failed");
    if (install_sigprof()) return fail("%s", "sigaction(SIGPROF) failed");
    if (enable_events(wf_hs_jvmti)) return fail("%s", "enabling JVMTI events failed");
    return JNI_OK;
}
