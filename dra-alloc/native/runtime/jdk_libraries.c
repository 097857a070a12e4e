/*
 * A native image calls JNI_OnLoad_<name> of each JDK library it links statically. This build
 * links the JDK's own shared libraries instead (see build-native-image.sh), whose entry point is
 * plain JNI_OnLoad: run it where the library has one (libjava keeps the JavaVM from it), then
 * answer as a statically linked library must (JNI 1.8 or later; a shared library may say 1.2).
 */
#include <dlfcn.h>
#include <jni.h>

typedef jint (*on_load_function)(JavaVM *, void *);

static jint on_load(const char *soname, JavaVM *vm, void *reserved) {
    void *library = dlopen(soname, RTLD_NOW | RTLD_NOLOAD);
    if (library == NULL) {
        return JNI_ERR;
    }
    on_load_function function = (on_load_function) dlsym(library, "JNI_OnLoad");
    jint version = function != NULL ? function(vm, reserved) : JNI_VERSION_1_8;
    dlclose(library);
    return version < 0 ? version : (version > JNI_VERSION_1_8 ? version : JNI_VERSION_1_8);
}

JNIEXPORT jint JNICALL JNI_OnLoad_java(JavaVM *vm, void *reserved) { return on_load("libjava.so", vm, reserved); }
JNIEXPORT jint JNICALL JNI_OnLoad_nio(JavaVM *vm, void *reserved) { return on_load("libnio.so", vm, reserved); }
JNIEXPORT jint JNICALL JNI_OnLoad_net(JavaVM *vm, void *reserved) { return on_load("libnet.so", vm, reserved); }
JNIEXPORT jint JNICALL JNI_OnLoad_zip(JavaVM *vm, void *reserved) { return on_load("libzip.so", vm, reserved); }
