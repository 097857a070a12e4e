#!/usr/bin/env bash
# Builds dra-alloc as a native executable (GraalVM Native Image) into dra-alloc/target/native/:
# `dra-alloc` and, beside it in lib/, the JDK native libraries it loads. See docs/dev/build.md,
# "dra-alloc as a native executable", for why and for what it needs.
#
# No GraalVM distribution can be had here, so this script assembles what `native-image` would
# bring: the image builder's jars from Maven Central (org.graalvm.nativeimage:svm and friends),
# run on a JDK 25 that has JVMCI (Temurin 25 has), and the small C runtime the image calls
# (native/runtime, our own), compiled here. A distribution also ships the JDK's native libraries
# (libjava, libnio, libnet, libzip) as static archives; no registry reachable here serves those,
# so the image links the JDK's shared ones instead, copies them next to the executable, and gives
# them native/jvm's stand-in libjvm.so to load against (they import JVM_* functions from it).
#
# Environment: NATIVE_JAVA_HOME, a JDK 25 with the jdk.internal.vm.ci module (default: the first
# such JDK under /usr/lib/jvm); GRAALVM_VERSION, the builder's version (default 25.0.2; its JVMCI
# requirement must not exceed the JDK's version, 25.0.2 <= 25.0.3 here). The jar must be built
# first: ./mvnw -q -pl dra-alloc -am package -DskipTests
#
# usage: build-native-image.sh [--mode=true|auto|false] [--skip-its=true|false] [BUILDER OPTION...]
#   true (the default when run by hand): build, failing where the machine lacks what it needs or
#   any step fails;
#   auto (the Maven build's default, -Dkdra.native): build when the integration tests will run
#   (NativeCliIT) and the machine has it all; where it lacks something, or a step fails (a builder
#   version the JDK refuses, a download, the builder running out of memory), say on one line what
#   was skipped and why, and succeed, so that `verify` does not depend on it; false: build nothing.
#   Further arguments go to the image builder as they are (e.g. -H:... options).
set -eEuo pipefail

mode=true
skip_its=false
while [[ $# -gt 0 ]]; do
  case "$1" in
    --mode=*) mode="${1#--mode=}" ;;
    --skip-its=*) skip_its="${1#--skip-its=}" ;;
    *) break ;;
  esac
  shift
done

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
native="$root/dra-alloc/native"
jar="$root/dra-alloc/target/dra-alloc.jar"
out="$root/dra-alloc/target/native"
work="$root/dra-alloc/target/native-build"
graalvm_version="${GRAALVM_VERSION:-25.0.2}"

say() { echo "build-native-image: $*" >&2; }
step="checking prerequisites"
# Under auto, a failing step is a skip, not a build failure: no executable is left behind, and
# NativeCliIT is skipped, as when a prerequisite is missing.
on_failure() {
  local status=$?
  trap - ERR
  rm -rf "$out"
  if [[ "$mode" == auto ]]; then
    say "no native executable: $step failed (exit $status; the lines above say why; kdra.native=auto, -Dkdra.native=true makes this an error)"
    exit 0
  fi
  say "$step failed (exit $status)"
  exit "$status"
}
trap on_failure ERR
# an executable of an earlier package must never pass for this one
rm -rf "$out"
[[ "$mode" == false ]] && { say "kdra.native=false: no native executable"; exit 0; }
if [[ "$mode" == auto && "$skip_its" == true ]]; then
  say "no native executable: tests skipped and kdra.native=auto (-Dkdra.native=true builds it)"
  exit 0
fi
# without what the build needs: an error when asked for the executable, a skip under auto
fail() {
  if [[ "$mode" == auto ]]; then
    say "no native executable: $* (kdra.native=auto; -Dkdra.native=true makes this an error)"
    exit 0
  fi
  say "$*"
  exit 2
}

[[ "$(uname -s)/$(uname -m)" == Linux/x86_64 ]] || fail "only Linux on x86-64 is supported (native/runtime's CPU check is x86-64's)"
[[ -f "$jar" ]] || fail "$jar is not built; build it with: ./mvnw -q -pl dra-alloc -am package -DskipTests"
command -v gcc >/dev/null || fail "gcc is needed to compile the C runtime and to link the image"
[[ -f /usr/include/zlib.h ]] || fail "zlib's headers are needed to link the image (Debian: apt-get install zlib1g-dev)"

