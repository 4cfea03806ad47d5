/* The jmethodID table: every method of every prepared class, created early (GetClassMethods
 * creates the jmethodIDs ASGCT needs to name a frame) and looked up from signal handlers.
 *
 * Open addressing, linear probing, fixed capacity, insert-only. Writers (ClassPrepare, under a
 * mutex) store the info, then publish the key with release; a handler reads the key with
 * acquire and then the info, so it never sees a half-written entry.
 *
 *   slot:  +-----------+-----------+----------+
 *          | jmethodID | shadow_id | code_len |     empty slot: jmethodID == NULL
 *          +-----------+-----------+----------+
 *
 * The shadow manifest names the methods the generated workload tracks on its shadow stack:
 * one line per method, "Lpkg/Class; name (sig)ret id"; id 0 marks the shadow stack's own
 * push/pop, so a sample taken inside them is recognised as one taken mid-update.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wf_hs.h"

#define TABLE_BITS 18 /* several slots per method of a JDK's core classes */
#define TABLE_SIZE (1u << TABLE_BITS)
#define MAX_PROBES 64     /* lookups give up after this many collisions */
#define MANIFEST_MAX 4096 /* tracked methods in one workload */

typedef struct {
    jmethodID key;
    wf_hs_method_info info;
} slot;

typedef struct {
    char klass[128], name[96], sig[128];
    int32_t id;
} manifest_entry;

static slot table[TABLE_SIZE];
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t method_count, tracked_count;
static manifest_entry *manifest;
static int manifest_len;

static uint32_t hash_id(jmethodID id) {
    uint64_t x = (uint64_t)(uintptr_t)id;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return (uint32_t)x & (TABLE_SIZE - 1);
}

int wf_hs_methods_load_manifest(const char *path, char *err, size_t errlen) {
    if (!path || !path[0]) return 0;
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "cannot open methods manifest %s", path);
        return -1;
    }
    manifest = calloc(MANIFEST_MAX, sizeof *manifest);
    char line[512];
    int lineno = 0;
    while (manifest && fgets(line, sizeof line, f)) {
        lineno++;
        if (line[0] == '#' || line[0] == '\n') continue;
        manifest_entry *e = &manifest[manifest_len];
        if (manifest_len >= MANIFEST_MAX ||
            sscanf(line, "%127s %95s %127s %d", e->klass, e->name, e->sig, &e->id) != 4) {
            snprintf(err, errlen, "methods manifest %s line %d: bad entry", path, lineno);
            fclose(f);
            return -1;
        }
        manifest_len++;
    }
    fclose(f);
    return 0;
}

static int32_t manifest_id(const char *klass, const char *name, const char *sig) {
    for (int i = 0; i < manifest_len; i++)
        if (!strcmp(manifest[i].klass, klass) && !strcmp(manifest[i].name, name) &&
            !strcmp(manifest[i].sig, sig))
            return manifest[i].id;
    return -1;
}

static int manifest_has_class(const char *klass) {
    for (int i = 0; i < manifest_len; i++)
        if (!strcmp(manifest[i].klass, klass)) return 1;
    return 0;
}

static void insert(jmethodID id, wf_hs_method_info info) {
    uint32_t h = hash_id(id);
    pthread_mutex_lock(&table_lock);
    for (uint32_t probe = 0; probe < MAX_PROBES; probe++) {
        slot *s = &table[(h + probe) & (TABLE_SIZE - 1)];
        jmethodID k = __atomic_load_n(&s->key, __ATOMIC_RELAXED);
        if (k == id) break;
        if (k == NULL) {
            s->info = info;
            __atomic_store_n(&s->key, id, __ATOMIC_RELEASE);
            method_count++;
            if (info.shadow_id > 0) tracked_count++;
            break;
        }
    }
    pthread_mutex_unlock(&table_lock);
}

const wf_hs_method_info *wf_hs_methods_find(jmethodID id) {
    if (!id) return NULL;
    uint32_t h = hash_id(id);
    for (uint32_t probe = 0; probe < MAX_PROBES; probe++) {
        slot *s = &table[(h + probe) & (TABLE_SIZE - 1)];
        jmethodID k = __atomic_load_n(&s->key, __ATOMIC_ACQUIRE);
        if (k == id) return &s->info;
        if (k == NULL) return NULL;
    }
    return NULL;
}

static int32_t code_length(jvmtiEnv *jvmti, jmethodID m) {
    jlocation start = 0, end = 0;
    if ((*jvmti)->GetMethodLocation(jvmti, m, &start, &end) != JVMTI_ERROR_NONE) return 0;
    return (int32_t)(end + 1);
}

static int32_t shadow_id_of(jvmtiEnv *jvmti, jmethodID m, const char *klass) {
    char *name = NULL, *sig = NULL;
    if ((*jvmti)->GetMethodName(jvmti, m, &name, &sig, NULL) != JVMTI_ERROR_NONE) return -1;
    int32_t id = manifest_id(klass, name, sig);
    (*jvmti)->Deallocate(jvmti, (unsigned char *)name);
    (*jvmti)->Deallocate(jvmti, (unsigned char *)sig);
    return id;
}

void wf_hs_methods_add_class(jvmtiEnv *jvmti, jclass klass) {
    jint count = 0;
    jmethodID *methods = NULL;
    if ((*jvmti)->GetClassMethods(jvmti, klass, &count, &methods) != JVMTI_ERROR_NONE) return;
    char *klass_sig = NULL;
    int tracked_class = 0;
    if (manifest_len &&
        (*jvmti)->GetClassSignature(jvmti, klass, &klass_sig, NULL) == JVMTI_ERROR_NONE) {
        tracked_class = manifest_has_class(klass_sig);
    }
    for (jint i = 0; i < count; i++) {
        wf_hs_method_info info = {-1, code_length(jvmti, methods[i])};
        if (tracked_class) info.shadow_id = shadow_id_of(jvmti, methods[i], klass_sig);
        insert(methods[i], info);
    }
    if (klass_sig) (*jvmti)->Deallocate(jvmti, (unsigned char *)klass_sig);
    (*jvmti)->Deallocate(jvmti, (unsigned char *)methods);
}

uint64_t wf_hs_methods_count(void) { return method_count; }
uint64_t wf_hs_methods_tracked(void) { return tracked_count; }
