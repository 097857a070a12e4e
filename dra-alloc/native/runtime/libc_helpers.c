/*
 * Small C entry points Native Image's runtime declares instead of calling libc directly:
 * variadic or macro-defined functions (which Java code cannot call), the thread id, the process
 * environment, and the platform's time zone name. Only those the image links; a new one shows
 * as an undefined reference when the build links the image.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

char **getEnviron(void) {
    return environ;
}

int fprintfSD(FILE *stream, const char *format, const char *s, int d) {
    return fprintf(stream, format, s, d);
}

int openSII(const char *path, int flags, int mode) {
    return open(path, flags, mode);
}

void *mremapP(void *old_address, size_t old_size, size_t new_size, int flags, void *new_address) {
    return mremap(old_address, old_size, new_size, flags, new_address);
}

int getThreadId(void) {
    return (int) syscall(SYS_gettid);
}

/*
 * The platform's time zone id, e.g. "Europe/Berlin", as a malloc'ed string the caller frees, or
 * NULL (the runtime then uses GMT). The first of: $TZ, /etc/timezone, the zoneinfo path that
 * /etc/localtime links to. The mappings argument is for Windows' zone names; unused here.
 */
char *SVM_FindJavaTZmd(const char *tzmappings, int length) {
    (void) tzmappings;
    (void) length;
    const char *tz = getenv("TZ");
    if (tz != NULL && *tz != '\0') {
        if (*tz == ':') {
            tz++;
        }
        const char *zoneinfo = strstr(tz, "zoneinfo/");
        return strdup(zoneinfo != NULL ? zoneinfo + strlen("zoneinfo/") : tz);
    }
    FILE *file = fopen("/etc/timezone", "r");
    if (file != NULL) {
        char line[256];
        char *read = fgets(line, sizeof(line), file);
        fclose(file);
        if (read != NULL) {
            line[strcspn(line, " \t\r\n")] = '\0';
            if (line[0] != '\0') {
                return strdup(line);
            }
        }
    }
    char target[PATH_MAX];
    ssize_t len = readlink("/etc/localtime", target, sizeof(target) - 1);
    if (len > 0) {
        target[len] = '\0';
        const char *zoneinfo = strstr(target, "zoneinfo/");
        if (zoneinfo != NULL) {
            return strdup(zoneinfo + strlen("zoneinfo/"));
        }
    }
    return NULL;
}
