/*
 * The default locale of a native image, read the way the JDK reads it on Linux: from
 * setlocale() of LC_MESSAGES (display) and LC_CTYPE (format), whose names have the form
 * language[_COUNTRY][.encoding][@variant]. "C" and "POSIX" mean en_US, as on the JVM. The process's own C locale is left as it was.
 */
#include <locale.h>
#include <stdlib.h>
#include <string.h>
#include "svm_locale.h"

static svm_locale_props_t props;

static char *part(const char *start, size_t len) {
    char *copy = malloc(len + 1);
    if (copy != NULL) {
        memcpy(copy, start, len);
        copy[len] = '\0';
    }
    return copy;
}

/* 0 on success, -1 when out of memory. */
static int parse(const char *name, char **language, char **script, char **country, char **variant) {
    if (name == NULL || strcmp(name, "C") == 0 || strcmp(name, "POSIX") == 0 || strncmp(name, "C.", 2) == 0) {
        name = "en_US";
    }
    size_t lang_len = strcspn(name, "_.@");
    const char *rest = name + lang_len;
    const char *country_start = NULL;
    size_t country_len = 0;
    if (*rest == '_') {
        country_start = rest + 1;
        country_len = strcspn(country_start, ".@");
    }
    const char *at = strchr(name, '@');
    *language = part(name, lang_len);
    *script = part("", 0);
    *country = country_start != NULL ? part(country_start, country_len) : part("", 0);
    *variant = at != NULL ? part(at + 1, strlen(at + 1)) : part("", 0);
    return (*language && *script && *country && *variant) ? 0 : -1;
}

int svm_initialize_locale(void) {
    const char *current = setlocale(LC_ALL, NULL);
    char *saved = current != NULL ? strdup(current) : NULL;
    setlocale(LC_ALL, "");
    int failed = parse(setlocale(LC_MESSAGES, NULL), &props.display_language, &props.display_script,
                       &props.display_country, &props.display_variant) != 0
                 || parse(setlocale(LC_CTYPE, NULL), &props.format_language, &props.format_script,
                          &props.format_country, &props.format_variant) != 0;
    setlocale(LC_ALL, saved != NULL ? saved : "C");
    free(saved);
    return failed ? SVM_LOCALE_INITIALIZATION_OUT_OF_MEMORY : SVM_LOCALE_INITIALIZATION_SUCCEEDED;
}

svm_locale_props_t *svm_get_locale(void) {
    return &props;
}
