/* JNI natives of the generated workloads' class wf.Agent. HotSpot looks native methods up in
 * agent libraries too, so exporting them here binds them with no System.loadLibrary.
 *
 *   static native boolean register(ByteBuffer shadow)   shadow stack of the calling thread
 *   static native void hold()                           stay in native until checked
 *                                                       (wf_hs_check.c)
 *   static native int viaNative(IntUnaryOperator f, int x)  Java -> native -> Java: f(x)
 */
#include "wf_hs.h"

JNIEXPORT jboolean JNICALL Java_wf_Agent_register(JNIEnv *env, jclass cls, jobject buffer) {
    (void)cls;
    wf_hs_thread *t = wf_hs_self();
    if (!t) return JNI_FALSE;
    void *addr = (*env)->GetDirectBufferAddress(env, buffer);
    jlong cap = (*env)->GetDirectBufferCapacity(env, buffer);
    if (!addr || cap < (jlong)(WF_HS_SHADOW_CAP * sizeof(int32_t))) return JNI_FALSE;
    t->shadow = (volatile int32_t *)addr;
    return JNI_TRUE;
}

JNIEXPORT void JNICALL Java_wf_Agent_hold(JNIEnv *env, jclass cls) {
    (void)env;
    (void)cls;
    wf_hs_check_hold(wf_hs_self());
}

JNIEXPORT jint JNICALL Java_wf_Agent_viaNative(JNIEnv *env, jclass cls, jobject f, jint x) {
    (void)cls;
    static jmethodID apply;
    if (!apply) {
        jclass op = (*env)->FindClass(env, "java/util/function/IntUnaryOperator");
        if (!op) return x;
        apply = (*env)->GetMethodID(env, op, "applyAsInt", "(I)I");
        if (!apply) return x;
    }
    return (*env)->CallIntMethod(env, f, apply, x);
}