find_jdk() {
  local home
  for home in "${NATIVE_JAVA_HOME:-}" /usr/lib/jvm/*; do
    [[ -n "$home" && -x "$home/bin/java" && -f "$home/release" ]] || continue
    grep -q '^JAVA_VERSION="25' "$home/release" || continue
    "$home/bin/java" --list-modules 2>/dev/null | grep -q '^jdk.internal.vm.ci@' || continue
    echo "$home"
    return
  done
  return 1
}
jdk="$(find_jdk)" || fail "no JDK 25 with JVMCI found; set NATIVE_JAVA_HOME"
say "JDK $jdk, image builder $graalvm_version"

# The build takes minutes and its inputs rarely change: an executable built from the same jar
# contents, the same files under native/ (this script included), builder, JDK, C compiler and
# options is taken from the cache. The executable finds its libraries beside itself ($ORIGIN/lib),
# so a copy from the cache works wherever it lands.
step="computing the cache key"
cache_root="${KDRA_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kdra}/dra-alloc-native"
# no key where any input cannot be read: a partial key could match another build's executable
key=$(
  trap - ERR
  {
    "$jdk/bin/java" "$native/builder/JarDigest.java" "$jar" || exit 1
    (cd "$native" && find . -type f -print0 | sort -z | xargs -0 sha256sum) || exit 1
    echo "$graalvm_version"
    cat "$jdk/release"
    gcc --version | head -n 1
    printf '%s\n' "$@"
  } | sha256sum | cut -c1-24
) || key=""
cached="$cache_root/${key:-none}"
if [[ -n "$key" && -x "$cached/dra-alloc" ]]; then
  mkdir -p "$out"
  cp -a "$cached/." "$out/"
  # newer than the jar, as a fresh build would be: bin/dra-alloc runs it only then
  touch "$out/dra-alloc"
  say "built before from the same inputs: using $cached/dra-alloc"
  exit 0
fi
rm -rf "$work"
mkdir -p "$work/builder" "$work/objects" "$work/clibs/include" "$out/lib"

# The builder's jars. The compiler jar replaces the JDK's own jdk.graal.compiler module (it must
# be the builder's version); the rest form the builder's module path.
artifacts=(org.graalvm.sdk:nativeimage org.graalvm.sdk:word org.graalvm.sdk:collections
  org.graalvm.nativeimage:native-image-base org.graalvm.nativeimage:pointsto
  org.graalvm.nativeimage:objectfile org.graalvm.nativeimage:svm
  org.graalvm.nativeimage:svm-capnproto-runtime org.graalvm.nativeimage:svm-configure
  org.graalvm.espresso:espresso-svm org.graalvm.truffle:truffle-compiler
  org.graalvm.sdk:nativeimage-libgraal org.graalvm.compiler:compiler)
step="fetching the image builder $graalvm_version"
say "fetching the image builder's jars"
for artifact in "${artifacts[@]}"; do
  "$root/mvnw" -q -N -f "$root/pom.xml" dependency:copy -Dartifact="$artifact:$graalvm_version" \
    -DoutputDirectory="$work/builder" >"$work/fetch.log" || { grep -E '^\[ERROR\]' "$work/fetch.log" | head -n 3 >&2; false; }
done
compiler_jar="$work/builder/compiler-$graalvm_version.jar"
module_path="$(find "$work/builder" -name '*.jar' ! -name "compiler-*" | sort | paste -sd:)"

# The builder reads two things from its JDK's directory: the static JDK libraries (it checks
# they are there; the link uses the shared ones, below), and its progress reporter's JNI helper.
# So it runs on a copy of the JDK (hard links where the file system allows) with those added.
step="preparing the builder's JDK"
builder_jdk="$work/jdk"
cp -al "$jdk" "$builder_jdk" 2>/dev/null || cp -a "$jdk" "$builder_jdk"
static="$builder_jdk/lib/static/linux-amd64/glibc"
mkdir -p "$static" "$builder_jdk/lib/svm/builder/lib"
for library in java nio net zip fdlibm; do
  rm -f "$static/lib$library.a"
  ar rc "$static/lib$library.a"
done
includes=(-I"$native/include" -I"$jdk/include" -I"$jdk/include/linux")
gcc -O2 -shared -fPIC -Wall -Werror "${includes[@]}" "$native/builder/reporter_helper.c" \
  -o "$builder_jdk/lib/svm/builder/lib/libreporterchelper.so"

step="compiling the C runtime"
say "compiling the C runtime"
# The headers the builder reads struct layouts and constants from, and the runtime library
# (liblibchelper.a: the name the image links by).
cp "$native"/include/*.h "$jdk/include/jni.h" "$jdk/include/linux/jni_md.h" "$work/clibs/include/"
for source in "$native"/runtime/*.c; do
  gcc -O2 -fPIC -Wall -Werror "${includes[@]}" -c "$source" -o "$work/objects/$(basename "$source" .c).o"
done
ar rcs "$work/clibs/liblibchelper.a" "$work"/objects/*.o

# The JDK's shared libraries, and the libjvm.so they load against: every JVM_ and jio_ function
# they import must be there when they load (they are linked with -z now); those jvm_shim.c does
# not implement become stubs that stop the process naming the function.
step="making the JDK libraries' libjvm stand-in"
jdk_libraries=(java nio net zip)
for library in "${jdk_libraries[@]}"; do
  cp "$jdk/lib/lib$library.so" "$out/lib/"
done
imported=$(for library in "${jdk_libraries[@]}"; do nm -D --undefined-only "$jdk/lib/lib$library.so"; done |
  awk '{print $2}' | sed 's/@.*//' | grep -E '^(JVM_|jio_)' | sort -u)
gcc -O2 -fPIC -Wall -Werror "${includes[@]}" -c "$native/jvm/jvm_shim.c" -o "$work/objects-jvm_shim.o"
implemented=$(nm --defined-only "$work/objects-jvm_shim.o" | awk '{print $3}' | sort -u)
{
  echo '#include <stdio.h>'
  echo '#include <stdlib.h>'
  echo 'static void missing(const char *name) {'
  echo '    fprintf(stderr, "dra-alloc: the JDK library called %s, which the native build does not provide\n", name);'
  echo '    abort();'
  echo '}'
  for symbol in $imported; do
    grep -qx "$symbol" <<<"$implemented" || echo "void $symbol(void) { missing(\"$symbol\"); }"
  done
} >"$work/jvm_stubs.c"
{
  echo "SUNWprivate_1.1 { global:"
  for symbol in $imported initialize; do echo "  $symbol;"; done
  echo "local: *; };"
} >"$work/jvm.map"
gcc -O2 -fPIC -Wall -c "$work/jvm_stubs.c" -o "$work/objects-jvm_stubs.o"
gcc -shared -Wl,-soname,libjvm.so -Wl,--version-script,"$work/jvm.map" -o "$out/lib/libjvm.so" \
  "$work/objects-jvm_shim.o" "$work/objects-jvm_stubs.o" -ldl -lpthread

# What the native-image driver would pass the builder: the JDK internals it uses, opened to its
# modules (the packages its jars name), the class loader and lambda settings it needs.
step="reading the JDK-internal packages the builder uses"
builder=org.graalvm.nativeimage.builder
builder_modules="$builder,org.graalvm.nativeimage.base,org.graalvm.nativeimage.pointsto,org.graalvm.nativeimage.objectfile,jdk.graal.compiler"
internal=$("$builder_jdk/bin/java" --add-modules ALL-SYSTEM "$native/builder/InternalPackages.java" \
  "$work/builder" 2>"$work/internal-packages.err") || { cat "$work/internal-packages.err" >&2; false; }
exports=()
for package in $internal; do
  exports+=("--add-exports=$package=$builder_modules")
done
for package in aarch64 amd64 riscv64 code code.site code.stack common hotspot hotspot.amd64 \
  hotspot.aarch64 hotspot.riscv64 meta runtime services; do
  exports+=("--add-exports=jdk.internal.vm.ci/jdk.vm.ci.$package=$builder_modules,org.graalvm.nativeimage.configure,org.graalvm.truffle.compiler")
done
modules=java.base,jdk.internal.vm.ci,jdk.graal.compiler,org.graalvm.nativeimage,org.graalvm.word,org.graalvm.collections,jdk.unsupported,java.management,jdk.management,jdk.jfr,java.logging,jdk.zipfs

# Jackson reads fabric8's model by reflection: open the model classes to it.
step="generating reflection metadata"
"$builder_jdk/bin/java" "$native/builder/ReflectionConfig.java" "$jar" "$work/config"

linker_options=()
for library in "${jdk_libraries[@]}" jvm; do
  linker_options+=("-H:NativeLinkerOption=$out/lib/lib$library.so")
done
linker_options+=('-H:NativeLinkerOption=-Wl,-rpath,$ORIGIN/lib')

# The collector: the serial one's default (adaptive) policy made the first collection of a run a
# full one, about 0.1 s with this image's heap, as much as reading a 1,000-node dump; the
# BySpaceAndTime policy collects the young generation alone, and a 128 MiB young generation lets
# a JSON dump of that size be read with no collection and a YAML one with one, not touching more
# memory than it needs (docs/dev/benchmarks.md). -Xmn, -Xms and -Xmx at run time override.
step="building the image"
say "building the image (a few minutes)"
USE_NATIVE_IMAGE_JAVA_PLATFORM_MODULE_SYSTEM=true "$builder_jdk/bin/java" \
  -XX:+UnlockExperimentalVMOptions -XX:+EnableJVMCI -XX:-UseJVMCICompiler \
  -Dtruffle.TrustAllTruffleRuntimeProviders=true -Dgraalvm.ForcePolyglotInvalid=true \
  -Dgraalvm.locatorDisabled=true -Dsubstratevm.HostLibC=glibc \
  "${exports[@]}" \
  -Xss10m -XX:+UseParallelGC -XX:MaxRAMPercentage=60 -XX:GCTimeRatio=9 -XX:+ExitOnOutOfMemoryError \
  -Djava.awt.headless=true -Dorg.graalvm.version="$graalvm_version" -Dcom.oracle.graalvm.isaot=true \
  -Dorg.graalvm.nativeimage.imagecode=buildtime \
  -Djava.system.class.loader=com.oracle.svm.hosted.NativeImageSystemClassLoader -Xshare:off \
  -Djdk.internal.lambda.disableEagerInitialization=true -Djdk.internal.lambda.eagerlyInitialize=false \
  -Djava.lang.invoke.InnerClassLambdaMetafactory.initializeLambdas=false \
  -Djava.lang.invoke.MethodHandle.DONT_INLINE_THRESHOLD=-1 -Djava.lang.invoke.MethodHandle.PROFILE_GWT=false \
  --enable-native-access=org.graalvm.nativeimage.objectfile,$builder,org.graalvm.nativeimage.pointsto,org.graalvm.nativeimage.base \
  --module-path "$module_path" --upgrade-module-path "$compiler_jar" \
  -Dorg.graalvm.nativeimage.module.addmods="$modules" --add-modules="$modules" \
  --module "$builder/com.oracle.svm.hosted.NativeImageGeneratorRunner" \
  -imagecp "$jar" \
  -H:Name=dra-alloc -H:Class=io.kdra.alloc.cli.Main -H:Path="$out" \
  -H:CLibraryPath="$work/clibs" -H:ImageBuildID="$(cat /proc/sys/kernel/random/uuid)" \
  -H:+UnlockExperimentalVMOptions -H:-UseContainerSupport \
  -H:InitialCollectionPolicy=BySpaceAndTime -R:MaxNewSize=134217728 \
  -H:ConfigurationFileDirectories="$work/config" \
  "${linker_options[@]}" \
  "$@"
say "built $out/dra-alloc"

# Into the cache whole or not at all (a rename), keeping the three newest; best effort: a cache
# that cannot be written costs the next run a build, nothing else.
cache_executable() {
  [[ -n "$key" ]] || return 0
  mkdir -p "$cache_root" || return 1
  local staging
  staging="$(mktemp -d "$cache_root/.staging.XXXXXX")" || return 1
  cp -a "$out/." "$staging/" && mv -T "$staging" "$cached" 2>/dev/null || rm -rf "$staging"
  find "$cache_root" -mindepth 1 -maxdepth 1 -type d ! -name '.*' -printf '%T@ %p\n' | sort -rn |
    tail -n +4 | cut -d' ' -f2- | xargs -r rm -rf
}
cache_executable || say "could not cache the executable under $cache_root"
